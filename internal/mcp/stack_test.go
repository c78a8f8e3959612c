package mcp

import (
	"fmt"
	"testing"
)

// BenchmarkGrowStack: a new goroutine goes down a chain of 48 calls that
// uses about 25 KiB of stack, as a tool call through the embedded engine
// does, with and without growStack at its entry.
func BenchmarkGrowStack(b *testing.B) {
	for _, grow := range []bool{false, true} {
		b.Run(fmt.Sprintf("grow=%v", grow), func(b *testing.B) {
			done := make(chan int)
			for b.Loop() {
				go func() {
					if grow {
						growStack()
					}
					done <- descend(48)
				}()
				<-done
			}
		})
	}
}

// descend uses about 520 bytes of stack per call.
//
//go:noinline
func descend(n int) int {
	var pad [512]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return descend(n-1) + int(pad[n%len(pad)])
}
