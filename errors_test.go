package memd_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/memd/memd"
)

// A caller is told what it can act on: a memd error as phrased, a full
// disk as such (try again once there is room), anything else as internal.
func TestErrorCodeAndMessage(t *testing.T) {
	full := &fs.PathError{Op: "write", Path: "/data/shards/agent/a/.git/objects/pack/tmp", Err: syscall.ENOSPC}
	for _, c := range []struct {
		name      string
		err       error
		code, msg string
	}{
		{"memd's own", memd.Errorf(memd.ECONFLICT, "it exists"), memd.ECONFLICT, "it exists"},
		{"no room, wrapped", fmt.Errorf("shard agent/a: write pack: %w", full), memd.EUNAVAILABLE, "the disk holding memd's data is full"},
		{"over a quota", &fs.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}, memd.EUNAVAILABLE, "the disk holding memd's data is full"},
		{"memd's own around no room", &memd.Error{Code: memd.EINVALID, Message: "bad", Err: full}, memd.EINVALID, "bad"},
		{"anything else", errors.New("index out of range"), memd.EINTERNAL, "internal error"},
	} {
		if code, msg := memd.ErrorCode(c.err), memd.ErrorMessage(c.err); code != c.code || !strings.HasPrefix(msg, c.msg) {
			t.Errorf("%s: %s %q, want %s %q…", c.name, code, msg, c.code, c.msg)
		}
	}
}
