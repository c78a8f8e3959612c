package workspace

import "golang.org/x/sys/unix"

// enoattr is the error of a missing attribute: ENOATTR on macOS.
const enoattr = unix.ENOATTR
