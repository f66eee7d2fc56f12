//go:build race

package main_test

// raceFlags build the memd binary the tests run with the race detector
// when the tests have it: the daemon's own goroutines are checked too,
// and a cold build compiles every package once, not once per mode.
var raceFlags = []string{"-race"}
