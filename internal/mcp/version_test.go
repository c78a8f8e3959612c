package mcp_test

import (
	"testing"

	"github.com/hashline/hashline/internal/buildinfo"
	"github.com/hashline/hashline/internal/mcp"
)

func TestServerInfoVersion(t *testing.T) {
	s := newSession(t, "embedded")
	for _, tt := range []struct {
		name string
		opts []mcp.Option
		want string
	}{
		{"by default the bridge reports the binary's build version", nil, buildinfo.Version()},
		{"WithVersion overrides it", []mcp.Option{mcp.WithVersion("v9.9.9")}, "v9.9.9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			info := s.memorySession(tt.opts...).InitializeResult().ServerInfo
			if info.Name != mcp.Name || info.Version != tt.want {
				t.Errorf("serverInfo = %s %s, want %s %s", info.Name, info.Version, mcp.Name, tt.want)
			}
		})
	}
}
