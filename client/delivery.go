package client

import (
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
)

// delivery records, across the attempts of one call, whether any attempt
// got a connection to send on. grpc fills a Peer call option only for an
// attempt that opened a stream on a connection; an attempt that never did
// (the dial was refused, the deadline passed while connecting) sent
// nothing, so the server cannot have applied it.
type delivery struct{ peers []*peer.Peer }

// opt returns the call option for one more attempt.
func (d *delivery) opt() grpc.CallOption {
	p := new(peer.Peer)
	d.peers = append(d.peers, p)
	return grpc.Peer(p)
}

func (d *delivery) sent() bool {
	for _, p := range d.peers {
		if p.Addr != nil {
			return true
		}
	}
	return false
}

// markNotSent sets Error.NotSent on err, the decoded error of a call of
// c, when no attempt of the call was sent. Only a Dial-made client knows:
// a connection passed to New may not honour grpc's call options.
func (c *Client) markNotSent(err error, d *delivery) error {
	var e *Error
	if c.conn == nil || !errors.As(err, &e) || d.sent() {
		return err
	}
	switch e.Code {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		e.NotSent = true
	}
	return err
}
