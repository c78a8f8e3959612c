//go:build !linux

package workspace

// holdInode is Linux only: O_PATH holds an inode without opening the file.
// Elsewhere a replaced file is freed by the rename, as before.
func holdInode(string) int { return -1 }

func closeInode(int) {}
