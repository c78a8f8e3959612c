package server_test

import (
	"fmt"

	"github.com/hashline/hashline/server"
)

// A token file maps bearer tokens to agents, permissions and optional path
// prefixes; hashlined loads it with --tokens.
func ExampleParseTokens() {
	toks, err := server.ParseTokens([]byte(`
tokens:
  - token: 8c1f0b5e3d9a47e6b2c4f8a1d3e5b7c9
    agent: docs-writer
    permission: write
    paths: [docs/, README.md]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	g := toks.Lookup("8c1f0b5e3d9a47e6b2c4f8a1d3e5b7c9")
	fmt.Println(g.Agent, g.Permission, g.Prefixes)
	fmt.Println(toks.Lookup("guess") == nil)

	_, err = server.ParseTokens([]byte(`tokens: [{token: short, agent: a, permission: read}]`))
	fmt.Println(err)
	// Output:
	// docs-writer write [docs README.md]
	// true
	// tokens[0]: token is 5 characters; use at least 16 random ones
}
