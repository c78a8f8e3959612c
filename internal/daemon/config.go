package daemon

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// configDefaults sets, from the configuration file path ("" for none),
// every flag of fs that neither the command line nor the environment set.
// The file is a YAML mapping (JSON is YAML too) of flag names, without
// "--", to values: a scalar, or for a repeatable flag (--check, --format,
// --syntax-strict) a list of them. A name that is not a flag of serve, a
// list for a flag that takes one value, or a value the flag refuses, stops
// the start. The file is read once, at start: SIGHUP reloads the token
// file only.
func configDefaults(fs *flag.FlagSet, path string) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file sets nothing
		}
		return err
	}
	if len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("want a mapping of flag names to values, e.g. \"format: ['*.go=gofmt']\"")
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	seen := map[string]bool{}
	var errs []error
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := strings.TrimPrefix(k.Value, "--")
		f := fs.Lookup(name)
		switch {
		case f == nil || name == "config":
			errs = append(errs, fmt.Errorf("line %d: %q is not a flag of hashlined serve (hashlined help lists them)", k.Line, k.Value))
			continue
		case seen[name]:
			errs = append(errs, fmt.Errorf("line %d: %q is given twice", k.Line, name))
			continue
		}
		seen[name] = true
		if given[name] {
			continue // the command line wins
		}
		if _, ok := os.LookupEnv(envKey(name)); ok {
			continue // and so does the environment
		}
		var values []string
		switch v.Kind {
		case yaml.ScalarNode:
			values = []string{v.Value}
		case yaml.SequenceNode:
			if _, ok := f.Value.(interface{ repeatable() }); !ok {
				errs = append(errs, fmt.Errorf("line %d: --%s takes one value, not a list", v.Line, name))
				continue
			}
			for _, e := range v.Content {
				if e.Kind != yaml.ScalarNode {
					errs = append(errs, fmt.Errorf("line %d: --%s: want a list of strings", e.Line, name))
					continue
				}
				values = append(values, e.Value)
			}
		default:
			errs = append(errs, fmt.Errorf("line %d: --%s: want a value or a list of values", v.Line, name))
			continue
		}
		for _, val := range values {
			if err := f.Value.Set(val); err != nil {
				errs = append(errs, fmt.Errorf("line %d: --%s %q: %w", v.Line, name, val, err))
			}
		}
	}
	return errors.Join(errs...)
}
