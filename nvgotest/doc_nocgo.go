//go:build !cgo

// Package nvgotest tests programs built on nvgo without a GPU. Like
// fakegpu, it needs cgo; without it the package is empty.
package nvgotest
