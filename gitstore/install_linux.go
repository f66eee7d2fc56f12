package gitstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

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
	runSwapHook(tmp, full)
	if st, err := os.Lstat(tmp); err == nil && os.SameFile(st, before) {
		// What memd read and merged into its version: were it not
		// removed, the next start's sweep of temporary files would.
		os.Remove(tmp)
		return true, nil
	}
	return false, putBackSave(tmp, full, mine)
}

// putBackSave swaps back a person's save that installWorking found at tmp,
// in place of full, which holds memd's file (mine), and removes memd's.
// Nothing of the person's goes: a line they appended to memd's file
// meanwhile goes onto their save; a save that came meanwhile in place of
// memd's stays at full, and the one before it is kept beside it; a save
// that cannot be put back is kept beside the file (the error names it).
func putBackSave(tmp, full string, mine os.FileInfo) error {
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, full, unix.RENAME_EXCHANGE); err != nil {
		// The file went meanwhile (moved away): put the save there unless
		// another took its place.
		if errors.Is(err, unix.ENOENT) && unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, full, unix.RENAME_NOREPLACE) == nil {
			return nil
		}
		return keepBeside(tmp, full, err)
	}
	st, err := os.Lstat(tmp)
	if err != nil {
		return err
	}
	if !os.SameFile(st, mine) {
		// A newer save took the place of memd's between the two swaps: it
		// goes back in place, and the one it came after is kept.
		if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, full, unix.RENAME_EXCHANGE); err != nil {
			return keepBeside(tmp, full, err)
		}
		return keepBeside(tmp, full, errSavedTwice)
	}
	if st.Size() > mine.Size() {
		if err := appendTail(tmp, mine.Size(), full); err != nil {
			return keepBeside(tmp, full, err)
		}
	}
	return os.Remove(tmp)
}

// errSavedTwice is a person saving a file twice in the moment memd put its
// version in place.
var errSavedTwice = errors.New("saved twice as memd wrote it")

// keepBeside keeps a person's file found at tmp as memd wrote full under a
// name beside it, which no sweep of memd's removes, and returns an error
// naming it.
func keepBeside(tmp, full string, cause error) error {
	kept := fmt.Sprintf("%s.kept-%d", full, time.Now().UnixNano())
	if err := os.Rename(tmp, kept); err != nil {
		return fmt.Errorf("a save of %s made as memd wrote it is at %s (%v): %w", filepath.Base(full), tmp, cause, err)
	}
	return fmt.Errorf("a save of %s made as memd wrote it is kept at %s: %w", filepath.Base(full), kept, cause)
}

// appendTail appends to the file at to what the file at from holds past
// its first n bytes: a person's append to memd's file in the moment it was
// in place.
func appendTail(from string, n int64, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, io.NewSectionReader(src, n, 1<<62)); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// cannotSwap says a file system (or a sandbox's filter of system calls)
// does not swap or guard names in a rename: a plain rename does as before.
func cannotSwap(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EPERM)
}
