package workspace

import (
	"io/fs"
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
// rename or unlink would replace or remove it whoever runs it; a mode of
// 0444 is still the owner's word that the file is not to change, so the
// server keeps to it.
func checkWriteBits(op, rel string, fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o222 != 0 {
		return nil
	}
	return newErr(op, rel, ErrNotWritable,
		"the file is read-only (mode %04o: no write bit for anyone), and the server does not replace, move or delete read-only files; leave it as it is, or ask the operator to make it writable (chmod u+w) if it must change",
		uint32(fi.Mode().Perm()))
}
