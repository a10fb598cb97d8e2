//go:build cgo

package tool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nvgo/nvgo"
)

// scenario writes a fake fleet's scenario file and returns its path.
func scenario(t *testing.T, json string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fleet.json")
	if err := os.WriteFile(path, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenDevicesSaysWhichStepFailedAndItsExitStatus(t *testing.T) {
	notFound := scenario(t, `{"preset": "dgx-h100", "init_error": "LIBRARY_NOT_FOUND"}`)
	noPermission := scenario(t, `{"preset": "dgx-h100", "init_error": "NO_PERMISSION"}`)
	mig := scenario(t, `{"preset": "dgx-h100-mig"}`)
	for _, tt := range []struct {
		name     string
		simulate string
		cvd      string // CUDA_VISIBLE_DEVICES
		only     []int
		visible  bool
		want     string // the error's start; "" for none
		wantCode int
	}{
		{name: "every GPU", simulate: "dgx-h100"},
		{name: "a bad --simulate is Open's error, as it is", simulate: "no-such-preset", want: `--simulate: "no-such-preset" is not a preset`, wantCode: ExitFailure},
		{name: "no driver is explained", simulate: notFound, want: "no usable NVIDIA driver: nvgo: cannot initialise NVML:", wantCode: ExitFailure},
		{name: "no permission is not a missing driver", simulate: noPermission, want: "nvgo: cannot initialise NVML: nvmlInit: insufficient permissions", wantCode: ExitFailure},
		{name: "--only 9 on eight GPUs", simulate: "dgx-h100", only: []int{9}, want: "--only 9: no such GPU (there are 8)", wantCode: ExitUsage},
		{name: "CUDA's list undetermined names --only-visible", simulate: mig, cvd: "0", visible: true, want: "--only-visible: nvgo: ", wantCode: ExitUndetermined},
		{name: "CUDA's list", simulate: "dgx-h100", cvd: "1,0", visible: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CUDA_VISIBLE_DEVICES", tt.cvd)
			lib, sel, err := OpenDevices(tt.simulate, false, tt.only, tt.visible)
			if tt.want != "" {
				if lib != nil || err == nil || !strings.HasPrefix(err.Error(), tt.want) || ExitStatus(err) != tt.wantCode {
					t.Fatalf("OpenDevices: %v, %v (exit %d); want an error starting %q, exit %d", lib, err, ExitStatus(err), tt.want, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer lib.Close()
			if len(sel.Devices) == 0 || tt.visible != (sel.CUDA != nil) {
				t.Errorf("OpenDevices chose %d devices, CUDA indices %v", len(sel.Devices), sel.CUDA)
			}
		})
	}
	t.Run("OpenAvailable explains a missing driver", func(t *testing.T) {
		_, err := OpenAvailable(notFound, false)
		if !errors.Is(err, nvgo.ErrLibraryNotFound) || !strings.HasPrefix(err.Error(), "no usable NVIDIA driver: ") {
			t.Errorf("OpenAvailable: %v; want the missing driver explained", err)
		}
	})
}
