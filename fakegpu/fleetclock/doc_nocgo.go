//go:build !cgo

// Package fleetclock gives nvgo's samplers clocks tied to a fake fleet's
// clock. Like fakegpu, it needs cgo; without it the package is empty.
package fleetclock
