package gitstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// installWorking puts memd's new version of a working file, written at
// tmp (data, stated mine), in place of full, and reports whether what it
// replaced was the file memd read (before; nil: there was none). A
// person's save renamed in
// after memd's last look (sed -i, an editor's safe write) would otherwise
// vanish under memd's rename: the two names are swapped in one step, so
// memd sees what it replaced, and where that is not the file it read it
// swaps the person's back and reports false; the caller reads the file
// again and merges into it. Where the file system cannot swap names, it
// renames, trusting the last look.
func installWorking(tmp, full string, data []byte, mine, before os.FileInfo) (bool, error) {
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
	return false, putBackSave(tmp, full, data, mine)
}

// putBackSave swaps back a person's save that installWorking found at tmp,
// in place of full, which holds memd's file (data, stated mine), and
// removes memd's. Nothing of the person's goes: a line they appended to
// memd's file meanwhile goes onto their save, and a file of memd's they
// changed otherwise is kept beside it; a save that came meanwhile in place
// of memd's stays at full, and the one before it is kept beside it; a save
// that cannot be put back is kept beside the file. A file kept beside is
// named in the error. (A file the person removed meanwhile gets their save
// back, as memd writes a working file that is missing.)
func putBackSave(tmp, full string, data []byte, mine os.FileInfo) error {
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
	now, err := os.ReadFile(tmp)
	switch {
	case err != nil:
		return keepBeside(tmp, full, err)
	case bytes.Equal(now, data):
	case len(now) > len(data) && bytes.HasPrefix(now, data):
		if err := appendBytes(full, now[len(data):]); err != nil {
			return keepBeside(tmp, full, err)
		}
	default:
		return keepBeside(tmp, full, errChangedInPlace)
	}
	return os.Remove(tmp)
}

// errSavedTwice is a person saving a file twice in the moment memd put its
// version in place.
var errSavedTwice = errors.New("saved twice as memd wrote it")

// errChangedInPlace is a person writing in place to memd's file in the
// moment it stood in for their save.
var errChangedInPlace = errors.New("written in place as memd wrote it")

// keepBeside keeps a person's file found at tmp as memd wrote full under a
// name beside it, which no sweep of memd's removes and no other file
// takes, and returns an error naming it.
func keepBeside(tmp, full string, cause error) error {
	var err error
	for n := 0; n < 10; n++ {
		kept := fmt.Sprintf("%s.kept-%d", full, time.Now().UnixNano()+int64(n))
		err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, kept, unix.RENAME_NOREPLACE)
		if cannotSwap(err) {
			// A link refuses to take an existing name too.
			if err = os.Link(tmp, kept); err == nil {
				os.Remove(tmp)
			}
		}
		if err == nil {
			return fmt.Errorf("a save of %s made as memd wrote it is kept at %s: %w", filepath.Base(full), kept, cause)
		}
		if !errors.Is(err, unix.EEXIST) && !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return fmt.Errorf("a save of %s made as memd wrote it is at %s (%v): %w", filepath.Base(full), tmp, cause, err)
}

// appendBytes appends tail to the file at path: what a person appended to
// memd's file in the moment it stood in for their save.
func appendBytes(path string, tail []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	// After the save's last line, not joined to it.
	var last [1]byte
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		if _, err := f.ReadAt(last[:], st.Size()-1); err == nil && last[0] != '\n' {
			tail = append([]byte{'\n'}, tail...)
		}
	}
	if _, err := f.Write(tail); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cannotSwap says a file system (or a sandbox's filter of system calls)
// does not swap or guard names in a rename: a plain rename does as before.
func cannotSwap(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EPERM)
}
