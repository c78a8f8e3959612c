// Package workspace confines every path to one root directory with os.Root
// and writes files atomically and durably.
//
// A Workspace is the only way the server touches the disk. It exists to make
// three promises that the rest of hashline relies on:
//
//   - Confinement. Request paths are relative to the root; ".." escapes,
//     absolute paths outside the root and symlinks leading out are refused
//     with ErrOutsideRoot. Symlinks that stay inside the root are followed,
//     including absolute ones that name the root by its path. Resolution is
//     done component by component with Lstat and Readlink so that errors can
//     name the offending link, and every access still goes through os.Root,
//     so a link swapped in after resolution cannot lead out either.
//     Version-control metadata (".git" and the others of IsVCSName) is
//     refused with ErrVCSPath by the symlink-free path, so no link leads
//     into it: for writing always, for reading unless WithVCSRead.
//
//   - Only regular text files. Directories, FIFOs, sockets and devices are
//     refused with ErrNotRegular without ever blocking: the file is opened
//     with O_NONBLOCK and the opened descriptor is checked, so a FIFO swapped
//     in after the check cannot hang a reader. Text is UTF-8 (a UTF-8 BOM is
//     kept) or UTF-16 with a BOM, which is decoded only if re-encoding the
//     result gives back the identical bytes; anything else is ErrNotText or
//     ErrBinary rather than silently replaced bytes.
//
//   - Atomic, durable writes. WriteFile writes a temporary file in the
//     target's directory, gives it the old file's owner, group, extended
//     attributes and mode, fsyncs it, renames it over the target and fsyncs
//     the directory, so a crash leaves either the old file or the new one,
//     never a mix, and never a partial target. A file the server's user
//     could not open for writing, or whose mode has no write bit, is not
//     replaced (ErrNotWritable), nor one whose metadata the new file could
//     not be given. The temporary files have one exact name form
//     (IsTempName), and only those are ever swept (SweepTemp).
//
// Every error wraps exactly one of the package's sentinel errors (test with
// errors.Is) and carries a message that names the path and tells the caller
// what to do about it. Versions are content hashes (see Version), so they
// are stable across restarts and need no state beyond the files themselves.
package workspace
