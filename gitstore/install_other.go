//go:build !linux

package gitstore

import "os"

// installWorking renames memd's new version of a working file over it,
// trusting the last look: only Linux swaps two names in one step.
func installWorking(tmp, full string, data []byte, mine, before os.FileInfo) (bool, error) {
	return true, os.Rename(tmp, full)
}
