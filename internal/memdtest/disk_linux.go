package memdtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// SmallDisk mounts a file system of size bytes (tmpfs) on a new folder and
// returns the folder, unmounted when the test ends: a disk that fills up.
// Mounting needs root's capabilities, which CI's machine and this one have;
// where they are missing the test is skipped, saying why.
func SmallDisk(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("a small disk needs a tmpfs mount, which this process may not make: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount the small disk: %v", err)
		}
	})
	return dir
}

// Ext4Disk mounts an ext4 file system of size bytes (an image on a loop
// device) on a new folder and returns the folder, unmounted when the test
// ends. Made with mkfsArgs, or by default with no blocks kept for root
// (-m 0) and blocks of 4 KiB; ext4 still keeps some room back from
// everyone, root too, which statfs counts as free: a disk whose free room
// is not all room to write. Where the image cannot be made or mounted,
// the test is skipped, saying why.
func Ext4Disk(t testing.TB, size string, mkfsArgs ...string) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "disk.img")
	dir := t.TempDir()
	if out, err := exec.Command("truncate", "-s", size, img).CombinedOutput(); err != nil {
		t.Skipf("truncate: %v: %s", err, out)
	}
	if mkfsArgs == nil {
		mkfsArgs = []string{"-m", "0", "-b", "4096"}
	}
	if out, err := exec.Command("mkfs.ext4", append(append([]string{"-q", "-F"}, mkfsArgs...), img)...).CombinedOutput(); err != nil {
		t.Skipf("an ext4 disk needs mkfs.ext4: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Skipf("an ext4 disk needs a loop mount, which this process may not make: %v: %s", err, out)
	}
	t.Cleanup(func() {
		// Detached: a file memd holds open a moment longer keeps it busy.
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount the ext4 disk: %v", err)
		}
	})
	return dir
}

// FillDisk writes a file in dir until the disk holding it has no room
// left, and returns a function that removes the file again.
func FillDisk(t testing.TB, dir string) (free func()) {
	t.Helper()
	return fill(t, filepath.Join(dir, "filler"), -1)
}

// LeaveFree fills the disk holding dir until about free bytes are left,
// and returns a function that frees it again.
func LeaveFree(t testing.TB, dir string, free int64) func() {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return fill(t, filepath.Join(dir, "filler-to-leave-free"), int64(st.Bavail)*st.Bsize-free)
}

// fill writes n bytes to a new file at path (n < 0: until not one byte
// more fits), and returns a function that removes it.
func fill(t testing.TB, path string, n int64) func() {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for size := len(chunk); size > 0; size /= 2 { // smaller writes as the disk fills
		for n != 0 {
			w := int64(size)
			if n > 0 {
				w = min(w, n)
			}
			if _, err := f.Write(chunk[:w]); err != nil {
				if !errors.Is(err, syscall.ENOSPC) || n > 0 {
					t.Fatalf("fill the disk: %v", err)
				}
				break
			}
			if n > 0 {
				n -= w
			}
		}
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Errorf("free the disk: %v", err)
		}
	}
}
