package grep_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/hashline/hashline/internal/grep"
)

func Example() {
	dir, err := os.MkdirTemp("", "grep-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for name, content := range map[string]string{
		"main.go":       "package main\n\nfunc main() {\n\trun()\n}\n",
		"cmd/tool.go":   "package main\r\n\r\nfunc main() {}\r\n",
		"gen/x.go":      "func main() {}\n",
		".gitignore":    "gen/\n",
		"README.md":     "Run `func main` ...\n",
		"cmd/tool_test": "func main",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}

	root, err := os.OpenRoot(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer root.Close()

	opts := grep.Options{Pattern: `^func main\(`, Globs: []string{"*.go"}, After: 1}
	sum, err := grep.Search(context.Background(), root.FS(), opts, func(f grep.File) error {
		fmt.Printf("%s (%d bytes)\n", f.Path, len(f.Raw))
		for _, l := range f.Lines {
			mark := " "
			if l.Match {
				mark = ">"
			}
			fmt.Printf("  %s%d: %q\n", mark, l.Number, l.Content)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d files scanned, %d matches\n", sum.FilesScanned, sum.Matches)
	// Output:
	// cmd/tool.go (32 bytes)
	//   >3: "func main() {}"
	// main.go (37 bytes)
	//   >3: "func main() {"
	//    4: "\trun()"
	// 2 files scanned, 2 matches
}

// Types select files by kind, and every matching line carries the byte
// ranges that matched, in its Content.
func Example_typesAndSubmatches() {
	dir, err := os.MkdirTemp("", "grep-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for name, content := range map[string]string{
		"app.ts":  "const ctx = withDeadline(ctx); // Deadline(s)\n",
		"main.go": "ctx, cancel := context.WithDeadline(ctx, d)\n",
		"notes":   "Deadline(\n",
	} {
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer root.Close()

	opts := grep.Options{Pattern: `deadline\(`, CaseInsensitive: true, Types: []string{"go", "typescript"}}
	_, err = grep.Search(context.Background(), root.FS(), opts, func(f grep.File) error {
		for _, l := range f.Lines {
			fmt.Printf("%s:%d:", f.Path, l.Number)
			for _, s := range l.Submatches {
				fmt.Printf(" %d-%d %q", s.Start, s.End, l.Content[s.Start:s.End])
			}
			fmt.Println()
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// app.ts:1: 16-25 "Deadline(" 34-43 "Deadline("
	// main.go:1: 27-36 "Deadline("
}
