package nvgo

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Machines for the conformance table. UUIDs are chosen so that prefixes
// collide where a case needs it.
var (
	uuidA = "GPU-1f00aa11-0000-4000-8000-000000000000"
	uuidB = "GPU-47b2bb22-0000-4000-8000-000000000001"
	uuidC = "GPU-9e8d35e3-0000-4000-8000-000000000002"
	uuidD = "GPU-c0ffee44-0000-4000-8000-000000000003"

	migA = "MIG-5a5a0001-0000-5000-8000-000000000000"
	migB = "MIG-5a5b0002-0000-5000-8000-000000000001"
	migC = "MIG-7c7c0003-0000-5000-8000-000000000002"
)

func gpu(uuid, bus, name string) cvdGPU { return cvdGPU{uuid: uuid, busID: bus, name: name} }

// four identical GPUs in PCI order.
var fourH100 = []cvdGPU{
	gpu(uuidA, "00000000:18:00.0", "H100"), gpu(uuidB, "00000000:2A:00.0", "H100"),
	gpu(uuidC, "00000000:3A:00.0", "H100"), gpu(uuidD, "00000000:5D:00.0", "H100"),
}

// pciShuffled: NVML's index order is not PCI order (NVML promises none).
var pciShuffled = []cvdGPU{
	gpu(uuidA, "00000000:5D:00.0", "H100"), gpu(uuidB, "00000000:18:00.0", "H100"),
	gpu(uuidC, "00000000:3A:00.0", "H100"), gpu(uuidD, "00000000:2A:00.0", "H100"),
}

// lostLast: GPU 3 fell off the bus before its identity was read;
// lostKnown: it fell after (its UUID is known).
var (
	errLost   = fmt.Errorf("GPU 3: nvmlDeviceGetHandleByIndex: %w", ErrGPULost)
	lostLast  = []cvdGPU{fourH100[0], fourH100[1], fourH100[2], {lost: errLost}}
	lostKnown = []cvdGPU{fourH100[0], fourH100[1], fourH100[2], {uuid: uuidD, busID: "00000000:5D:00.0", name: "H100", lost: errLost}}
)

// mixed models: FASTEST_FIRST order is unknown.
var mixed = []cvdGPU{gpu(uuidA, "00000000:18:00.0", "A100"), gpu(uuidB, "00000000:2A:00.0", "H100")}

// withMIG: GPU 1 has MIG on with three devices (two compute instances in GI
// 2); GPU 3 has MIG on and no instance.
var withMIG = []cvdGPU{
	gpu(uuidA, "00000000:18:00.0", "H100"),
	{uuid: uuidB, busID: "00000000:2A:00.0", name: "H100", migOn: true, migs: []cvdMIG{
		{migA, 1, 0}, {migB, 2, 0}, {migC, 2, 1},
	}},
	gpu(uuidC, "00000000:3A:00.0", "H100"),
	{uuid: uuidD, busID: "00000000:5D:00.0", name: "H100", migOn: true},
}

// oneMIG: a single MIG device and no whole GPU CUDA could use.
var oneMIG = []cvdGPU{
	{uuid: uuidA, busID: "00000000:18:00.0", name: "H100", migOn: true, migs: []cvdMIG{{migA, 1, 0}}},
	{uuid: uuidB, busID: "00000000:2A:00.0", name: "H100", migOn: true},
}

// oneMIGAndWhole: one MIG device beside a whole GPU.
var oneMIGAndWhole = []cvdGPU{
	{uuid: uuidA, busID: "00000000:18:00.0", name: "H100", migOn: true, migs: []cvdMIG{{migA, 1, 0}}},
	gpu(uuidB, "00000000:2A:00.0", "H100"),
}

func unset() CUDAEnv        { return CUDAEnv{} }
func set(v string) CUDAEnv  { return VisibleDevices(v) }
func pci(e CUDAEnv) CUDAEnv { e.Order = OrderPCIBusID; return e }
func refsString(r []cvdRef) string {
	s := make([]string, len(r))
	for i, x := range r {
		if x.mig >= 0 {
			s[i] = fmt.Sprintf("%d/%d", x.gpu, x.mig)
		} else {
			s[i] = fmt.Sprint(x.gpu)
		}
	}
	return "[" + strings.Join(s, " ") + "]"
}

// TestResolveCVDConformance is the rule table of
// ../shared/research/cuda-visible-devices.md, one case per row. want is the
// devices as "gpu" or "gpu/mig" positions; err is the sentinel for cases the
// rules leave undecided.
func TestResolveCVDConformance(t *testing.T) {
	tests := []struct {
		name   string
		gpus   []cvdGPU
		branch int
		env    CUDAEnv
		want   string
		err    error
	}{
		// §1 unset, empty, junk
		{"no GPU at all", nil, 580, unset(), "[]", nil},
		{"no GPU, an index", nil, 580, set("0"), "[]", nil},
		{"one GPU of its own model", fourH100[:1], 580, set("0"), "[0]", nil},
		{"unset shows every GPU", fourH100, 580, unset(), "[0 1 2 3]", nil},
		{"empty shows none", fourH100, 580, set(""), "[]", nil},
		{"a blank shows none", fourH100, 580, set(" "), "[]", nil},
		{"-1 shows none", fourH100, 580, set("-1"), "[]", nil},
		{"Slurm's NoDevFiles shows none", fourH100, 580, set("NoDevFiles"), "[]", nil},
		{"all is not a CUDA keyword", fourH100, 580, set("all"), "[]", nil},
		// §2 integers
		{"out of range ends the list", fourH100, 580, set("0,4,1"), "[0]", nil},
		{"the guide's example 0,2,-1,1", fourH100, 580, set("0,2,-1,1"), "[0 2]", nil},
		{"trailing junk is ignored", fourH100, 580, set("1gpu2,2ampere"), "[1 2]", nil},
		{"a word first shows none", fourH100, 580, set("one,two,3,1"), "[]", nil},
		{"a word ends the list", fourH100, 580, set("3,2,two,one"), "[3 2]", nil},
		{"unary signs", fourH100, 580, set("2, +3, -0, 1"), "[2 3 0 1]", nil},
		{"blanks after commas", fourH100, 580, set("0, 1, 2"), "[0 1 2]", nil},
		{"trailing comma", fourH100, 580, set("0,1,"), "[0 1]", nil},
		{"empty first entry", fourH100, 580, set(",0"), "[]", nil},
		{"no range syntax", fourH100, 580, set("0-2"), "[0]", nil},
		{"leading zero", fourH100, 580, set("01"), "[1]", nil},
		{"+0", fourH100, 580, set("+0"), "[0]", nil},
		{"leading blank", fourH100, 580, set(" 0"), "[0]", nil},
		{"trailing blank", fourH100, 580, set("0 "), "[0]", nil},
		{"00", fourH100, 580, set("00"), "[0]", nil},
		{"0x0 reads 0 in either base", fourH100, 580, set("0x0"), "[0]", nil},
		{"0x1 depends on strtoul's base", fourH100, 580, set("0x1"), "", ErrUndetermined},
		{"010 is out of range in either base", fourH100, 580, set("010"), "[]", nil},
		{"overflow is out of range", fourH100, 580, set("99999999999999999999999,0"), "[]", nil},
		// §3 duplicates
		{"0,0 shows none", fourH100, 580, set("0,0"), "[]", nil},
		{"0,1,0 shows none", fourH100, 580, set("0,1,0"), "[]", nil},
		{"0,1,2,1 shows none", fourH100, 580, set("0,1,2,1"), "[]", nil},
		{"a repeat after an invalid entry does not count", fourH100, 580, set("0,1,2,3,-1,0"), "[0 1 2 3]", nil},
		{"0,5,0 stops before the repeat", fourH100, 580, set("0,5,0"), "[0]", nil},
		{"+0,-0 name one device twice", fourH100, 580, set("+0,-0"), "[]", nil},
		// §4 UUIDs
		{"full UUID", fourH100, 580, set(uuidC), "[2]", nil},
		{"UUID prefix", fourH100, 580, set("GPU-9e8d35e3"), "[2]", nil},
		{"short prefix", fourH100, 580, set("GPU-c"), "[3]", nil},
		{"prefix with trailing dash", fourH100, 580, set("GPU-9e8d35e3-"), "[2]", nil},
		{"UUID list keeps its order", fourH100, 580, set(uuidD + "," + uuidA), "[3 0]", nil},
		{"two prefixes of one GPU show none", fourH100, 580, set("GPU-9e8d35e3,GPU-47,GPU-9e8"), "[]", nil},
		{"unknown UUID ends the list", fourH100, 580, set("GPU-47,GPU-ffff,GPU-1f"), "[1]", nil},
		{"GPU- alone is ambiguous", fourH100, 580, set("GPU-"), "[]", nil},
		{"lowercase tag is not a UUID", fourH100, 580, set("gpu-9e8d35e3"), "[]", nil},
		{"uppercase hex does not match", fourH100, 580, set("GPU-9E8D35E3"), "[]", nil},
		{"UUID with junk after it", fourH100, 580, set(uuidC + "xyz"), "[]", nil},
		{"bare UUID is refused", fourH100, 580, set(strings.TrimPrefix(uuidA, "GPU-")), "", ErrUndetermined},
		{"blank before a UUID", fourH100, 580, set("GPU-47, GPU-9e8d"), "", ErrUndetermined},
		{"index then UUID", fourH100, 580, set("0," + uuidB), "", ErrUndetermined},
		{"UUID then index", fourH100, 580, set(uuidB + ",0"), "", ErrUndetermined},
		{"index then unknown UUID stops", fourH100, 580, set("0,GPU-ffff"), "[0]", nil},
		// §6 order
		{"PCI_BUS_ID sorts by bus ID, not NVML index", pciShuffled, 580, pci(unset()), "[1 3 2 0]", nil},
		{"PCI_BUS_ID indices count in bus order", pciShuffled, 580, pci(set("0,1")), "[1 3]", nil},
		{"identical GPUs: fastest first is bus order", pciShuffled, 580, set("0"), "[1]", nil},
		{"mixed models, unset, fastest first", mixed, 580, unset(), "", ErrOrderUndetermined},
		{"mixed models, index, fastest first", mixed, 580, set("1"), "", ErrOrderUndetermined},
		{"mixed models, PCI order", mixed, 580, pci(set("1")), "[1]", nil},
		{"mixed models, UUIDs need no order", mixed, 580, set(uuidB + "," + uuidA), "[1 0]", nil},
		{"mixed models, a repeat shows none in any order", mixed, 580, set("0,0"), "[]", nil},
		{"mixed models, nothing valid", mixed, 580, set("-1"), "[]", nil},
		{"a misspelt order is the default", mixed, 580, CUDAEnv{Visible: "0", VisibleSet: true, Order: "pci_bus_id"}, "", ErrOrderUndetermined},
		// §5 MIG
		{"R535 unset with several MIG devices", withMIG, 535, unset(), "", ErrUndetermined},
		{"R580 unset with MIG and whole GPUs", withMIG, 580, unset(), "", ErrOrderUndetermined},
		{"one MIG device only", oneMIG, 535, unset(), "[0/0]", nil},
		{"one MIG device only, R580", oneMIG, 580, unset(), "[0/0]", nil},
		{"R535: one MIG device hides whole GPUs", oneMIGAndWhole, 535, unset(), "[0/0]", nil},
		{"R580: one MIG device beside a whole GPU", oneMIGAndWhole, 580, unset(), "", ErrOrderUndetermined},
		{"MIG UUID", withMIG, 535, set(migA), "[1/0]", nil},
		{"MIG UUID prefix", withMIG, 580, set("MIG-7c"), "[1/2]", nil},
		{"ambiguous MIG prefix", withMIG, 580, set("MIG-5a"), "[]", nil},
		{"legacy MIG-GPU form", withMIG, 535, set("MIG-" + uuidB + "/1/0"), "[1/0]", nil},
		{"legacy form with a GPU prefix", withMIG, 535, set("MIG-GPU-47b2/2/0"), "[1/1]", nil},
		{"legacy form, unknown instance", withMIG, 535, set("MIG-GPU-47b2/9/9"), "[]", nil},
		{"R535: two MIG devices", withMIG, 535, set(migB + "," + migA), "", ErrUndetermined},
		{"R580: two GPU instances", withMIG, 580, set(migB + "," + migA), "[1/1 1/0]", nil},
		{"R580: two compute instances of one GPU instance", withMIG, 580, set(migB + "," + migC), "", ErrUndetermined},
		{"R535: whole GPU and MIG keeps the MIG device", withMIG, 535, set(uuidA + "," + migA), "[1/0]", nil},
		{"R580: whole GPU and MIG in list order", withMIG, 580, set(uuidA + "," + migA), "[0 1/0]", nil},
		{"unknown branch: whole GPU and MIG", withMIG, 0, set(uuidA + "," + migA), "", ErrUndetermined},
		{"unknown branch: one MIG device", withMIG, 0, set(migA), "[1/0]", nil},
		{"MIG device named twice", withMIG, 580, set(migA + ",MIG-5a5a"), "[]", nil},
		{"index with MIG on", withMIG, 580, set("0"), "", ErrUndetermined},
		{"MIG-enabled GPU named whole", withMIG, 580, set(uuidB), "", ErrUndetermined},
		{"whole GPUs only, MIG elsewhere", withMIG, 580, set(uuidA + "," + uuidC), "[0 2]", nil},
		// §5 a GPU that fell off the bus
		{"lost: unset", lostLast, 580, unset(), "", ErrGPULost},
		{"lost: indices", lostLast, 580, set("0,1"), "", ErrUndetermined},
		{"lost: empty shows none", lostLast, 580, set(""), "[]", nil},
		{"lost: -1 shows none", lostLast, 580, set("-1"), "[]", nil},
		{"lost: an index of neither count ends the list", lostLast, 580, set(uuidA + ",7,0"), "[0]", nil},
		{"lost: complete UUIDs of others", lostLast, 580, set(uuidC + "," + uuidA), "[2 0]", nil},
		{"lost with an unknown UUID: a prefix could be its", lostLast, 580, set("GPU-1f"), "", ErrUndetermined},
		{"lost with a known UUID: a prefix of another's", lostKnown, 580, set("GPU-1f"), "[0]", nil},
		{"lost with a known UUID: named", lostKnown, 580, set(uuidD), "", ErrGPULost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveCVD(tt.env, tt.gpus, tt.branch)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("resolveCVD(%s) = %s, %v; want error %v", tt.env, refsString(got), err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolveCVD(%s): %v", tt.env, err)
			}
			if s := refsString(got); s != tt.want {
				t.Errorf("resolveCVD(%s) = %s, want %s", tt.env, s, tt.want)
			}
		})
	}
}

func TestStrtoul(t *testing.T) {
	tests := []struct {
		in   string
		base int
		want uint64
		ok   bool
	}{
		{"0", 10, 0, true}, {"12ab", 10, 12, true}, {"+7", 10, 7, true}, {"-0", 10, 0, true},
		{"-1", 10, ^uint64(0), true}, {"x", 10, 0, false}, {"", 10, 0, false}, {"+", 10, 0, false},
		{"0x1f", 0, 31, true}, {"0x", 0, 0, true}, {"010", 0, 8, true}, {"08", 0, 0, true},
		{"010", 10, 10, true}, {"18446744073709551616", 10, ^uint64(0), true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q base %d", tt.in, tt.base), func(t *testing.T) {
			n, ok := strtoul(tt.in, tt.base)
			if n != tt.want || ok != tt.ok {
				t.Errorf("strtoul(%q, %d) = %d, %v; want %d, %v", tt.in, tt.base, n, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCUDAEnvOf(t *testing.T) {
	e := CUDAEnvOf([]string{"PATH=/bin", "CUDA_VISIBLE_DEVICES=1", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=", "junk"})
	if !e.VisibleSet || e.Visible != "" || e.Order != OrderPCIBusID {
		t.Errorf("CUDAEnvOf = %+v, want set-but-empty, PCI order", e)
	}
	if e := CUDAEnvOf(nil); e.VisibleSet {
		t.Errorf("CUDAEnvOf(nil) = %+v, want unset", e)
	}
}

// FuzzResolveCVD checks that any value gives a list of distinct devices of
// the machine, or a typed "undetermined" error, and never panics.
func FuzzResolveCVD(f *testing.F) {
	for _, s := range []string{"", "0", "0,1", "-1", "0,0", "GPU-1f", migA, "MIG-GPU-47b2/1/0", " 0x1", "1gpu,GPU-9", ",", "\x00"} {
		f.Add(s, false, 580)
	}
	machines := [][]cvdGPU{nil, fourH100[:1], fourH100, pciShuffled, mixed, withMIG, oneMIG, oneMIGAndWhole, lostLast, lostKnown}
	f.Fuzz(func(t *testing.T, v string, pciOrder bool, branch int) {
		env := set(v)
		if pciOrder {
			env.Order = OrderPCIBusID
		}
		for _, gpus := range machines {
			got, err := resolveCVD(env, gpus, branch)
			if err != nil {
				if !errors.Is(err, ErrUndetermined) {
					t.Fatalf("resolveCVD(%s): untyped error %v", env, err)
				}
				continue
			}
			if got == nil {
				t.Fatalf("resolveCVD(%s) = nil, want a non-nil list", env)
			}
			seen := map[cvdRef]bool{}
			for _, r := range got {
				if r.gpu < 0 || r.gpu >= len(gpus) || r.mig >= len(gpus[r.gpu].migs) {
					t.Fatalf("resolveCVD(%s) = %s: not a device of the machine", env, refsString(got))
				}
				if seen[r] {
					t.Fatalf("resolveCVD(%s) = %s: repeats a device", env, refsString(got))
				}
				seen[r] = true
			}
			if v == "" && len(got) != 0 || slices.Contains([]string{"-1", ","}, v) && len(got) != 0 {
				t.Fatalf("resolveCVD(%s) = %s, want none", env, refsString(got))
			}
		}
	})
}
