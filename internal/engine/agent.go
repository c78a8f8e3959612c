package engine

import "context"

type agentKey struct{}

// WithAgent returns ctx naming agent as the caller of the engine's
// operations: the face that took the call says who made it (the gRPC face
// from the caller's token or metadata). Views, idempotency keys, no-op
// memory and Watch events are all per agent.
func WithAgent(ctx context.Context, agent string) context.Context {
	return context.WithValue(ctx, agentKey{}, agent)
}

// Agent is the agent ctx names (WithAgent), or "anonymous".
func Agent(ctx context.Context) string {
	if a, ok := ctx.Value(agentKey{}).(string); ok && a != "" {
		return a
	}
	return "anonymous"
}
