package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsPath is the agent prompt kit whose examples TestAgentsDoc runs.
const docsPath = "../../docs/agents.md"

// An example in docs/agents.md is a ```console block right after a marker
// comment that gives its workspace:
//
//	<!-- example {"files": {"main.go": "package main\n"}} -->
//	```console
//	$ hashline read main.go
//	File: main.go (1 line, version v2-…)
//	1:c9|package main
//	```
//
// Each example gets a fresh workspace and a real hashlined, unless its
// marker says {"continue": true}: then it goes on in the previous one.
// Commands are "hashline ..." or "grpcurl ..." (localhost:7420 is replaced
// by the test server's address); a heredoc (<<'EOF' ... EOF) is stdin. The
// output is stdout then stderr, and "(exit N)" when N is not 0. With
// -update the outputs in the file are rewritten from the real runs.
//
// Change ids (c3-9f3a11be) carry the number of the server's history,
// random per server, and hashline log prints times: the doc writes every
// id with the number docLog and every time as docTime, and the test reads
// a command's ids and prints its output so (the server's number is learned
// from the first id an output shows).
type docExample struct {
	Files    map[string]string `json:"files"`
	Continue bool              `json:"continue"`
	start    int               // first line of the block body (index in lines)
	end      int               // the closing fence
	cmds     []docCommand
}

type docCommand struct {
	line  string // as written, without "$ "
	stdin string
	want  string
}

var markerRE = regexp.MustCompile(`^<!-- example (\{.*\}) -->$`)

// docLog and docTime stand for the history's number in change ids and for
// times, in the doc's examples.
const (
	docLog  = "9f3a11be"
	docTime = "2026-03-01T09:02:00Z"
)

// asDocumented writes out, a command's output, with the doc's change ids
// and times; log is the server's history number ("" until one is seen).
func asDocumented(out string, log *string) string {
	if *log == "" {
		if id := changeIDRE.FindString(out); id != "" {
			*log = id[strings.IndexByte(id, '-')+1:]
		}
	}
	if *log != "" {
		out = changeIDRE.ReplaceAllStringFunc(out, func(id string) string { return strings.Replace(id, "-"+*log, "-"+docLog, 1) })
	}
	return stampRE.ReplaceAllStringFunc(out, func(t string) string {
		if strings.Contains(t, "T") {
			return docTime
		}
		return docTime[:10]
	})
}

func parseDoc(t *testing.T, lines []string) []*docExample {
	t.Helper()
	var out []*docExample
	for i := 0; i < len(lines); i++ {
		m := markerRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		ex := &docExample{}
		if err := json.Unmarshal([]byte(m[1]), ex); err != nil {
			t.Fatalf("%s:%d: bad example marker: %v", docsPath, i+1, err)
		}
		if i+1 >= len(lines) || lines[i+1] != "```console" {
			t.Fatalf("%s:%d: an example marker must be followed by a ```console block", docsPath, i+1)
		}
		ex.start = i + 2
		j := ex.start
		for ; j < len(lines) && lines[j] != "```"; j++ {
		}
		if j == len(lines) {
			t.Fatalf("%s:%d: unclosed console block", docsPath, i+2)
		}
		ex.end = j
		var cur *docCommand
		for k := ex.start; k < ex.end; k++ {
			l := lines[k]
			if cmd, ok := strings.CutPrefix(l, "$ "); ok {
				ex.cmds = append(ex.cmds, docCommand{line: cmd})
				cur = &ex.cmds[len(ex.cmds)-1]
				if head, ok := strings.CutSuffix(cmd, " <<'EOF'"); ok {
					cur.line = head
					for k++; k < ex.end && lines[k] != "EOF"; k++ {
						cur.stdin += lines[k] + "\n"
					}
				}
				continue
			}
			if cur == nil {
				t.Fatalf("%s:%d: output before the first \"$ \" command", docsPath, k+1)
			}
			cur.want += l + "\n"
		}
		out = append(out, ex)
		i = j
	}
	return out
}

// shellWords splits a command line like a POSIX shell does for the quoting
// the docs use: '...', "..." (with \" and \\), $'...' (with \n, \t, \\,
// \'), and backslash outside quotes.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unclosed '")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '$' && i+1 < len(s) && s[i+1] == '\'':
			i += 2
			for ; i < len(s) && s[i] != '\''; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					switch s[i] {
					case 'n':
						cur.WriteByte('\n')
					case 't':
						cur.WriteByte('\t')
					default:
						cur.WriteByte(s[i])
					}
					continue
				}
				cur.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, errors.New("unclosed $'")
			}
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, errors.New(`unclosed "`)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// grpcurlBinary builds the pinned grpcurl once.
var grpcurlBin string

func grpcurl(t *testing.T) string {
	t.Helper()
	if grpcurlBin == "" {
		bin := filepath.Join(filepath.Dir(hashlineBin), "grpcurl")
		cmd := exec.Command("go", "build", "-modfile=tools/grpcurl/go.mod", "-o", bin, "github.com/fullstorydev/grpcurl/cmd/grpcurl")
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build grpcurl: %v\n%s", err, out)
		}
		grpcurlBin = bin
	}
	return grpcurlBin
}

// normalizeGRPCurl makes grpcurl's output stable: protojson varies its
// whitespace on purpose, so JSON (the responses, and the error details
// after "Details:") is re-indented with encoding/json.
func normalizeGRPCurl(stdout, stderr string) string {
	var b strings.Builder
	writeJSONValues(&b, stdout, "")
	head, details, ok := strings.Cut(stderr, "  Details:\n")
	b.WriteString(head)
	if ok {
		b.WriteString("  Details:\n")
		num := regexp.MustCompile(`^\s*(\d+)\)\s*`)
		for strings.TrimSpace(details) != "" {
			m := num.FindStringSubmatch(details)
			if m == nil {
				b.WriteString(details)
				break
			}
			details = details[len(m[0]):]
			dec := json.NewDecoder(strings.NewReader(details))
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				b.WriteString(details)
				break
			}
			details = details[dec.InputOffset():]
			var out bytes.Buffer
			json.Indent(&out, raw, "     ", "  ")
			fmt.Fprintf(&b, "  %s) %s\n", m[1], out.Bytes())
		}
	}
	return b.String()
}

// writeJSONValues re-indents each JSON value of s.
func writeJSONValues(b *strings.Builder, s, prefix string) {
	dec := json.NewDecoder(strings.NewReader(s))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return
		}
		var out bytes.Buffer
		json.Indent(&out, raw, prefix, "  ")
		b.Write(out.Bytes())
		b.WriteByte('\n')
	}
}

func TestAgentsDoc(t *testing.T) {
	data, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	examples := parseDoc(t, lines)
	if len(examples) < 4 {
		t.Fatalf("%s has %d tested examples, want the read/edit/stale/retry walk-through and more", docsPath, len(examples))
	}
	var dir, addr, log string
	for n, ex := range examples {
		if !ex.Continue || dir == "" {
			dir = t.TempDir()
			addr = startServer(t, dir)
			log = ""
		}
		writeFiles(t, dir, ex.Files)
		for i := range ex.cmds {
			c := &ex.cmds[i]
			words, err := shellWords(c.line)
			if err != nil || len(words) == 0 {
				t.Fatalf("example %d: %q: %v", n+1, c.line, err)
			}
			var cmd *exec.Cmd
			switch words[0] {
			case "hashline":
				for j, w := range words {
					if log != "" && changeIDRE.MatchString(w) {
						words[j] = strings.ReplaceAll(w, "-"+docLog, "-"+log)
					}
				}
				cmd = exec.Command(hashlineBin, words[1:]...)
				cmd.Env = append(cleanEnv(), "HASHLINE_SERVER="+addr)
			case "grpcurl":
				for j, w := range words {
					words[j] = strings.ReplaceAll(w, "localhost:7420", addr)
				}
				cmd = exec.Command(grpcurl(t), words[1:]...)
			default:
				t.Fatalf("example %d: %q: only hashline and grpcurl commands run", n+1, c.line)
			}
			cmd.Dir = dir
			cmd.Stdin = strings.NewReader(c.stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err = cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatalf("example %d: %q: %v", n+1, c.line, err)
			}
			got := asDocumented(stdout.String()+stderr.String(), &log)
			if words[0] == "grpcurl" {
				got = normalizeGRPCurl(stdout.String(), stderr.String())
			}
			if code != 0 {
				got += fmt.Sprintf("(exit %d)\n", code)
			}
			if *update {
				c.want = got
				continue
			}
			if got != c.want {
				t.Errorf("%s, example %d (line %d): $ %s\n--- got\n%s--- want (in the doc)\n%s", docsPath, n+1, ex.start+1, c.line, got, c.want)
			}
		}
	}
	if *update {
		var out []string
		last := 0
		for _, ex := range examples {
			out = append(out, lines[last:ex.start]...)
			for _, c := range ex.cmds {
				if c.stdin != "" {
					out = append(out, "$ "+c.line+" <<'EOF'")
					out = append(out, strings.Split(strings.TrimSuffix(c.stdin, "\n"), "\n")...)
					out = append(out, "EOF")
				} else {
					out = append(out, "$ "+c.line)
				}
				if c.want != "" {
					out = append(out, strings.Split(strings.TrimSuffix(c.want, "\n"), "\n")...)
				}
			}
			last = ex.end
		}
		out = append(out, lines[last:]...)
		if err := os.WriteFile(docsPath, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`hashline read main.go`, []string{"hashline", "read", "main.go"}},
		{`a 'b c' "d \"e\"" $'f\tg\n' h\ i`, []string{"a", "b c", `d "e"`, "f\tg\n", "h i"}},
		{`x --text ''`, []string{"x", "--text", ""}},
		{`-d '{"path":"a"}'`, []string{"-d", `{"path":"a"}`}},
	} {
		got, err := shellWords(tc.in)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) || len(got) != len(tc.want) {
			t.Errorf("shellWords(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
