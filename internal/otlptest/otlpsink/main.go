// Command otlpsink is test support for the TypeScript and Python clients'
// tracing tests: it receives OTLP traces on loopback, over gRPC and HTTP,
// prints
//
//	otlpsink: grpc HOST:PORT http http://HOST:PORT
//
// once it listens, then every span it receives as one line of JSON
// (otlptest.Span), and exits when its standard input closes.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/hashline/hashline/internal/otlptest"
)

func main() {
	enc := json.NewEncoder(os.Stdout)
	r, err := otlptest.Start(func(s otlptest.Span) {
		if err := enc.Encode(s); err != nil {
			fmt.Fprintln(os.Stderr, "otlpsink:", err)
			os.Exit(1)
		}
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "otlpsink:", err)
		os.Exit(1)
	}
	fmt.Printf("otlpsink: grpc %s http %s\n", r.GRPCAddr, r.HTTPURL)
	io.Copy(io.Discard, os.Stdin)
	r.Close()
}
