//go:build hashlined_deps

// The benchmarks build cmd/hashlined from this module (binarytest.Build),
// so go.sum must hold the modules it links that no package of this module
// imports: the OpenTelemetry SDK and exporters of internal/telemetry. This
// file, built by no one (its tag is never set), keeps go mod tidy from
// dropping their sums.

package main

import _ "github.com/hashline/hashline/internal/telemetry"
