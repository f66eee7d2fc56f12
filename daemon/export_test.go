package daemon

import "testing"

// HoldVectorsRead holds back the reading of the vectors of the daemons
// opened after it until release is closed.
func HoldVectorsRead(t *testing.T, release <-chan struct{}) {
	beforeVectorsRead = func() { <-release }
	t.Cleanup(func() { beforeVectorsRead = func() {} })
}
