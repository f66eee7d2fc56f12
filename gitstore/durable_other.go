//go:build !linux

package gitstore

import "os"

// durable makes the data of files reach the disk, one fsync each.
func durable(files []*os.File) error {
	for _, f := range files {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return nil
}
