//go:build cgo

package fakegpu

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// GPU is the control panel of one fake GPU: its setters change what the
// nvml.Device handle of the same index reports from then on. Percentages
// above 100 are clamped to 100. A GPU is safe for concurrent use.
type GPU struct {
	f     *Fleet
	index int
	spec  GPUSpec // resolved; fixed after New
	bus   busID
	dev   *device

	// Everything below is guarded by f.mu.
	gpuUtil, memUtil uint32
	utilSamples      []utilSample // newest last
	encUtil, decUtil uint32
	memUsed          uint64 // allocated bytes, excluding reserved
	memUsedSet       bool
	bar1Used         uint64
	temp             uint32
	power, limit     uint32 // mW
	clocks           Clocks
	maxClocks        Clocks
	fan              uint32
	pstate           nvml.Pstates
	migCur, migPend  int
	computeMode      nvml.ComputeMode
	persistence      bool
	displayActive    bool
	displayMode      bool
	ecc              uint64
	pcieTx, pcieRx   uint32 // KB/s
	pcieTxB, pcieRxB uint64 // byte counters
	nvLinks          int
	nvTx, nvRx       uint64 // KiB, all links
	energy           uint64 // mJ
	unsupported      map[string]bool
	fails            map[string]nvml.Return
	lost             bool
	procs            []*proc // on the GPU and on its MIG devices
	migs             [maxMigDevices]*MIG
	migGen           [maxMigDevices]int // MIG devices created per slot so far
	accounting       bool
	acct             []*acctRecord // accounting records, oldest first
	vgpuHost         bool
	vgpus            []*Vgpu // live vGPU instances, in creation order
	vgpuGen          int     // vGPU instances created so far
}

// newGPU returns an idle GPU for a resolved spec.
func newGPU(f *Fleet, index int, spec GPUSpec) *GPU {
	bus, _ := parseBusID(spec.BusID) // resolve made it valid
	g := &GPU{
		f:           f,
		index:       index,
		spec:        spec,
		bus:         bus,
		bar1Used:    2 * MiB,
		temp:        30,
		power:       spec.IdlePower,
		limit:       spec.PowerLimit,
		clocks:      Clocks{Graphics: 345, SM: 345, Memory: spec.MaxClocks.Memory, Video: 765},
		maxClocks:   spec.MaxClocks,
		pstate:      nvml.PSTATE_0,
		computeMode: nvml.COMPUTEMODE_DEFAULT,
		persistence: true,
		nvLinks:     spec.NVLinks,
		unsupported: make(map[string]bool),
		fails:       make(map[string]nvml.Return),
		accounting:  spec.Accounting,
		vgpuHost:    spec.VgpuHost,
	}
	if !spec.HasFan {
		for _, m := range metricMethods["fan_speed"] {
			g.unsupported[m] = true
		}
	}
	if spec.MIGEnabled {
		g.migCur, g.migPend = nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE
	}
	g.dev = &device{g: g}
	for _, ms := range spec.MIGDevices {
		// resolve made the layout valid: this cannot fail.
		g.addMIGLocked(ms)
	}
	for _, vs := range spec.Vgpus {
		// resolve made the instances valid and build unique in the
		// fleet: this cannot fail.
		g.addVgpuLocked(vs)
	}
	return g
}

// Index returns the GPU's NVML index.
func (g *GPU) Index() int { return g.index }

// UUID returns the GPU's UUID, e.g. "GPU-5f3c…".
func (g *GPU) UUID() string { return g.spec.UUID }

// BusID returns the GPU's PCI bus ID as NVML formats it, e.g.
// "00000000:18:00.0".
func (g *GPU) BusID() string { return g.spec.BusID }

// Name returns the GPU's product name, e.g. "NVIDIA H100 80GB HBM3".
func (g *GPU) Name() string { return g.spec.Name }

// Serial returns the GPU's board serial number.
func (g *GPU) Serial() string { return g.spec.Serial }

// Spec returns the GPU's identity with every default filled in, and the
// MIG layout and vGPU instances it started with, resolved (see MIGDevices
// and Vgpus for the current ones).
func (g *GPU) Spec() GPUSpec {
	s := g.spec
	s.MIGDevices = cloneMIGSpecs(s.MIGDevices)
	s.Vgpus = cloneVgpuSpecs(s.Vgpus)
	return s
}

// Device returns the nvml.Device handle of this GPU, the one
// DeviceGetHandleByIndex returns.
func (g *GPU) Device() nvml.Device { return g.dev }

// update runs fn with the fleet locked.
func (g *GPU) update(fn func()) {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	fn()
}

func pct(v uint32) uint32 { return min(v, 100) }

// SetUtilization sets the GPU and memory utilization in percent
// (GetUtilizationRates).
func (g *GPU) SetUtilization(gpu, mem uint32) {
	g.update(func() {
		g.gpuUtil, g.memUtil = pct(gpu), pct(mem)
		g.recordUtilLocked()
	})
}

// SetEncoderDecoder sets the encoder and decoder utilization in percent.
func (g *GPU) SetEncoderDecoder(enc, dec uint32) {
	g.update(func() { g.encUtil, g.decUtil = pct(enc), pct(dec) })
}

// SetMemoryUsed sets the allocated framebuffer memory in bytes, not
// counting the driver-reserved part: GetMemoryInfo_v2 reports it as Used
// and GetMemoryInfo as Used minus reserved. Until it is called, allocated
// memory is the sum of the processes' memory. It is capped at total minus
// reserved.
func (g *GPU) SetMemoryUsed(bytes uint64) {
	g.update(func() { g.memUsed, g.memUsedSet = bytes, true })
}

// SetBAR1Used sets the used BAR1 memory in bytes (capped at the total).
func (g *GPU) SetBAR1Used(bytes uint64) {
	g.update(func() { g.bar1Used = min(bytes, g.spec.BAR1Total) })
}

// SetTemperature sets the GPU core temperature in °C.
func (g *GPU) SetTemperature(c uint32) {
	g.update(func() { g.temp = c })
}

// SetPower sets the power draw and the power limit in milliwatts. A zero
// limit keeps the current one.
func (g *GPU) SetPower(mW, limitmW uint32) {
	g.update(func() {
		g.power = mW
		if limitmW != 0 {
			g.limit = limitmW
		}
	})
}

// SetClocks sets the current clocks in MHz.
func (g *GPU) SetClocks(graphics, sm, mem, video uint32) {
	g.update(func() { g.clocks = Clocks{Graphics: graphics, SM: sm, Memory: mem, Video: video} })
}

// SetMaxClocks sets the maximum clocks in MHz.
func (g *GPU) SetMaxClocks(graphics, sm, mem, video uint32) {
	g.update(func() { g.maxClocks = Clocks{Graphics: graphics, SM: sm, Memory: mem, Video: video} })
}

// SetFanSpeed sets the fan speed in percent. It does not give a fanless
// board a fan: call Supported("fan_speed") for that.
func (g *GPU) SetFanSpeed(percent uint32) {
	g.update(func() { g.fan = pct(percent) })
}

// SetPState sets the performance state, 0 (P0, fastest) to 15; other
// values report PSTATE_UNKNOWN.
func (g *GPU) SetPState(p int) {
	g.update(func() {
		if p < 0 || p > 15 {
			g.pstate = nvml.PSTATE_UNKNOWN
			return
		}
		g.pstate = nvml.Pstates(p)
	})
}

// SetMIGMode sets the current and pending MIG mode (0 disabled, 1 enabled;
// other values count as 1). With MIG enabled, GetUtilizationRates and
// GetProcessUtilization answer NOT_SUPPORTED, as on real GPUs, process
// lists carry the processes' GPU and compute instance IDs, and
// GetMaxMigDeviceCount reports 7. Disabling MIG removes the GPU's MIG
// devices (see RemoveMIGDevice).
func (g *GPU) SetMIGMode(current, pending int) {
	g.update(func() {
		g.migCur, g.migPend = min(max(current, 0), 1), min(max(pending, 0), 1)
		if g.migCur == nvml.DEVICE_MIG_DISABLE {
			for _, m := range g.migs {
				if m != nil {
					g.removeMIGLocked(m)
				}
			}
		}
	})
}

// SetComputeMode sets the compute mode.
func (g *GPU) SetComputeMode(m nvml.ComputeMode) {
	g.update(func() { g.computeMode = m })
}

// SetPersistence sets persistence mode (on by default).
func (g *GPU) SetPersistence(on bool) {
	g.update(func() { g.persistence = on })
}

// SetDisplay sets whether a display is active and whether display mode is
// enabled (both off by default).
func (g *GPU) SetDisplay(active, mode bool) {
	g.update(func() { g.displayActive, g.displayMode = active, mode })
}

// SetECCErrors sets the number of uncorrected ECC errors, volatile and
// aggregate (GetTotalEccErrors, FI_DEV_ECC_DBE_VOL_TOTAL).
func (g *GPU) SetECCErrors(n uint64) {
	g.update(func() { g.ecc = n })
}

// SetPCIe sets the PCIe throughput in KB/s (GetPcieThroughput). Advance
// grows the byte counters FI_DEV_PCIE_COUNT_TX/RX_BYTES accordingly.
func (g *GPU) SetPCIe(txKBps, rxKBps uint32) {
	g.update(func() { g.pcieTx, g.pcieRx = txKBps, rxKBps })
}

// SetNVLink sets the number of NVLink links (0: none, so NVLink queries
// answer NOT_SUPPORTED) and the NVLink data throughput counters in KiB,
// summed over all links (FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX with ScopeId
// 0xFFFFFFFF); each link reports an equal share.
func (g *GPU) SetNVLink(links int, txKiB, rxKiB uint64) {
	g.update(func() {
		g.nvLinks = min(max(links, 0), nvml.NVLINK_MAX_LINKS)
		g.nvTx, g.nvRx = txKiB, rxKiB
	})
}

// Unsupported makes nvml.Device methods answer ERROR_NOT_SUPPORTED, and
// the field values behind them too. Each name is a metric name (see
// MetricNames, e.g. "fan_speed") or a Device method name (e.g.
// "GetFanSpeed"); an unknown name is recorded as a violation.
func (g *GPU) Unsupported(names ...string) {
	g.update(func() {
		for _, m := range g.methodsLocked("Unsupported", names) {
			g.unsupported[m] = true
		}
	})
}

// Supported undoes Unsupported (and the fan of a fanless model).
func (g *GPU) Supported(names ...string) {
	g.update(func() {
		for _, m := range g.methodsLocked("Supported", names) {
			delete(g.unsupported, m)
		}
	})
}

// Fail makes the nvml.Device methods behind name (a metric or method name,
// as for Unsupported) return ret, and the field values behind them carry
// ret. nvml.SUCCESS is the same as ClearFail.
func (g *GPU) Fail(name string, ret nvml.Return) {
	g.update(func() {
		for _, m := range g.methodsLocked("Fail", []string{name}) {
			if ret == nvml.SUCCESS {
				delete(g.fails, m)
			} else {
				g.fails[m] = ret
			}
		}
	})
}

// ClearFail undoes Fail.
func (g *GPU) ClearFail(name string) {
	g.update(func() {
		for _, m := range g.methodsLocked("ClearFail", []string{name}) {
			delete(g.fails, m)
		}
	})
}

// methodsLocked resolves metric and method names, recording unknown ones
// as violations.
func (g *GPU) methodsLocked(op string, names []string) []string {
	var out []string
	for _, n := range names {
		ms, ok := resolveDeviceMethods(n)
		if !ok {
			g.f.violateLocked(fmt.Sprintf("fakegpu: GPU(%d).%s: no nvml.Device method or metric named %q", g.index, op, n))
			continue
		}
		out = append(out, ms...)
	}
	return out
}

// Lose makes the GPU fall off the bus: from now on every method of its
// nvml.Device answers ERROR_GPU_IS_LOST, and the DeviceGetHandleBy…
// functions return its handle with ERROR_GPU_IS_LOST. It stays counted by
// DeviceGetCount.
func (g *GPU) Lose() {
	g.update(func() { g.lost = true })
}

// allocatedLocked is the allocated memory in bytes, excluding reserved:
// the memory of the processes on the GPU itself plus what its MIG devices
// use and the framebuffers of its vGPU instances.
func (g *GPU) allocatedLocked() uint64 {
	avail := g.spec.MemoryTotal - g.spec.MemoryReserved
	if g.memUsedSet {
		return min(g.memUsed, avail)
	}
	var sum uint64
	for _, p := range g.procs {
		if p.mig == nil {
			sum = addSat(sum, procMemory(p))
		}
	}
	for _, m := range g.migs {
		if m != nil {
			sum = addSat(sum, m.usedLocked())
		}
	}
	sum = addSat(sum, g.vgpuFramebufferLocked())
	return min(sum, avail)
}

// procMemory is the memory a process counts for in sums.
func procMemory(p *proc) uint64 {
	if p.UsedMemory == NotAvailable {
		return 0
	}
	return p.UsedMemory
}

// advanceLocked moves this GPU's counters and samples d forward; the
// fleet's clock has already moved.
func (g *GPU) advanceLocked(d time.Duration) {
	g.energy = addSat(g.energy, mulDiv(uint64(g.power), uint64(d), uint64(time.Second)))
	g.pcieTxB = addSat(g.pcieTxB, mulDiv(uint64(g.pcieTx)*1024, uint64(d), uint64(time.Second)))
	g.pcieRxB = addSat(g.pcieRxB, mulDiv(uint64(g.pcieRx)*1024, uint64(d), uint64(time.Second)))
	ts := g.f.nowMicrosLocked()
	g.recordUtilLocked()
	for _, p := range g.procs {
		if p.busy() {
			p.sampleAt(ts)
		}
		g.observeLocked(p)
	}
	for _, v := range g.vgpus {
		v.advanceLocked(ts)
	}
}

// mulDiv returns a*b/c, saturating at the largest uint64.
func mulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return ^uint64(0)
	}
	q, _ := bits.Div64(hi, lo, c)
	return q
}

// addSat returns a+b, saturating at the largest uint64.
func addSat(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return ^uint64(0)
	}
	return s
}
