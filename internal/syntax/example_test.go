package syntax_test

import (
	"fmt"

	"github.com/hashline/hashline/internal/syntax"
)

// An edit that drops a closing parenthesis, in a file that already had an
// error further down: only the new error is reported, on its line of the
// new content.
func ExampleCheck() {
	before := []byte(`package shop

func Total(prices []int) int {
	sum := 0
	for _, p := range prices {
		sum += p
	}
	return sum
}

var broken = 
`)
	after := []byte(`package shop

func Total(prices []int) int {
	sum := 0
	for _, p := range prices {
		sum += (p
	}
	return sum
}

var broken = 
`)
	r := syntax.Check("shop.go", before, after, syntax.Options{})
	fmt.Println(r.Status, r.Checker)
	for _, d := range r.Diagnostics {
		fmt.Println(d)
	}
	// Output:
	// checked go/parser
	// 6:12: expected ')', found newline (go/parser)
}
