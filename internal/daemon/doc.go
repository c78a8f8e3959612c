// Package daemon runs a workspace's one engine as a process: it parses
// hashlined's flags, opens the workspace and its state, takes the
// workspace's engine lock (one engine per root, whatever starts it),
// finishes change sets a crash left, and serves the engine over gRPC on
// the workspace's own unix socket and on --listen. hashlined runs it as
// "hashlined serve"; hashline runs the same code as "hashline engine" when
// a session (hashline mcp, hashline --local) finds no engine to attach to.
// Attach is the other side: how a face finds the running engine of a root,
// or starts one, and connects to it.
package daemon
