package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
)

// undoDescription teaches undo in as few bytes as it takes: tools/list is
// paid for in every session, and the whole list stays below the peer's
// (TestToolListIsSmallerThanThePeers).
const undoDescription = `Undo your last change (any tool's), keeping others' later changes; call again for the one before. change_id: undo that one (each reply names its undo's id: pass it to redo). A later change to the same lines or file refuses it, with fresh refs.`

// undoArgs are undo's arguments.
type undoArgs struct {
	ChangeID string `json:"change_id,omitempty"`
}

// undoPages bounds the pages of the agent's history undo reads looking for
// its last change not undone yet.
const undoPages = 10

func (t *tools) undo(ctx context.Context, req *sdk.CallToolRequest, a undoArgs) (*sdk.CallToolResult, any, error) {
	ctx = t.ctx(ctx, req)
	id := a.ChangeID
	if id == "" {
		var err error
		id, err = t.lastChange(ctx, t.agentName(req))
		if err != nil {
			return failure("undoing", "your last change", err), nil, nil
		}
		if id == "" {
			return errorResult(fmt.Sprintf("Nothing to undo: the server's history holds no change by you (agent %s) that is not undone already.", t.agentName(req))), nil, nil
		}
	}
	resp, err := t.c.Revert(ctx, &hashlinev1.RevertRequest{ChangeId: id})
	if err != nil {
		return failure("undoing", id, err), nil, nil
	}
	return textResult(render.Revert(resp, render.Options{Face: render.MCP})), nil, nil
}

// lastChange is the id of agent's newest change whose effect stands: not
// a revert (an undo, or a redo), and not undone by a revert that stands
// itself. Walking newest first, a revert not undone cancels the change it
// names, and one undone cancels nothing. "" when there is none.
func (t *tools) lastChange(ctx context.Context, agent string) (string, error) {
	cancelled := map[string]bool{}
	req := &hashlinev1.HistoryRequest{Agent: agent, MaxEntries: 100}
	for range undoPages {
		page, err := t.c.History(ctx, req)
		if err != nil {
			return "", err
		}
		for _, e := range page.GetEntries() {
			switch {
			case cancelled[e.GetChangeId()]:
			case e.GetKind() == hashlinev1.ChangeKind_CHANGE_KIND_REVERT:
				cancelled[e.GetReverts()] = true
			default:
				return e.GetChangeId(), nil
			}
		}
		if page.GetNextPageToken() == "" {
			break
		}
		req.PageToken = page.GetNextPageToken()
	}
	return "", nil
}
