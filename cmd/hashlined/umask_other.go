//go:build !unix

package main

// privateFiles does nothing where there is no umask (Windows): a socket
// file takes the permissions its directory gives new files, so keep the
// socket in a directory only this user can open.
func privateFiles() (restore func()) { return func() {} }
