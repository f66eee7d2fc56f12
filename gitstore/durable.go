package gitstore

import (
	"os"
	"path/filepath"
)

// durable makes the data of files reach the disk, one fsync each. (A
// syncfs did it in one call, but it also flushes every other program's
// dirty data on the file system, and says nothing of directory entries.)
func durable(files []*os.File) error {
	for _, f := range files {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// syncDirOf makes the entries of the directory holding path durable: a
// file renamed or created there survives a power cut only once they are.
func syncDirOf(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
