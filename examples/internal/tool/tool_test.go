//go:build cgo

package tool

import (
	"errors"
	"slices"
	"testing"

	"github.com/nvgo/nvgo"
)

func TestIsFlag(t *testing.T) {
	for word, want := range map[string]bool{
		"--json": true, "-c": true, "-": true, "-1": false, "-.5": false, "0": false, "alice": false, "--": true,
	} {
		if got := IsFlag(word); got != want {
			t.Errorf("IsFlag(%q) = %v, want %v", word, got, want)
		}
	}
}

func TestAppendIndices(t *testing.T) {
	got, err := AppendIndices([]int{2}, "--only", []string{"0,2", "1"})
	if err != nil || !slices.Equal(got, []int{2, 0, 1}) {
		t.Errorf("AppendIndices = %v, %v; want [2 0 1]", got, err)
	}
	if _, err := AppendIndices(nil, "--only", []string{"-1"}); err == nil {
		t.Error("a negative index was accepted")
	}
}

func TestOpenAndChooseDevices(t *testing.T) {
	lib, err := Open("dgx-h100", false)
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	sel, err := ChooseDevices(lib, []int{3, 1, 3}, false)
	if err != nil || len(sel.Devices) != 2 || sel.Devices[0].Index() != 3 || sel.CUDA != nil {
		t.Errorf("ChooseDevices(3, 1, 3) = %+v, %v; want GPUs 3 and 1", sel, err)
	}
	var bad BadArgError
	if _, err := ChooseDevices(lib, []int{8}, false); !errors.As(err, &bad) {
		t.Errorf("--only 8 on 8 GPUs: %v; want a BadArgError", err)
	}
	if sel, err := ChooseDevices(lib, nil, false); err != nil || len(sel.Devices) != 8 {
		t.Errorf("every GPU: %d, %v", len(sel.Devices), err)
	}
	if _, err := Open("no-such-preset", false); err == nil {
		t.Error("an unknown preset opened")
	}
}

func TestProcessFilter(t *testing.T) {
	alice := nvgo.GpuProcessSnapshot{PID: 10, Type: nvgo.ProcessCompute}
	alice.Username = nvgo.Some("alice")
	bob := nvgo.GpuProcessSnapshot{PID: 11, Type: nvgo.ProcessGraphics}
	bob.Username = nvgo.Some("bob")
	for _, tt := range []struct {
		name string
		f    ProcessFilter
		want []int
	}{
		{"none", ProcessFilter{}, []int{10, 11}},
		{"compute", ProcessFilter{Compute: true}, []int{10}},
		{"graphics", ProcessFilter{Graphics: true}, []int{11}},
		{"user", ProcessFilter{UserSet: true, User: "bob"}, []int{11}},
		{"pids", ProcessFilter{PIDs: []int{10}}, []int{10}},
	} {
		var got []int
		for _, p := range tt.f.Filter([]nvgo.GpuProcessSnapshot{alice, bob}) {
			got = append(got, p.PID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: kept %v, want %v", tt.name, got, tt.want)
		}
	}
}
