package main

import (
	"context"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// meanNote ends the help of the utilization families the accumulator
// averages: what the figure is.
const meanNote = " Mean over the time since the previous scrape, from the driver's sample buffers (not one instantaneous reading)."

// dcgmNames are dcgm-exporter's names of nvgo's device metrics (its
// etc/default-counters.csv and DCGM's field list); every other reading is
// left out of the metrics (the node page and its JSON have them all).
var dcgmNames = map[string]string{
	"gpu_utilization":                       "DCGM_FI_DEV_GPU_UTIL",
	"memory_utilization":                    "DCGM_FI_DEV_MEM_COPY_UTIL",
	"encoder_utilization":                   "DCGM_FI_DEV_ENC_UTIL",
	"decoder_utilization":                   "DCGM_FI_DEV_DEC_UTIL",
	"memory_free":                           "DCGM_FI_DEV_FB_FREE",
	"memory_used":                           "DCGM_FI_DEV_FB_USED",
	"memory_reserved":                       "DCGM_FI_DEV_FB_RESERVED",
	"temperature":                           "DCGM_FI_DEV_GPU_TEMP",
	"memory_temperature":                    "DCGM_FI_DEV_MEMORY_TEMP",
	"fan_speed":                             "DCGM_FI_DEV_FAN_SPEED",
	"power_usage":                           "DCGM_FI_DEV_POWER_USAGE",
	"power_limit":                           "DCGM_FI_DEV_POWER_MGMT_LIMIT",
	"default_power_limit":                   "DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF",
	"total_energy_consumption":              "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
	"sm_clock":                              "DCGM_FI_DEV_SM_CLOCK",
	"memory_clock":                          "DCGM_FI_DEV_MEM_CLOCK",
	"pcie_tx_throughput":                    "DCGM_FI_PROF_PCIE_TX_BYTES",
	"pcie_rx_throughput":                    "DCGM_FI_PROF_PCIE_RX_BYTES",
	"nvlink_tx_throughput":                  "DCGM_FI_PROF_NVLINK_TX_BYTES",
	"nvlink_rx_throughput":                  "DCGM_FI_PROF_NVLINK_RX_BYTES",
	"total_volatile_uncorrected_ecc_errors": "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
}

// dcgmUnit is the unit dcgm-exporter serves a reading of unit u in, and
// the factor from u to it: frame-buffer sizes in MiB, power in W, rates in
// B/s.
func dcgmUnit(u nvgo.Unit) (string, float64) {
	switch u {
	case nvgo.UnitBytes:
		return "MiB", 1.0 / (1 << 20)
	case nvgo.UnitMilliWatts:
		return "W", 1.0 / 1000
	case nvgo.UnitKiBPerSecond:
		return "B/s", 1024
	}
	return string(u), 1
}

// family is one metric family the exporter serves per GPU (and per MIG
// device where the driver has the reading): a reading of the node view
// under its dcgm-exporter name.
type family struct {
	desc   *prometheus.Desc
	kind   prometheus.ValueType
	metric string  // the nvgo metric's name, its key in gpuView.Metrics
	scale  float64 // from the metric's unit to the family's
}

// collector serves a node's metrics: dcgm-exporter's families under their
// names, units and labels, and nvgo's own. It reads the node at every
// scrape; a value that is N/A on a device is left out (no sample), never 0.
type collector struct {
	r      *reader
	scrape cursor
	// perProcess is --per-process; maxProcesses its cap on series.
	perProcess   bool
	maxProcesses int
	timeout      time.Duration

	families                               []family
	up, duration, info, processes, free    *prometheus.Desc
	userProcs, userMem, userSince          *prometheus.Desc
	procMem, procSM, procLimit, procDroppd *prometheus.Desc

	// Label names of each kind of series, as the descriptions have them.
	dcgmNames, nvgoNames, infoNames, userNames, procNames, hostNames []string
	labels                                                           labelCache
}

// dcgmLabels are dcgm-exporter's labels of a device series, in order; the
// host label is "hostname" or, with --hostname-label Hostname, the older
// spelling.
func dcgmLabels(hostLabel string) []string {
	return []string{"gpu", "UUID", "pci_bus_id", "device", "modelName", hostLabel, "GPU_I_PROFILE", "GPU_I_ID"}
}

// nvgoLabels are the labels of the nvgo families' device series: the same
// less modelName, which Prometheus's naming rules (snake_case) refuse; the
// model is nvgo_gpu_info's model_name, joined on UUID.
func nvgoLabels(hostLabel string) []string {
	return slices.Delete(dcgmLabels(hostLabel), 4, 5)
}

// deviceLabels are the values of dcgmLabels for a device.
func deviceLabels(g *gpuView, host, profile, instance string) []string {
	return []string{strconv.Itoa(g.Index), g.UUID, g.BusID, g.DeviceFile, g.Name, host, profile, instance}
}

// nvgoValues are the values of nvgoLabels from those of dcgmLabels.
func nvgoValues(dcgm []string) []string {
	return slices.Delete(slices.Clone(dcgm), 4, 5)
}

// newCollector describes every family once.
func newCollector(r *reader, hostLabel string, perProcess bool, maxProcesses int) *collector {
	labels := dcgmLabels(hostLabel)
	c := &collector{r: r, perProcess: perProcess, maxProcesses: maxProcesses, timeout: 10 * time.Second}
	for _, m := range nvgo.DeviceMetrics() {
		name, ok := dcgmNames[m.Name]
		if !ok {
			continue
		}
		unit, scale := dcgmUnit(m.Unit)
		help := strings.TrimSuffix(m.Help, ".")
		if unit != "" {
			help += " (in " + unit + ")"
		}
		help += "."
		if m.Name == "gpu_utilization" || m.Name == "memory_utilization" {
			help += meanNote
		}
		kind := prometheus.GaugeValue
		if m.Kind == nvgo.KindCounter {
			kind = prometheus.CounterValue
		}
		c.families = append(c.families, family{prometheus.NewDesc(name, help, labels, nil), kind, m.Name, scale})
	}

	host := []string{hostLabel}
	c.dcgmNames = labels
	labels = nvgoLabels(hostLabel)
	c.up = prometheus.NewDesc("nvgo_up", "1 when the exporter read the NVIDIA driver at this scrape, 0 when it could not.", host, nil)
	c.duration = prometheus.NewDesc("nvgo_scrape_duration_seconds", "How long this scrape took to read the driver and the host's processes.", host, nil)
	c.info = prometheus.NewDesc("nvgo_gpu_info", "Always 1: the GPU's model, driver version, CUDA driver version and MIG mode as labels.",
		append(labels[:len(labels):len(labels)], "model_name", "driver_version", "cuda_version", "mig_mode"), nil)
	c.processes = prometheus.NewDesc("nvgo_gpu_processes", "Processes on the GPU (with MIG, on the GPU and every MIG device); whether it is free is nvgo_gpu_free (a GPU with MIG on and no MIG devices has none and is not free).", labels, nil)
	c.free = prometheus.NewDesc("nvgo_gpu_free", "1 when nobody uses the GPU or MIG device and work can run on it, else 0: nvgo's one definition of free (a GPU with MIG on needs MIG devices, all free). No sample when it cannot be told.", labels, nil)
	user := append(labels[:len(labels):len(labels)], "user")
	c.userProcs = prometheus.NewDesc("nvgo_gpu_user_processes", "Processes of the user on the GPU.", user, nil)
	c.userMem = prometheus.NewDesc("nvgo_gpu_user_memory_used_bytes", "GPU memory used by the user's processes on the GPU (the part the driver reports).", user, nil)
	c.userSince = prometheus.NewDesc("nvgo_gpu_user_start_time_seconds", "Unix time at which the user's oldest process on the GPU started.", user, nil)
	proc := append(labels[:len(labels):len(labels)], "pid", "user", "command")
	c.procMem = prometheus.NewDesc("nvgo_process_gpu_memory_used_bytes", "GPU memory used by the process (--per-process).", proc, nil)
	c.procSM = prometheus.NewDesc("nvgo_process_sm_utilization_ratio", "The process's share of SM time (0 to 1) (--per-process)."+meanNote, proc, nil)
	c.procLimit = prometheus.NewDesc("nvgo_process_series_limit", "Most processes served per scrape (--per-process-max).", host, nil)
	c.procDroppd = prometheus.NewDesc("nvgo_process_series_dropped", "Processes left out of this scrape by --per-process-max.", host, nil)
	c.nvgoNames, c.userNames, c.procNames, c.hostNames = labels, user, proc, host
	c.infoNames = append(labels[:len(labels):len(labels)], "model_name", "driver_version", "cuda_version", "mig_mode")
	return c
}

// Describe sends every family's description.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.families {
		ch <- f.desc
	}
	for _, d := range []*prometheus.Desc{c.up, c.duration, c.info, c.processes, c.free, c.userProcs, c.userMem, c.userSince} {
		ch <- d
	}
	if c.perProcess {
		for _, d := range []*prometheus.Desc{c.procMem, c.procSM, c.procLimit, c.procDroppd} {
			ch <- d
		}
	}
}

// Collect reads the node and sends its series.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	v := c.r.read(ctx, &c.scrape)
	c.labels.begin()
	e := emitter{c: c, ch: ch}
	e.emit(&v)
	c.labels.end()
}

// emitter sends one scrape's series: samples of its own type, written from
// label pairs kept between scrapes (client_golang's const metrics built
// every series's label pairs afresh, a third of a scrape's allocations),
// allocated in blocks.
type emitter struct {
	c     *collector
	ch    chan<- prometheus.Metric
	block []sample
}

// send sends one sample of desc with the label pairs of names = values.
func (e *emitter) send(desc *prometheus.Desc, kind prometheus.ValueType, value float64, pairs []*dto.LabelPair) {
	if len(e.block) == cap(e.block) {
		e.block = make([]sample, 0, 64)
	}
	e.block = append(e.block, sample{desc: desc, kind: kind, value: value, labels: pairs})
	e.ch <- &e.block[len(e.block)-1]
}

// sample is one series's value at this scrape (a prometheus.Metric).
type sample struct {
	desc   *prometheus.Desc
	kind   prometheus.ValueType
	value  float64
	labels []*dto.LabelPair // sorted by name; shared, never changed
}

// Desc returns the family's description.
func (s *sample) Desc() *prometheus.Desc { return s.desc }

// Write writes the sample as client_golang's const metrics do.
func (s *sample) Write(out *dto.Metric) error {
	out.Label = s.labels
	if s.kind == prometheus.CounterValue {
		out.Counter = &dto.Counter{Value: &s.value}
	} else {
		out.Gauge = &dto.Gauge{Value: &s.value}
	}
	return nil
}

// labelCache keeps the sorted label pairs of each label set between
// scrapes: a device's labels stay the same from one scrape to the next.
// A set not used in the last two scrapes is dropped, so processes and
// users that left do not accumulate. The pairs handed out are never
// changed (client_golang's contract for a written metric's labels).
type labelCache struct {
	mu   sync.Mutex
	gen  uint64
	sets map[string]*labelSet
	key  []byte
}

type labelSet struct {
	pairs []*dto.LabelPair
	used  uint64
}

// begin starts a scrape.
func (c *labelCache) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
}

// end drops the sets the last two scrapes did not use.
func (c *labelCache) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, set := range c.sets {
		if set.used+1 < c.gen {
			delete(c.sets, k)
		}
	}
}

// pairs returns the label pairs of names = values, sorted by name.
func (c *labelCache) pairs(names, values []string) []*dto.LabelPair {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.key = c.key[:0] // each name and value after its length: no two sets share a key
	for i := range names {
		c.key = append(binary.AppendUvarint(c.key, uint64(len(names[i]))), names[i]...)
		c.key = append(binary.AppendUvarint(c.key, uint64(len(values[i]))), values[i]...)
	}
	if set, ok := c.sets[string(c.key)]; ok {
		set.used = c.gen
		return set.pairs
	}
	pairs := make([]*dto.LabelPair, len(names))
	for i := range names {
		name, value := names[i], values[i] // the pairs own their strings
		pairs[i] = &dto.LabelPair{Name: &name, Value: &value}
	}
	slices.SortFunc(pairs, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	if c.sets == nil {
		c.sets = map[string]*labelSet{}
	}
	c.sets[string(c.key)] = &labelSet{pairs: pairs, used: c.gen}
	return pairs
}

// emit sends the series of v.
func (e *emitter) emit(v *nodeView) {
	c := e.c
	host := v.Hostname
	up := 1.0
	if v.Err != "" {
		up = 0
	}
	hostPairs := c.labels.pairs(c.hostNames, []string{host})
	gauge := prometheus.GaugeValue
	e.send(c.up, gauge, up, hostPairs)
	e.send(c.duration, gauge, v.Duration.Seconds(), hostPairs)
	served, dropped := 0, 0
	for i := range v.GPUs {
		g := &v.GPUs[i]
		if g.Err != "" {
			continue // a lost GPU has no sample; nvgo_gpu_info leaves it out too
		}
		dcgm := deviceLabels(g, host, "", "")
		e.emitDevice(g, dcgm)
		labels := nvgoValues(dcgm)
		e.send(c.info, gauge, 1, c.labels.pairs(c.infoNames, append(labels[:len(labels):len(labels)], g.Name, v.Driver, v.CUDA, g.MIGMode)))
		n := len(g.Processes)
		for j := range g.MIGs {
			n += len(g.MIGs[j].Processes)
		}
		if g.ProcessesErr == "" {
			e.send(c.processes, gauge, float64(n), c.labels.pairs(c.nvgoNames, labels))
		}
		e.sendFree(g, labels)
		s, d := e.emitProcesses(g, labels, served)
		served, dropped = served+s, dropped+d
		for j := range g.MIGs {
			m := &g.MIGs[j]
			// dcgm-exporter's MIG series: the parent's gpu, UUID and bus
			// ID, told apart by the GPU instance.
			instance := ""
			if m.GPUInstanceID != nil {
				instance = strconv.Itoa(*m.GPUInstanceID)
			}
			mdcgm := deviceLabels(g, host, m.MIGProfile, instance)
			e.emitDevice(m, mdcgm)
			ml := nvgoValues(mdcgm)
			if m.ProcessesErr == "" {
				e.send(c.processes, gauge, float64(len(m.Processes)), c.labels.pairs(c.nvgoNames, ml))
			}
			e.sendFree(m, ml)
			s, d := e.emitProcesses(m, ml, served)
			served, dropped = served+s, dropped+d
		}
	}
	if c.perProcess {
		e.send(c.procLimit, gauge, float64(c.maxProcesses), hostPairs)
		e.send(c.procDroppd, gauge, float64(dropped), hostPairs)
	}
}

// sendFree sends nvgo_gpu_free of a device with the nvgo labels' values,
// or nothing when whether it is free is N/A.
func (e *emitter) sendFree(g *gpuView, labels []string) {
	if g.Free == nil {
		return
	}
	x := 0.0
	if *g.Free {
		x = 1
	}
	e.send(e.c.free, prometheus.GaugeValue, x, e.c.labels.pairs(e.c.nvgoNames, labels))
}

// emitDevice sends the dcgm-exporter families of one device.
func (e *emitter) emitDevice(g *gpuView, labels []string) {
	pairs := e.c.labels.pairs(e.c.dcgmNames, labels)
	for _, f := range e.c.families {
		if x, ok := g.Metrics[f.metric]; ok {
			e.send(f.desc, f.kind, x*f.scale, pairs)
		}
	}
}

// emitProcesses sends one device's per-user series and, with --per-process,
// its per-process series while fewer than the cap are served (served so
// far); it returns how many it served and left out.
func (e *emitter) emitProcesses(g *gpuView, labels []string, served int) (int, int) {
	c, gauge := e.c, prometheus.GaugeValue
	for _, u := range g.Users {
		ul := c.labels.pairs(c.userNames, append(labels[:len(labels):len(labels)], u.User))
		e.send(c.userProcs, gauge, float64(u.Processes), ul)
		e.send(c.userMem, gauge, u.MemMiB*(1<<20), ul)
		if u.Since != nil {
			e.send(c.userSince, gauge, float64(u.Since.UnixMilli())/1000, ul)
		}
	}
	if !c.perProcess {
		return 0, 0
	}
	s, d := 0, 0
	for _, p := range g.Processes {
		if served+s >= c.maxProcesses {
			d++
			continue
		}
		s++
		pl := c.labels.pairs(c.procNames, append(labels[:len(labels):len(labels)], strconv.Itoa(p.PID), p.User, shortCommand(p.Command)))
		if p.MemMiB != nil {
			e.send(c.procMem, gauge, *p.MemMiB*(1<<20), pl)
		}
		if p.SM != nil {
			e.send(c.procSM, gauge, *p.SM/100, pl)
		}
	}
	return s, d
}

// shortCommand is a process name fit for a label: at most 32 bytes of
// printable text, never the command line.
func shortCommand(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, name)
	if len(name) > 32 {
		cut := 32
		for cut > 0 && !utf8RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut]
	}
	return name
}

// utf8RuneStart reports whether b starts a UTF-8 sequence.
func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
