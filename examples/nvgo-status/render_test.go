//go:build cgo

package main

import (
	"strings"
	"testing"
)

// The ECC cell of a GPU with MIG mode on is the GPU's uncorrected ECC
// count, or N/A, as nvidia-smi shows it: MIG mode is no part of it.
func TestTheECCCellOfAMIGGPUIsItsCount(t *testing.T) {
	tests := []struct {
		name string
		gpu  string // the scenario's GPU
		want string // the ECC cell
	}{
		{name: "MIG on, no errors", gpu: `{"mig_mode": 1}`, want: "0"},
		{name: "MIG on, errors", gpu: `{"mig_mode": 1, "ecc_errors": 3}`, want: "3"},
		{name: "MIG on, ECC not supported", gpu: `{"mig_mode": 1, "unsupported": ["ecc"]}`, want: "N/A"},
		{name: "MIG off, errors", gpu: `{"ecc_errors": 2}`, want: "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plainTerminal(t, 0)
			code, stdout, stderr := runStatus(t, "--simulate", writeScenario(t, `{"gpus": [`+tt.gpu+`]}`))
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
			}
			var cell string
			for _, l := range strings.Split(stdout, "\n") {
				if cells := strings.Split(l, "│"); len(cells) > 3 && strings.HasPrefix(cells[1], "   0  ") {
					cell = strings.TrimSpace(cells[3])
					break
				}
			}
			if cell != tt.want {
				t.Errorf("the ECC cell of GPU 0 is %q; want %q:\n%s", cell, tt.want, stdout)
			}
			if strings.Contains(stdout, "MIG:") {
				t.Errorf("the table says \"MIG:\":\n%s", stdout)
			}
		})
	}
}
