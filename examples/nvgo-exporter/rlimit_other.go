//go:build !unix

package main

// openFileLimit is unknown here: --max-connections is taken as given.
func openFileLimit() (uint64, bool) { return 0, false }
