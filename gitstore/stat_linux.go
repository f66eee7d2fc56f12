package gitstore

import (
	"os"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fillStat records a file's stat data in its index entry, as git does, so
// that git sees the file unchanged without reading it.
func fillStat(e *index.Entry, st os.FileInfo) {
	e.Size = uint32(st.Size())
	e.ModifiedAt = st.ModTime()
	e.CreatedAt = st.ModTime()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		e.CreatedAt = time.Unix(sys.Ctim.Sec, sys.Ctim.Nsec)
		e.Dev, e.Inode = uint32(sys.Dev), uint32(sys.Ino)
		e.UID, e.GID = sys.Uid, sys.Gid
	}
}

// statMatches reports whether a file's stat data equals what its index
// entry recorded.
func statMatches(e *index.Entry, st os.FileInfo) bool {
	if e.Size != uint32(st.Size()) || !e.ModifiedAt.Equal(st.ModTime()) {
		return false
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return e.Inode == uint32(sys.Ino) && e.CreatedAt.Equal(time.Unix(sys.Ctim.Sec, sys.Ctim.Nsec))
	}
	return true
}

// fileStat is what tells a file's versions apart without reading it.
type fileStat struct {
	ino          uint64
	size         int64
	mtime, ctime int64 // nanoseconds
}

func statOf(fi os.FileInfo) (fileStat, bool) {
	if fi == nil {
		return fileStat{}, false
	}
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{}, false
	}
	return fileStat{sys.Ino, fi.Size(), sys.Mtim.Nano(), sys.Ctim.Nano()}, true
}
