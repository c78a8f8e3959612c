//go:build linux || darwin

package workspace

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// aclAccess is the Linux name of a file's access ACL.
const aclAccess = "system.posix_acl_access"

// fileCaps is the name of a file's capabilities (Linux).
const fileCaps = "security.capability"

// integrityXattrs are attributes the kernel computes from a file's content
// and metadata (IMA and EVM, Linux): the old file's values describe the old
// content, so they are not copied; the kernel gives the new file its own.
var integrityXattrs = []string{"security.ima", "security.evm"}

// readXattrs reads the extended attributes of the open file fd that a
// replace keeps: every name the kernel lists to the server's user (user.*,
// security.*, an ACL as system.posix_acl_access; trusted.* only to root)
// but integrityXattrs. A filesystem without them has none.
func readXattrs(fd int) ([]xattr, error) {
	names, err := listXattrs(fd)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	xs := make([]xattr, 0, len(names))
	for _, name := range names {
		if slices.Contains(integrityXattrs, name) {
			continue
		}
		v, err := getXattr(fd, name)
		if errors.Is(err, unix.ENODATA) || errors.Is(err, enoattr) {
			continue // removed since it was listed
		}
		if err != nil {
			return nil, err
		}
		xs = append(xs, xattr{name, v})
	}
	return xs, nil
}

// listXattrs returns the names of fd's extended attributes.
func listXattrs(fd int) ([]string, error) {
	for {
		n, err := unix.Flistxattr(fd, nil)
		if errors.Is(err, unix.ENOTSUP) {
			return nil, nil
		}
		if err != nil || n == 0 {
			return nil, err
		}
		buf := make([]byte, n)
		n, err = unix.Flistxattr(fd, buf)
		if errors.Is(err, unix.ERANGE) {
			continue // one was added since the size was asked
		}
		if err != nil {
			return nil, err
		}
		var names []string
		for name := range strings.SplitSeq(string(buf[:n]), "\x00") {
			if name != "" {
				names = append(names, name)
			}
		}
		return names, nil
	}
}

// getXattr returns the value of fd's attribute name.
func getXattr(fd int, name string) ([]byte, error) {
	for {
		n, err := unix.Fgetxattr(fd, name, nil)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, n)
		if n == 0 {
			return buf, nil
		}
		n, err = unix.Fgetxattr(fd, name, buf)
		if errors.Is(err, unix.ERANGE) {
			continue // it grew since its size was asked
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
}

// setXattrs gives the new file fd the attributes xs of the file it
// replaces, leaving alone those it has already with the same value (a
// security label the policy gave it, an ACL it inherited). An access ACL
// the new file inherited from its directory's default ACL and the old file
// did not have is removed: it would change who may read and write the
// file. Capabilities the server's user may not set are dropped, as the
// kernel drops them when such a process writes to the file; any other
// attribute that cannot be set refuses the write.
func setXattrs(op, rel string, fd int, xs []xattr) error {
	have, err := listXattrs(fd)
	if err != nil {
		return osErr(op, rel, "", err)
	}
	for _, x := range xs {
		if slices.Contains(have, x.name) {
			if v, err := getXattr(fd, x.name); err == nil && bytes.Equal(v, x.value) {
				continue
			}
		}
		err := unix.Fsetxattr(fd, x.name, x.value, 0)
		if err != nil && x.name == fileCaps && errors.Is(err, unix.EPERM) {
			continue
		}
		if err != nil {
			return xattrNotKept(op, rel, x.name, err)
		}
	}
	if slices.Contains(have, aclAccess) && !slices.ContainsFunc(xs, func(x xattr) bool { return x.name == aclAccess }) {
		if err := unix.Fremovexattr(fd, aclAccess); err != nil && !errors.Is(err, unix.ENODATA) {
			return xattrNotKept(op, rel, aclAccess, err)
		}
	}
	return nil
}
