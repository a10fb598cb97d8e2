//go:build !cgo

// Package fakehost gives nvgo a host for a fake fleet. It needs cgo, as
// package fakegpu does.
package fakehost
