// Command prebuilt is the benchmark's measure of what moving a Read
// response between processes costs: a gRPC server that answers a Read of a
// file under its root with a response it built at the first Read of that
// file and never builds again, on the same transport options as hashlined.
// A call to it pays the round trip and the response's size, and no service
// work. It takes the arguments and prints the serving line that
// binarytest.Start expects of hashlined ("serve --root DIR --listen ADDR").
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: prebuilt serve --root DIR [--listen ADDR]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	root := fs.String("root", ".", "directory the paths of Read are relative to")
	listen := fs.String("listen", "127.0.0.1:0", "loopback address to listen on")
	_ = fs.Parse(os.Args[2:])
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "prebuilt:", err)
		os.Exit(1)
	}
	r, err := os.OpenRoot(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "prebuilt:", err)
		os.Exit(1)
	}
	s := grpc.NewServer(append(server.TransportOptions(), grpc.MaxSendMsgSize(1<<30))...)
	hashlinev1.RegisterFileServiceServer(s, newPrebuilt(r))
	fmt.Printf("hashlined: serving %s on %s\n", *root, l.Addr())
	if err := s.Serve(l); err != nil {
		fmt.Fprintln(os.Stderr, "prebuilt:", err)
		os.Exit(1)
	}
}

func newPrebuilt(root *os.Root) *prebuilt {
	return &prebuilt{root: root, built: map[string]*hashlinev1.ReadResponse{}}
}

// prebuilt answers Read only, with the text of the whole file (omitLines).
type prebuilt struct {
	hashlinev1.UnimplementedFileServiceServer
	root  *os.Root
	mu    sync.Mutex
	built map[string]*hashlinev1.ReadResponse
}

func (p *prebuilt) Read(_ context.Context, req *hashlinev1.ReadRequest) (*hashlinev1.ReadResponse, error) {
	if !req.GetOmitLines() || req.GetOffset() > 1 || req.GetLimit() != 0 {
		return nil, status.Error(codes.Unimplemented, "prebuilt answers only a Read of a whole file with omitLines")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.built[req.GetPath()]; ok {
		return r, nil
	}
	raw, err := p.root.ReadFile(filepath.FromSlash(req.GetPath()))
	if err != nil {
		return nil, status.Error(codes.NotFound, err.Error())
	}
	d := hashline.ParseDocument(raw)
	r := &hashlinev1.ReadResponse{
		Path:       req.GetPath(),
		Version:    workspace.Version(raw),
		Text:       string(hashline.AppendTagged(nil, hashline.Hasher{}, d, 1, d.Len(), 4096)),
		TotalLines: int32(d.Len()),
		Eol:        d.EOLStyle(),
		Encoding:   string(workspace.UTF8),
	}
	p.built[req.GetPath()] = r
	return r, nil
}
