// Package testenv decides what a test does when something it needs is
// absent from the machine: skip, saying why, or, in CI, fail.
//
// .ci/run sets NVGO_CI=1, and installs every program the tests use; a test
// that would skip there for want of one fails instead, so a broken install
// cannot turn the suite green by skipping what matters.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// CIVariable is the environment variable that marks a CI run.
const CIVariable = "NVGO_CI"

// InCI reports whether the tests run in nvgo's CI (NVGO_CI set, not "0").
func InCI() bool {
	v := os.Getenv(CIVariable)
	return v != "" && v != "0"
}

// Program returns the path of the program name, found in $PATH as
// exec.LookPath finds it. When it is missing, t is skipped with the reason,
// or failed in CI.
func Program(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s is not installed: %v", name, err)
	}
	return path
}

// Missing skips t, saying what is missing (format and args as fmt.Sprintf),
// or fails it in CI, where nothing a test needs may be missing.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("in CI ("+CIVariable+" is set): "+format, args...)
	}
	t.Skipf(format, args...)
}
