package mcp

// handlerStack is the frame growStack puts on a tool call's stack. Go
// grows a stack by doubling it until the frame fits, so the stack becomes
// 64 KiB: more than an edit_file through the embedded engine uses.
const handlerStack = 32 << 10

// growStack grows the calling goroutine's stack to fit handlerStack more
// in one step. The SDK runs every call on a new goroutine, whose stack
// starts small; on the way down through the engine it would be doubled and
// copied several times, each copy walking every frame above it. Grown at
// the handler's entry, while the stack is shallow, it is copied once and
// cheaply. On the benchmark machine this takes 3-6% off a one-line
// edit_file of a 100-line file (the same binary with and without it,
// alternated call by call); BenchmarkGrowStack shows the mechanism.
//
//go:noinline
func growStack() {
	var frame [handlerStack]byte
	keepFrame(frame[:])
}

// keepFrame takes the frame so that it is not optimised away; it does not
// keep it, so the frame stays on the stack.
//
//go:noinline
func keepFrame([]byte) {}
