//go:build !race

package memdtest

// Race is whether the tests run with the race detector.
const Race = false
