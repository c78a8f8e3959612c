package workspace

import "golang.org/x/sys/unix"

// enoattr is the error of a missing attribute: ENODATA on Linux.
const enoattr = unix.ENODATA
