package daemon

import (
	"fmt"
	"net"
)

// ListenError explains a failed listen on a TCP address. A port in use is
// the usual case (a hashlined already serving, or another program), and
// the bare "bind: address already in use" does not say what to do.
func ListenError(flagName, addr string, err error) error {
	if !addrInUse(err) {
		return fmt.Errorf("%s %s: %w", flagName, addr, err)
	}
	host, port, splitErr := net.SplitHostPort(addr)
	if splitErr != nil {
		host, port = addr, ""
	}
	other := net.JoinHostPort(host, "0")
	return fmt.Errorf("%s %s: the address is already in use (port %s): another hashlined or another program listens there. "+
		"Stop it, or choose another address: %s %s picks a free port (printed at start), or name another port (%s)",
		flagName, addr, port, flagName, other, net.JoinHostPort(host, "7421"))
}
