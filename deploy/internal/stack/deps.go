package stack

// The go command builds hashlined and hashline (binarytest.Build) with
// this module's go.mod and go.sum, which then need every module they link;
// the ones only their own packages import (Prometheus, through hashlined's
// metrics; the MCP SDK, through hashline mcp; the OTLP exporters, through
// hashlined's --otlp-endpoint) are kept by importing those packages here,
// so that go mod tidy keeps them.
import (
	_ "github.com/hashline/hashline/internal/mcp"
	_ "github.com/hashline/hashline/internal/telemetry"
	_ "github.com/hashline/hashline/server/metrics"
)
