//go:build !linux

package workspace

// holdInode is Linux only: O_PATH holds an inode without opening the file.
// Elsewhere a replaced file is freed by the rename, as before.
func holdInode(string) int { return -1 }

func closeInode(int) {}

// allocate is Linux only (see its Linux version); elsewhere nothing is
// reserved.
func allocate(uintptr, int) bool { return false }
