package nvgo

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// ErrUndetermined means the documented and observed rules of the CUDA
// driver do not decide which devices CUDA would use for a value of
// CUDA_VISIBLE_DEVICES on this machine (e.g. integer indices while a GPU has
// MIG on, where tools disagree). nvgo returns it rather than guess; the
// driver itself can answer through Library.CUDADevicesFromDriver.
var ErrUndetermined = errors.New("CUDA's device list cannot be determined without asking the CUDA driver")

// ErrOrderUndetermined means the set of devices is known but not their CUDA
// order: under the default CUDA_DEVICE_ORDER=FASTEST_FIRST with GPUs of
// different models (NVIDIA does not publish what "fastest" means), or
// between MIG devices and whole GPUs from driver R570. It matches
// ErrUndetermined too.
var ErrOrderUndetermined error = orderUndetermined{}

type orderUndetermined struct{}

func (orderUndetermined) Error() string {
	return "CUDA device order cannot be determined without asking the CUDA driver"
}

func (orderUndetermined) Is(target error) bool { return target == ErrUndetermined }

// CUDAEnv is what the CUDA driver reads at initialisation to choose and
// number its devices. The zero value means both variables are unset: every
// device, fastest first.
type CUDAEnv struct {
	// Visible is CUDA_VISIBLE_DEVICES; it counts only when VisibleSet is
	// true. Set and empty means no device at all.
	Visible    string
	VisibleSet bool
	// Order is CUDA_DEVICE_ORDER: "PCI_BUS_ID", or anything else (including
	// "") for the default, FASTEST_FIRST.
	Order string
}

// CUDA_DEVICE_ORDER values.
const (
	OrderFastestFirst = "FASTEST_FIRST"
	OrderPCIBusID     = "PCI_BUS_ID"
)

// VisibleDevices returns a CUDAEnv with CUDA_VISIBLE_DEVICES set to v and
// the default order.
func VisibleDevices(v string) CUDAEnv { return CUDAEnv{Visible: v, VisibleSet: true} }

// CurrentCUDAEnv reads CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER from this
// process's environment.
func CurrentCUDAEnv() CUDAEnv {
	v, set := os.LookupEnv("CUDA_VISIBLE_DEVICES")
	return CUDAEnv{Visible: v, VisibleSet: set, Order: os.Getenv("CUDA_DEVICE_ORDER")}
}

// CUDAEnvOf reads the two variables from an environment list in os.Environ
// form ("KEY=value"). Later entries win, as getenv does.
func CUDAEnvOf(environ []string) CUDAEnv {
	var e CUDAEnv
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch k {
		case "CUDA_VISIBLE_DEVICES":
			e.Visible, e.VisibleSet = v, true
		case "CUDA_DEVICE_ORDER":
			e.Order = v
		}
	}
	return e
}

// ProcessCUDAEnv reads the variables from another process's initial
// environment (/proc/<pid>/environ, under $HOST_PROC when set). Values the
// program changed after it started (os.environ in Python before importing
// torch, say) do not show there. Reading another user's process needs
// privileges (ErrNoPermission); a PID no process holds, or one that changed
// hands while it was read, gives ErrProcessGone.
func ProcessCUDAEnv(pid int) (CUDAEnv, error) {
	p, err := NewHostProcess(pid)
	if err != nil {
		return CUDAEnv{}, fmt.Errorf("nvgo: environment of %w", err)
	}
	return p.CUDAEnv()
}

// CUDAEnv reads CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER from the
// process's initial environment, as ProcessCUDAEnv does, after checking
// that the PID still holds this process.
func (p *HostProcess) CUDAEnv() (CUDAEnv, error) {
	env := p.Environ()
	if e, ok := env.Get(); ok {
		return CUDAEnvOf(e), nil
	}
	return CUDAEnv{}, fmt.Errorf("nvgo: environment of pid %d: %w", p.pid, env.Err())
}

// String renders the env as shell assignments, "unset" for an unset variable.
func (e CUDAEnv) String() string {
	v := "unset"
	if e.VisibleSet {
		v = strconv.Quote(e.Visible)
	}
	o := "unset"
	if e.Order != "" {
		o = strconv.Quote(e.Order)
	}
	return "CUDA_VISIBLE_DEVICES=" + v + " CUDA_DEVICE_ORDER=" + o
}

// The resolver below is pure: it sees the machine as cvdGPU values and
// returns positions, so the rules can be tested and fuzzed without NVML.

// cvdGPU is one physical GPU as the resolver sees it, in NVML index order.
type cvdGPU struct {
	uuid, busID, name string
	migOn             bool
	migs              []cvdMIG // in MIG index order
	lost              error    // why the GPU fell off the bus; nil when it did not
}

type cvdMIG struct {
	uuid   string
	gi, ci int
}

// cvdRef names a device: gpus[gpu], or its MIG device migs[mig] (mig >= 0).
type cvdRef struct{ gpu, mig int }

// resolveCVD maps env to the devices CUDA would enumerate, in CUDA ordinal
// order. branch is the driver's major version (570 for R570), 0 if unknown.
// A value that makes no device visible gives an empty list and no error.
func resolveCVD(env CUDAEnv, gpus []cvdGPU, branch int) ([]cvdRef, error) {
	if err := lostGPURule(env, gpus); err != nil {
		return nil, err
	}
	order, orderErr := cudaOrder(env.Order, gpus)
	if !env.VisibleSet {
		return resolveAll(gpus, order, orderErr, branch)
	}
	var refs []cvdRef
	seen := map[cvdRef]bool{}
	kind := entryNone
	for _, tok := range strings.Split(env.Visible, ",") {
		e, err := parseEntry(tok, gpus, order)
		if err != nil {
			return nil, err
		}
		if e.kind == entryInvalid {
			break
		}
		if kind == entryNone {
			kind = e.kind
		} else if e.kind != kind {
			// PyTorch and nvitop end the list at a change of kind; other
			// readers accept mixed lists. No driver run has settled it.
			return nil, fmt.Errorf("the list mixes indices and UUIDs: %w", ErrUndetermined)
		}
		if seen[e.ref] {
			// A device named twice: CUDA sees none. (For indices this holds
			// whatever the order, so it is decided before the order is.)
			return []cvdRef{}, nil
		}
		seen[e.ref] = true
		refs = append(refs, e.ref)
	}
	if kind == entryIndex && orderErr != nil {
		return nil, orderErr
	}
	if kind == entryIndex && anyMIG(gpus) {
		return nil, fmt.Errorf("indices while a GPU has MIG on (tools disagree on how CUDA numbers them): %w", ErrUndetermined)
	}
	for _, r := range refs {
		if r.mig < 0 && gpus[r.gpu].migOn {
			return nil, fmt.Errorf("GPU %d has MIG on and is named as a whole: %w", r.gpu, ErrUndetermined)
		}
	}
	return migRules(refs, gpus, branch)
}

// completeUUIDLen is the length of a whole GPU or MIG UUID ("GPU-" and 36
// characters).
const completeUUIDLen = 40

// lostGPURule decides whether CUDA's list can be known while a GPU has
// fallen off the bus. Whether CUDA still counts such a GPU is not known, so
// an unset variable and indices (which count it, or not) are undetermined,
// and so is an entry that names it, or a UUID prefix that could be its
// while its UUID is unknown. A list that names other devices by complete
// UUID is decided as usual. The error names the lost GPU.
func lostGPURule(env CUDAEnv, gpus []cvdGPU) error {
	lost, uuidKnown := -1, true
	for i := range gpus {
		if gpus[i].lost != nil {
			if lost < 0 {
				lost = i
			}
			uuidKnown = uuidKnown && gpus[i].uuid != ""
		}
	}
	if lost < 0 {
		return nil
	}
	undetermined := func(why string) error {
		return fmt.Errorf("GPU %d fell off the bus (%w) and %s: %w", lost, gpus[lost].lost, why, ErrUndetermined)
	}
	if !env.VisibleSet {
		return undetermined("whether CUDA still counts it is unknown")
	}
	for _, tok := range strings.Split(env.Visible, ",") {
		t := strings.TrimSpace(tok)
		if !strings.HasPrefix(t, "GPU-") && !strings.HasPrefix(t, "MIG-") {
			// An entry that is no index of either count ends the list.
			if n, ok := strtoul(strings.TrimLeft(tok, " \t\n\v\f\r"), 10); !ok || n >= uint64(len(gpus)) {
				return nil
			}
			return undetermined(fmt.Sprintf("whether entry %q counts it is unknown", tok))
		}
		complete := len(t) >= completeUUIDLen
		if rest, ok := strings.CutPrefix(t, "MIG-GPU-"); ok {
			gpuPart, _, _ := strings.Cut(rest, "/")
			complete = len(gpuPart) >= completeUUIDLen-len("GPU-")
		}
		if !uuidKnown && !complete {
			return undetermined(fmt.Sprintf("its UUID is unknown, so the prefix %q may be its", t))
		}
		ref, ok := lookupUUID(t, gpus)
		switch {
		case ok && gpus[ref.gpu].lost != nil:
			return undetermined(fmt.Sprintf("entry %q names it", t))
		case !ok && !uuidKnown:
			return undetermined(fmt.Sprintf("entry %q may be its UUID", t))
		case !ok:
			return nil // an unknown UUID ends the list
		}
	}
	return nil
}

// migRules applies the per-branch limits on MIG devices to a list of
// distinct devices in CUDA order.
func migRules(refs []cvdRef, gpus []cvdGPU, branch int) ([]cvdRef, error) {
	var migs []cvdRef
	for _, r := range refs {
		if r.mig >= 0 {
			migs = append(migs, r)
		}
	}
	if len(migs) == 0 {
		if refs == nil {
			refs = []cvdRef{}
		}
		return refs, nil
	}
	switch {
	case branch > 0 && branch < 570:
		// One MIG device and then no whole GPU. Which one CUDA takes of
		// several ("the first available") is not documented.
		if len(migs) == 1 {
			return migs, nil
		}
		return nil, fmt.Errorf("%d MIG devices named and drivers before R570 use one of them: %w", len(migs), ErrUndetermined)
	case branch >= 570:
		// One compute instance per GPU instance; whole GPUs stay visible.
		gis := map[[2]int]bool{}
		for _, r := range migs {
			k := [2]int{r.gpu, gpus[r.gpu].migs[r.mig].gi}
			if gis[k] {
				return nil, fmt.Errorf("two compute instances of one GPU instance named and R570 drivers use one: %w", ErrUndetermined)
			}
			gis[k] = true
		}
		if len(refs) > 64 {
			refs = refs[:64]
		}
		return refs, nil
	}
	if len(refs) == 1 {
		return refs, nil
	}
	return nil, fmt.Errorf("MIG devices named and the driver branch is unknown: %w", ErrUndetermined)
}

// resolveAll is the unset case: every device CUDA can use.
func resolveAll(gpus []cvdGPU, order []int, orderErr error, branch int) ([]cvdRef, error) {
	var whole, migs []cvdRef
	for _, g := range order {
		if !gpus[g].migOn {
			whole = append(whole, cvdRef{g, -1})
		}
	}
	for g := range gpus {
		if gpus[g].migOn {
			for m := range gpus[g].migs {
				migs = append(migs, cvdRef{g, m})
			}
		}
	}
	switch {
	case len(migs) == 0:
		if len(whole) > 1 && orderErr != nil {
			return nil, orderErr
		}
		if whole == nil {
			whole = []cvdRef{}
		}
		return whole, nil
	case len(migs) == 1 && (len(whole) == 0 || branch > 0 && branch < 570):
		return migs, nil
	case branch > 0 && branch < 570:
		return nil, fmt.Errorf("%d MIG devices and drivers before R570 use one of them: %w", len(migs), ErrUndetermined)
	}
	return nil, fmt.Errorf("MIG devices beside whole GPUs (or several MIG devices) with CUDA_VISIBLE_DEVICES unset: %w", ErrOrderUndetermined)
}

// cudaOrder returns GPU positions in CUDA's order: PCI bus ID order under
// PCI_BUS_ID (sorted here, not trusted to NVML's index order), and the same
// under FASTEST_FIRST when every GPU is the same model. Otherwise the order
// is unknown and orderErr says so.
func cudaOrder(order string, gpus []cvdGPU) (pos []int, orderErr error) {
	pos = make([]int, len(gpus))
	for i := range pos {
		pos[i] = i
	}
	slices.SortStableFunc(pos, func(a, b int) int { return cmp.Compare(gpus[a].busID, gpus[b].busID) })
	if order == OrderPCIBusID || len(gpus) < 2 {
		return pos, nil
	}
	for _, g := range gpus[1:] {
		if g.name != gpus[0].name || g.name == "" {
			return pos, fmt.Errorf("GPUs of different models under CUDA_DEVICE_ORDER=FASTEST_FIRST (set PCI_BUS_ID for a known order): %w", ErrOrderUndetermined)
		}
	}
	return pos, nil
}

func anyMIG(gpus []cvdGPU) bool {
	for _, g := range gpus {
		if g.migOn {
			return true
		}
	}
	return false
}

type entryKind uint8

const (
	entryNone entryKind = iota
	entryInvalid
	entryIndex
	entryUUID
)

type entry struct {
	kind entryKind
	ref  cvdRef
}

// parseEntry reads one comma-separated entry. An entry CUDA would reject is
// entryInvalid (the list ends there); an entry whose meaning the rules do
// not settle is an error.
func parseEntry(tok string, gpus []cvdGPU, order []int) (entry, error) {
	trimmed := strings.TrimLeft(tok, " \t\n\v\f\r")
	if strings.HasPrefix(tok, "GPU-") || strings.HasPrefix(tok, "MIG-") {
		ref, ok := lookupUUID(tok, gpus)
		if !ok {
			return entry{kind: entryInvalid}, nil
		}
		return entry{entryUUID, ref}, nil
	}
	if trimmed != tok && (strings.HasPrefix(trimmed, "GPU-") || strings.HasPrefix(trimmed, "MIG-")) {
		if _, ok := lookupUUID(trimmed, gpus); ok {
			return entry{}, fmt.Errorf("entry %q has blanks before a UUID: %w", tok, ErrUndetermined)
		}
		return entry{kind: entryInvalid}, nil
	}
	if bareUUID(strings.TrimSpace(trimmed), gpus) {
		return entry{}, fmt.Errorf("entry %q is a UUID without its GPU- prefix, which CUDA reads as an index: %w", tok, ErrUndetermined)
	}
	// strtoul: base 10 is what every reimplementation assumes; whether the
	// driver passes base 0 (0x…, leading-zero octal) is unverified, so an
	// entry the two bases read differently is undetermined.
	n10, ok10 := strtoul(trimmed, 10)
	n0, ok0 := strtoul(trimmed, 0)
	valid10 := ok10 && n10 < uint64(len(order))
	valid0 := ok0 && n0 < uint64(len(order))
	if valid10 != valid0 || valid10 && n10 != n0 {
		return entry{}, fmt.Errorf("entry %q reads differently in base 10 and as C's base 0: %w", tok, ErrUndetermined)
	}
	if !valid10 {
		return entry{kind: entryInvalid}, nil
	}
	return entry{entryIndex, cvdRef{order[n10], -1}}, nil
}

// strtoul reads s as C's strtoul does after leading blanks (already
// stripped): one optional sign, then digits in base (10, or 0 for C's
// prefix rules), stopping at the first other character. ok is false when no
// digit was read. A negative value wraps, as in C, and saturates to the
// maximum, as C does on overflow.
func strtoul(s string, base int) (n uint64, ok bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if base == 0 {
		switch {
		case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hexDigit(s[2]) >= 0:
			base, s = 16, s[2:]
		case len(s) > 1 && s[0] == '0':
			base = 8
		default:
			base = 10
		}
	}
	const max = ^uint64(0)
	overflow := false
	i := 0
	for ; i < len(s); i++ {
		d := hexDigit(s[i])
		if d < 0 || d >= base {
			break
		}
		if n > (max-uint64(d))/uint64(base) {
			overflow = true
		}
		n = n*uint64(base) + uint64(d)
	}
	if i == 0 {
		return 0, false
	}
	if overflow {
		return max, true
	}
	if neg {
		n = -n
	}
	return n, true
}

func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// bareUUID reports whether s looks like a known UUID without its "GPU-" or
// "MIG-" tag (at least eight characters with a letter or dash in them).
func bareUUID(s string, gpus []cvdGPU) bool {
	if len(s) < 8 || strings.Trim(s, "0123456789") == "" {
		return false
	}
	for _, g := range gpus {
		if strings.HasPrefix(strings.TrimPrefix(g.uuid, "GPU-"), s) {
			return true
		}
		for _, m := range g.migs {
			if strings.HasPrefix(strings.TrimPrefix(m.uuid, "MIG-"), s) {
				return true
			}
		}
	}
	return false
}

// lookupUUID resolves a "GPU-…" prefix, a "MIG-…" prefix or the pre-R470
// "MIG-GPU-<uuid>/<gi>/<ci>" form; ok is false when CUDA would reject it.
func lookupUUID(s string, gpus []cvdGPU) (cvdRef, bool) {
	if rest, ok := strings.CutPrefix(s, "MIG-GPU-"); ok && strings.Contains(rest, "/") {
		prefix, gi, ci, ok := parseLegacyMIG(rest)
		if !ok {
			return cvdRef{}, false
		}
		g, ok := lookupGPU("GPU-"+prefix, gpus)
		if !ok {
			return cvdRef{}, false
		}
		for m, mig := range gpus[g].migs {
			if mig.gi == gi && mig.ci == ci {
				return cvdRef{g, m}, true
			}
		}
		return cvdRef{}, false
	}
	if strings.HasPrefix(s, "MIG-") {
		var uuids []string
		var refs []cvdRef
		for g := range gpus {
			for m := range gpus[g].migs {
				uuids = append(uuids, gpus[g].migs[m].uuid)
				refs = append(refs, cvdRef{g, m})
			}
		}
		i, err := matchUUIDPrefix(s, uuids)
		if err != nil {
			return cvdRef{}, false
		}
		return refs[i], true
	}
	g, ok := lookupGPU(s, gpus)
	return cvdRef{g, -1}, ok
}

func lookupGPU(s string, gpus []cvdGPU) (int, bool) {
	uuids := make([]string, len(gpus))
	for i, g := range gpus {
		uuids[i] = g.uuid
	}
	i, err := matchUUIDPrefix(s, uuids)
	return i, err == nil
}

// matchUUIDPrefix returns the position in uuids of the one UUID that is
// prefix or starts with it, by CUDA's rule for CUDA_VISIBLE_DEVICES: the
// "GPU-" (or "MIG-") prefix is part of the match and comparison is
// case-sensitive. An exact match wins over longer matches.
func matchUUIDPrefix(prefix string, uuids []string) (int, error) {
	p := strings.TrimSpace(prefix)
	if !strings.HasPrefix(p, "GPU-") && !strings.HasPrefix(p, "MIG-") || len(p) == 4 {
		return -1, fmt.Errorf("nvgo: %q is not a GPU UUID (want \"GPU-\" and at least one hex digit): %w", prefix, ErrNotFound)
	}
	found := -1
	for i, u := range uuids {
		if u == p {
			return i, nil
		}
		if strings.HasPrefix(u, p) {
			if found >= 0 {
				return -1, fmt.Errorf("nvgo: UUID prefix %q matches %s and %s: %w", prefix, uuids[found], u, ErrAmbiguous)
			}
			found = i
		}
	}
	if found < 0 {
		return -1, fmt.Errorf("nvgo: no GPU with UUID %q: %w", prefix, ErrNotFound)
	}
	return found, nil
}

// parseLegacyMIG splits "<gpu>/<gi>/<ci>".
func parseLegacyMIG(s string) (gpu string, gi, ci int, ok bool) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[0] == "" {
		return "", 0, 0, false
	}
	g, err1 := strconv.ParseUint(parts[1], 10, 31)
	c, err2 := strconv.ParseUint(parts[2], 10, 31)
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return parts[0], int(g), int(c), true
}
