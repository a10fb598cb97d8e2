package main

import (
	"testing"
	"time"
)

// eventually polls cond until it holds or timeout passes, and reports
// whether it held: tests wait for what they need to see, not for a time
// they hope is long enough.
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// loggedRows returns the whole rows of dir's daily CSVs, skipping a last
// line still being written, for a test watching a running logger.
func loggedRows(t *testing.T, dir string) []datedRow {
	t.Helper()
	files, err := dataFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readRows(files, "0000-01-01", "9999-12-31", func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
