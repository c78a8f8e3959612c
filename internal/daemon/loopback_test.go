package daemon

import "testing"

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7420": true, "127.1.2.3:1": true, "[::1]:7420": true, "localhost:7420": true, "LOCALHOST:1": true,
		"0.0.0.0:7420": false, ":7420": false, "[::]:7420": false, "10.0.0.1:7420": false, "example.com:7420": false, "garbage": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
