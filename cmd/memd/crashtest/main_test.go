// Package crashtest_test kills memd with SIGKILL at random moments and
// checks that nothing acknowledged is lost. It is a package of its own so
// that go test runs it beside the CLI's tests.
package crashtest_test

import (
	"testing"

	"github.com/memd/memd/internal/memdtest"
)

var memdBin string

func TestMain(m *testing.M) { memdtest.Main(m, &memdBin) }
