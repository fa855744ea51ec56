//go:build !race

package provider

const raceDetector = false
