package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Outside CI a missing program skips; in CI it fails. The verdict is
// read from a child test run, since both end the test that meets it.
func TestMissingProgramSkipsOrFails(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		Program(t, "no-such-program-nvgo")
		t.Fatal("Program returned for a missing program")
	}
	for _, tt := range []struct {
		ci   string
		want string
	}{
		{"", "--- SKIP"},
		{"0", "--- SKIP"},
		{"1", "--- FAIL"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMissingProgramSkipsOrFails$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", CIVariable+"="+tt.ci)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), tt.want) || !strings.Contains(string(out), "no-such-program-nvgo is not installed") {
			t.Errorf("%s=%q: child said\n%s\nwant %s naming the program", CIVariable, tt.ci, out, tt.want)
		}
	}
}

func TestProgramFindsAnInstalledOne(t *testing.T) {
	if p := Program(t, "sh"); !strings.HasSuffix(p, "/sh") {
		t.Errorf("Program(sh) = %q", p)
	}
}
