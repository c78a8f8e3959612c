//go:build unix

package workspace

import (
	"fmt"
	"strconv"
)

// These refusals come from the operating system's answer to an open,
// chown or setxattr that only the Unix replace path makes.

// notWritable is the error of a file the server's user may not write, as
// the operating system answered (err).
func notWritable(op, rel string, err error) error {
	return &Error{Op: op, Path: rel, Kind: ErrNotWritable, Err: err,
		Msg: fmt.Sprintf("the server's user (%s) may not write this file (%v), and the server does not replace, move or delete files it could not open for writing; leave it as it is, or ask the operator to give that user write access", whoami(), err)}
}

// ownerNotKept is the error of a replace whose new file could not be given
// the old file's owner and group (err, from chown): the server refuses
// rather than change who owns the file.
func ownerNotKept(op, rel string, k *kept, err error) error {
	return &Error{Op: op, Path: rel, Kind: ErrNotWritable, Err: err,
		Msg: fmt.Sprintf("the file belongs to uid %d, gid %d, and the server's user (%s) cannot give a new file that owner and group (%v), so replacing it would change them; leave it as it is, or ask the operator to run the server as the file's owner, or to give the file to the server's user", k.uid, k.gid, whoami(), err)}
}

// xattrNotKept is the error of a replace whose new file could not be given
// one of the old file's extended attributes (err, from setxattr).
func xattrNotKept(op, rel, name string, err error) error {
	return &Error{Op: op, Path: rel, Kind: ErrNotWritable, Err: err,
		Msg: fmt.Sprintf("the file has the extended attribute %s, which the server's user (%s) cannot give a new file (%v), so replacing the file would drop it; leave it as it is, or ask the operator to run the server with the rights to set it, or to remove the attribute", strconv.Quote(name), whoami(), err)}
}
