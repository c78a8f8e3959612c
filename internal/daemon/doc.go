// Package daemon runs a workspace's one engine as a process: it parses
// hashlined's flags, starts the engine with engine.Open (which opens the
// workspace and its state and finishes change sets a crash left) under the
// workspace's engine lock (one engine per root, whatever starts it), and
// serves it over gRPC on the workspace's own unix socket and on --listen
// until a signal or idle exit, then stops it with Close. hashlined runs it as
// "hashlined serve"; hashline runs the same code as "hashline engine" when
// a session (hashline mcp, hashline --local) finds no engine to attach to.
// Attach is the other side: how a face finds the running engine of a root,
// or starts one, and connects to it.
package daemon
