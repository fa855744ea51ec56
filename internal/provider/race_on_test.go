//go:build race

package provider

// raceDetector: the race detector slows the simulation about tenfold.
const raceDetector = true
