package client

import (
	"context"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// Status asks the server which workspace root it serves, its version, its
// hash length and whether edits need a prior Read. It has no side effects
// and is retried like Read.
func (c *Client) Status(ctx context.Context) (*hashlinev1.StatusResponse, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	var resp *hashlinev1.StatusResponse
	err := c.retry.do(ctx, unavailable, func(ctx context.Context) (err error) {
		resp, err = c.rpc.Status(ctx, &hashlinev1.StatusRequest{})
		return err
	})
	return resp, c.fromStatus(err)
}
