package main

import (
	"flag"
	"fmt"
	"github.com/hashline/hashline/internal/editjson"
	"strings"
)

// flagError prints a bad flag's error the way a user fixes it: the error,
// the closest flag when one is near (a typo), and where the full usage is,
// instead of the usage itself, which would bury the error.
func flagError(io stdio, cmd string, fs *flag.FlagSet, err error) int {
	msg := err.Error()
	const undefined = "flag provided but not defined: -"
	if name, ok := strings.CutPrefix(msg, undefined); ok {
		msg = "unknown flag --" + name
		if near := closestFlag(fs, name); near != "" {
			msg += "; did you mean --" + near + "?"
		}
	} else {
		// The flag package names flags with one dash; ours are
		// documented with two.
		msg = strings.ReplaceAll(msg, " -", " --")
	}
	fmt.Fprintf(io.stderr, "hashline %s: %s\n", cmd, msg)
	fmt.Fprintf(io.stderr, "Run \"hashline %s --help\" for usage.\n", cmd)
	return exitUsage
}

// closestFlag returns the flag of fs nearest to name by edit distance, if
// it is near enough to be a typo of it (at most a third of its letters
// off, and at least one), else "".
func closestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", 0
	fs.VisitAll(func(f *flag.Flag) {
		d := editjson.Distance(name, f.Name)
		if best == "" || d < bestD {
			best, bestD = f.Name, d
		}
	})
	if best == "" || bestD > max(1, len(best)/3) {
		return ""
	}
	return best
}

// globalFlags are the connection flags every file command takes, with
// whether each takes a value: they may come before the command too
// ("hashline --server ADDR read F", as kubectl and gh accept), and are
// moved after it.
var globalFlags = map[string]bool{
	"server": true, "local": false, "root": true, "agent": true, "token": true,
	"timeout": true, "json": false, "tls": false, "tls-ca": true, "tls-cert": true,
	"tls-key": true, "tls-server-name": true, "workspace": true, "workspace-domain": true,
}

// hoistGlobalFlags turns "--server X read F" into "read --server X F". It
// returns the arguments unchanged when they start with a command, and an
// error naming the fix for a flag before the command that is not global.
func hoistGlobalFlags(args []string) ([]string, error) {
	var lead []string
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" && args[i] != "--" {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		takesValue, ok := globalFlags[name]
		if !ok {
			return nil, fmt.Errorf("%s before the command: only the connection flags (--server, --local, --root, --agent, --token, --timeout, --json, --tls...) may come first; put it after the command (hashline COMMAND %s)", args[i], args[i])
		}
		lead = append(lead, args[i])
		i++
		if takesValue && !hasValue {
			if i >= len(args) {
				return nil, fmt.Errorf("%s needs a value", args[i-1])
			}
			lead = append(lead, args[i])
			i++
		}
	}
	if len(lead) == 0 {
		return args, nil
	}
	if i >= len(args) {
		return nil, fmt.Errorf("%s: no command given after the flags", strings.Join(lead, " "))
	}
	out := append([]string{args[i]}, lead...)
	return append(out, args[i+1:]...), nil
}
