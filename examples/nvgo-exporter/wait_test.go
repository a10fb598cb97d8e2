package main

import (
	"testing"
	"time"
)

// waitFor polls until ok, first often, then every quarter second; it fails
// the test with what after limit.
func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	pause := 5 * time.Millisecond
	for deadline := time.Now().Add(limit); !ok(); pause = min(2*pause, 250*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", limit, what)
		}
		time.Sleep(pause)
	}
}

// never checks for a while that bad does not happen, polling often; it
// fails the test with what if it does.
func never(t *testing.T, while time.Duration, what string, bad func() bool) {
	t.Helper()
	for deadline := time.Now().Add(while); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if bad() {
			t.Fatal(what)
		}
	}
}
