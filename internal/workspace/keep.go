package workspace

import (
	"fmt"
	"io/fs"
	"strconv"
)

// kept is what a replace keeps of the file it replaces. It is read from
// that file before the temp file is written, and given to the temp file
// before the rename, so the file is never visible with other metadata.
type kept struct {
	mode     fs.FileMode // the old mode's keptModeBits
	uid, gid int         // the old owner and group; -1 where files have none
	xattrs   []xattr     // the old extended attributes
}

// xattr is one extended attribute.
type xattr struct {
	name  string
	value []byte
}

// checkWriteBits refuses a file whose mode has no write bit at all. The
// kernel lets root (CAP_DAC_OVERRIDE) write such a file, and the server's
// rename would replace it whoever runs it; a mode of 0444 is still the
// owner's word that the file is not to change, so the server keeps to it.
func checkWriteBits(op, rel string, fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o222 != 0 {
		return nil
	}
	return newErr(op, rel, ErrNotWritable,
		"the file is read-only (mode %04o: no write bit for anyone), and the server does not replace read-only files; leave it as it is, or ask the operator to make it writable (chmod u+w) if it must change",
		uint32(fi.Mode().Perm()))
}

// notWritable is the error of a file the server's user may not write, as
// the operating system answered (err).
func notWritable(op, rel string, err error) error {
	return &Error{Op: op, Path: rel, Kind: ErrNotWritable, Err: err,
		Msg: fmt.Sprintf("the server's user (%s) may not write this file (%v), and the server does not replace files it could not open for writing; leave it as it is, or ask the operator to give that user write access", whoami(), err)}
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
