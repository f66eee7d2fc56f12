package provenance

// SetHookAfterRevert makes f run after each revert RevertMessages makes;
// nil removes it.
func SetHookAfterRevert(f func()) {
	if f == nil {
		testHookAfterRevert.Store(nil)
		return
	}
	testHookAfterRevert.Store(&f)
}
