package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
)

// durable makes the data of files reach the disk, then the entries of the
// directories holding dirsOf (paths in them). The files are synced at
// once, one fsync each run together, so that the file system writes them
// out side by side and commits its journal for several at a time, where
// one after another each waits for a commit of its own; the directories
// after, so that no name reaches the disk before its file's data. (A
// syncfs did it in one call, but it also flushes every other program's
// dirty data on the file system, and says nothing of directory entries.)
func durable(files []*os.File, dirsOf ...string) error {
	errs := make([]error, max(len(files), len(dirsOf)))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() { errs[i] = f.Sync() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, path := range dirsOf {
		wg.Go(func() { errs[i] = syncDirOf(path) })
	}
	wg.Wait()
	return errors.Join(errs...)
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

// replaceFile writes data to path at once, through path.new renamed over
// it: a crash leaves the old file or the new one, and with sync a power
// cut does too (the new one's bytes reach the disk before the rename). A
// path.new a crash left is written over by the next. The file gets perm.
func replaceFile(path string, data []byte, perm os.FileMode, sync bool) error {
	f, err := os.OpenFile(path+".new", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	err = f.Chmod(perm) // a path.new left by a crash keeps its own
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(path+".new", path)
	}
	if err != nil {
		os.Remove(path + ".new")
	}
	return err
}
