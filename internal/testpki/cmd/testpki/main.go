// Command testpki writes a throwaway PKI (see package testpki) into the
// directory given as its argument and prints the file paths as JSON, for
// tests outside Go (the TS client's) that need TLS and mutual TLS.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/hashline/hashline/internal/testpki"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: testpki DIR")
		os.Exit(2)
	}
	p, err := testpki.Write(os.Args[1])
	if err == nil {
		err = json.NewEncoder(os.Stdout).Encode(p)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testpki:", err)
		os.Exit(1)
	}
}
