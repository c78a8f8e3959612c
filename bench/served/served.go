// Package served starts a real hashlined over loopback for a benchmark and
// connects to it with the Go client's transport, as a user's client would.
package served

import (
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/binarytest"
)

// Server is a running hashlined and a connection to it.
type Server struct {
	*binarytest.Process
	Conn *grpc.ClientConn
}

// Start runs bin serving root on a free loopback port, logging warnings
// and worse to stderr, with extra flags after those; the connection takes
// replies of up to 64 MiB, more than any benchmark asks for.
func Start(bin, root string, extra ...string) (*Server, error) {
	p, err := binarytest.Start(bin, binarytest.Options{Stderr: os.Stderr,
		Args: append([]string{"--root", root, "--listen", "127.0.0.1:0", "--log-level", "warn"}, extra...)})
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(p.Addr, append(client.TransportOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))...)
	if err != nil {
		p.Stop(10 * time.Second)
		return nil, err
	}
	return &Server{p, conn}, nil
}

// Stop closes the connection and stops the server.
func (s *Server) Stop() {
	s.Conn.Close()
	s.Process.Stop(10 * time.Second)
}
