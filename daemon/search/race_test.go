//go:build race

package search_test

// raceDetector says the tests run with the race detector.
const raceDetector = true
