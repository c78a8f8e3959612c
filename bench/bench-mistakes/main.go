// Command bench-mistakes sends the mistakes models make in edit_file calls
// to `hashline mcp` and to the published peer, the same calls over MCP
// stdio to each, and counts per class how often each server wrote the
// intended file, refused, or wrote something else; it also compares the
// sizes of their replies. The corpus is generated, from a fixed seed, from
// real files that are not this repository's: Go's own source tree, and
// TypeScript sources and JSON files of installed npm packages. The classes
// whose text breaks the syntax also go to a second `hashline mcp` with
// strict_syntax on every edit_file call. `make bench-mistakes` runs
// it and writes its section of BENCHMARKS.md.
//
//	cd bench && go run ./bench-mistakes -out /tmp/mistakes.md -peer ../tools/peer -ts ../tools/peer/node_modules,../client/ts/node_modules
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashline/hashline/bench/machine"
	"github.com/hashline/hashline/internal/binarytest"
)

type config struct {
	out, peer, goSrc, details string
	tsRoots                   []string
	protocol                  string
	perClass                  int
	seed                      uint64
}

func main() {
	var c config
	flag.StringVar(&c.out, "out", "../BENCHMARKS.md", "markdown file whose mistakes section to rewrite (the rest of it is kept)")
	flag.StringVar(&c.peer, "peer", "../tools/peer", "directory whose node_modules holds bun and mcp-hashline-edit-server (npm ci there)")
	ts := flag.String("ts", "../tools/peer/node_modules,../client/ts/node_modules", "comma-separated directories whose *.ts and *.json files the corpus takes changes from")
	flag.StringVar(&c.goSrc, "go-src", "", "Go source tree the corpus takes changes from (default: $(go env GOROOT)/src)")
	flag.IntVar(&c.perClass, "cases", 40, "cases per class")
	flag.StringVar(&c.protocol, "protocol", "2025-11-25", "MCP protocol version the client asks both servers for (the peer's SDK speaks 2025-11-25 at most; a later one makes the Go SDK add _meta to every reply)")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the corpus")
	flag.StringVar(&c.details, "details", "", "also write every case where the servers differ, or ours is not right, with the replies, to this file")
	flag.Parse()
	log.SetFlags(log.Ltime)
	for r := range strings.SplitSeq(*ts, ",") {
		if r = strings.TrimSpace(r); r != "" {
			c.tsRoots = append(c.tsRoots, r)
		}
	}
	if c.perClass < 1 {
		log.Fatal("-cases must be at least 1")
	}
	if err := run(c); err != nil {
		log.Fatal(err)
	}
}

func run(c config) error {
	began := time.Now()
	if c.goSrc == "" {
		root, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			return fmt.Errorf("go env GOROOT: %w", err)
		}
		c.goSrc = filepath.Join(strings.TrimSpace(string(root)), "src")
	}
	for _, r := range c.tsRoots {
		if _, err := os.Stat(r); err != nil {
			return fmt.Errorf("-ts: %w (npm ci there first)", err)
		}
	}
	paths, err := sourcePaths(c.goSrc, c.tsRoots)
	if err != nil {
		return err
	}
	cases, err := generate(paths, c.perClass, c.seed)
	if err != nil {
		return err
	}
	log.Printf("%d cases in %d classes from %d Go, %d TypeScript and %d JSON files", len(cases), len(classes), len(paths["go"]), len(paths["ts"]), len(paths["json"]))

	tmp, err := os.MkdirTemp("", "hashline-bench-mistakes-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// hashline mcp keeps its state under $XDG_STATE_HOME: this run's.
	if err := os.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state")); err != nil {
		return err
	}
	defer binarytest.Cleanup()
	bin, err := binarytest.Build(binarytest.Hashline)
	if err != nil {
		return err
	}
	peerDir, err := filepath.Abs(c.peer)
	if err != nil {
		return err
	}
	bun := filepath.Join(peerDir, "node_modules", ".bin", "bun")
	entry := filepath.Join(peerDir, "node_modules", "mcp-hashline-edit-server", "src", "index.ts")
	if _, err := os.Stat(entry); err != nil {
		return fmt.Errorf("the peer is not installed (%v); run npm ci in %s", err, c.peer)
	}
	var servers []*server
	defer func() {
		for _, s := range servers {
			s.close()
		}
	}()
	// The third is ours again, every edit_file call with strict_syntax:
	// it takes the broken classes, and the control class, whose correct
	// edits it must not refuse.
	for _, s := range []struct {
		name string
		argv []string
	}{{ours, []string{bin, "mcp", "--root", "."}}, {peerName, []string{bun, entry}}, {oursStrict, []string{bin, "mcp", "--root", "."}}} {
		root := filepath.Join(tmp, strings.NewReplacer(" ", "-", ",", "").Replace(s.name))
		if err := os.MkdirAll(root, 0o755); err != nil {
			return err
		}
		srv, err := startServer(s.name, root, c.protocol, s.argv...)
		if err != nil {
			return err
		}
		if s.name == oursStrict {
			srv.editArgs = map[string]any{"strict_syntax": true}
		}
		servers = append(servers, srv)
	}

	rep := newReport()
	for _, s := range servers[:2] {
		rep.env = append(rep.env, fmt.Sprintf("%s: MCP protocol %s", s.name, s.protocol()))
		n, err := s.listTools()
		if err != nil {
			return err
		}
		rep.toolsList[s.name] = n
	}
	for i, mc := range cases {
		rs := map[string]*result{}
		on := servers[:2]
		if mc.class.broken || mc.class.key == "control" {
			on = servers
		}
		// Alternate which server goes first; nothing here is timed, but
		// neither server should always see a file the other just wrote.
		for k := range on {
			s := on[(i+k)%len(on)]
			r, err := runCase(s, mc)
			if err != nil {
				return fmt.Errorf("case %s: %w", mc.name, err)
			}
			rs[s.name] = r
		}
		rep.add(mc, rs)
	}
	if bunV, err := exec.Command(bun, "--version").Output(); err == nil {
		rep.env = append(rep.env, "peer: mcp-hashline-edit-server 0.2.0 on bun "+strings.TrimSpace(string(bunV))+" (tools/peer/package-lock.json)")
	}
	rep.env = append([]string{
		machine.Summary(),
		fmt.Sprintf("commit %s, %s", machine.Commit(c.out), time.Now().UTC().Format("2006-01-02 15:04 UTC")),
		fmt.Sprintf("corpus: seed %d, %d cases per class, changes taken from %s (%d files) and from the *.ts and *.json files of %s (%d and %d files)",
			c.seed, c.perClass, goSrcLabel(c.goSrc), len(paths["go"]), tsLabel(c.tsRoots), len(paths["ts"]), len(paths["json"])),
		fmt.Sprintf("run time %s", time.Since(began).Round(time.Second)),
	}, rep.env...)
	log.Printf("run time %s", time.Since(began).Round(time.Second))
	fmt.Print(rep.text())
	if c.details != "" {
		if err := os.WriteFile(c.details, []byte(rep.details.String()), 0o644); err != nil {
			return err
		}
	}
	if err := writeSection(c.out, rep.markdown()); err != nil {
		return err
	}
	log.Printf("wrote the mistakes section of %s", c.out)
	return nil
}

const (
	ours     = "hashline mcp"
	peerName = "peer"
	// oursStrict is hashline mcp with strict_syntax on every edit_file.
	oursStrict = "hashline mcp, strict_syntax"
)

// result is one server's answer to one case.
type result struct {
	outcome     outcome
	syntax      syntaxOutcome // for a broken class
	read        reply
	setupFailed bool
	replies     []reply // of the mistaken calls
}

var tagRE = regexp.MustCompile(`(?m)^(\d+):([0-9a-f]+)\|`)

// runCase writes a fresh copy of the case's file in s's root, reads it,
// makes the setup calls and then the mistaken ones, and judges the file.
func runCase(s *server, mc *mcase) (*result, error) {
	p := filepath.Join(s.root, mc.name)
	if err := os.WriteFile(p, mc.orig, 0o644); err != nil {
		return nil, err
	}
	r := &result{}
	var err error
	if r.read, err = s.call("read_file", map[string]any{"path": mc.name, "limit": 2000}); err != nil {
		return nil, err
	}
	if r.read.refused {
		return nil, fmt.Errorf("%s refused read_file: %.300s", s.name, r.read.text)
	}
	shown := map[int]string{}
	for _, m := range tagRE.FindAllStringSubmatch(r.read.text, -1) {
		n, _ := strconv.Atoi(m[1])
		shown[n] = m[1] + ":" + m[2]
	}
	for n, want := range mc.checks {
		if shown[n] != want {
			return nil, fmt.Errorf("%s shows line %d as %q, the corpus tags it %q", s.name, n, shown[n], want)
		}
	}
	for _, e := range mc.setup {
		sr, err := s.call("edit_file", s.edit(mc.name, e))
		if err != nil {
			return nil, err
		}
		if sr.refused {
			r.setupFailed = true
			log.Printf("%s %s: the correct setup edit was refused: %.300s", s.name, mc.name, sr.text)
		}
	}
	pre, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var refusals []bool
	diagnosed := false
	for _, e := range mc.calls {
		er, err := s.call("edit_file", s.edit(mc.name, e))
		if err != nil {
			return nil, err
		}
		r.replies = append(r.replies, er)
		refusals = append(refusals, er.refused)
		diagnosed = diagnosed || er.diagnosed
	}
	final, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	r.outcome = classify(mc.class.expect, pre, mc.want, final, refusals)
	if mc.class.broken {
		r.syntax = classifySyntax(pre, mc.sent, final, refusals, diagnosed)
	}
	return r, nil
}

func goSrcLabel(dir string) string {
	if v, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
		return strings.TrimSpace(string(v)) + "'s src"
	}
	return dir
}

// tsLabel names the TypeScript roots by their last two path elements
// (tools/peer/node_modules), not by where this checkout lies.
func tsLabel(roots []string) string {
	var out []string
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			abs = r
		}
		parts := strings.Split(filepath.ToSlash(abs), "/")
		out = append(out, strings.Join(parts[max(0, len(parts)-3):], "/"))
	}
	return strings.Join(out, " and ")
}
