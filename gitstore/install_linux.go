package gitstore

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// installWorking puts memd's new version of a working file, written at
// tmp, in place of full, and reports whether what it replaced was the
// file memd read (before; nil: there was none). A person's save renamed in
// after memd's last look (sed -i, an editor's safe write) would otherwise
// vanish under memd's rename: the two names are swapped in one step, so
// memd sees what it replaced, and where that is not the file it read it
// swaps the person's back and reports false; the caller reads the file
// again and merges into it. Where the file system cannot swap names, it
// renames, trusting the last look.
func installWorking(tmp, full string, mine, before os.FileInfo) (bool, error) {
	if before == nil {
		// No file was there: put memd's there unless one has come since.
		err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, full, unix.RENAME_NOREPLACE)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EEXIST):
			return false, os.Remove(tmp)
		case cannotSwap(err):
			return true, os.Rename(tmp, full)
		}
		return false, err
	}
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, full, unix.RENAME_EXCHANGE)
	switch {
	case errors.Is(err, unix.ENOENT):
		return false, os.Remove(tmp) // the person removed the file meanwhile
	case cannotSwap(err):
		return true, os.Rename(tmp, full)
	case err != nil:
		return false, err
	}
	// tmp names what full held.
	if st, err := os.Lstat(tmp); err == nil && os.SameFile(st, before) {
		return true, os.Remove(tmp)
	}
	return false, putBackSave(tmp, full, mine)
}

// putBackSave swaps back a person's save that installWorking found at tmp
// in place of full, which holds memd's file (mine), and removes memd's.
// Should the person save once more between the two swaps, their newer file
// is what stays at full.
func putBackSave(tmp, full string, mine os.FileInfo) error {
	for range 2 {
		if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, full, unix.RENAME_EXCHANGE); err != nil {
			return fmt.Errorf("put back a save made as memd wrote %s (it is at %s): %w", full, tmp, err)
		}
		st, err := os.Lstat(tmp)
		if err != nil {
			return err
		}
		if os.SameFile(st, mine) {
			return os.Remove(tmp)
		}
		// A newer save of the person's replaced memd's file meanwhile and
		// is at tmp now: swapped in once more, it stays, and the save it
		// replaced goes as it would have without memd.
	}
	return os.Remove(tmp)
}

// cannotSwap says a file system (or a sandbox's filter of system calls)
// does not swap or guard names in a rename: a plain rename does as before.
func cannotSwap(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EPERM)
}
