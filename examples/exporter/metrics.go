package main

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// meanNote ends the help of every utilization family: what the figure is.
const meanNote = " Mean over the time since the previous scrape, from the driver's sample buffers (not one instantaneous reading)."

// family is one metric family the exporter serves per GPU (and per MIG
// device where the driver has the reading).
type family struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(g *gpuView) *float64
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
	up, duration, info, processes          *prometheus.Desc
	userProcs, userMem, userSince          *prometheus.Desc
	procMem, procSM, procLimit, procDroppd *prometheus.Desc
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
	add := func(name, help string, kind prometheus.ValueType, value func(g *gpuView) *float64) {
		c.families = append(c.families, family{prometheus.NewDesc(name, help, labels, nil), kind, value})
	}
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	add("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."+meanNote, gauge, func(g *gpuView) *float64 { return g.GPUUtil })
	add("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %)."+meanNote, gauge, func(g *gpuView) *float64 { return g.MemCopyUtil })
	add("DCGM_FI_DEV_ENC_UTIL", "Encoder utilization (in %), over the driver's last sampling period.", gauge, func(g *gpuView) *float64 { return g.EncUtil })
	add("DCGM_FI_DEV_DEC_UTIL", "Decoder utilization (in %), over the driver's last sampling period.", gauge, func(g *gpuView) *float64 { return g.DecUtil })
	add("DCGM_FI_DEV_FB_FREE", "Frame buffer memory free (in MiB).", gauge, func(g *gpuView) *float64 { return g.MemFreeMiB })
	add("DCGM_FI_DEV_FB_USED", "Frame buffer memory used (in MiB).", gauge, func(g *gpuView) *float64 { return g.MemUsedMiB })
	add("DCGM_FI_DEV_FB_RESERVED", "Frame buffer memory reserved by the driver (in MiB).", gauge, func(g *gpuView) *float64 { return g.MemReservedMiB })
	add("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", gauge, func(g *gpuView) *float64 { return g.TempC })
	add("DCGM_FI_DEV_FAN_SPEED", "Fan speed (in %); no sample on boards without a fan the driver reads.", gauge, func(g *gpuView) *float64 { return g.FanPercent })
	add("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", gauge, func(g *gpuView) *float64 { return g.PowerW })
	add("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since the driver was last reloaded (in mJ).", counter, func(g *gpuView) *float64 { return g.EnergyMJ })
	add("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", gauge, func(g *gpuView) *float64 { return g.SMClockMHz })
	add("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", gauge, func(g *gpuView) *float64 { return g.MemClockMHz })
	add("DCGM_FI_PROF_PCIE_TX_BYTES", "PCIe transmit throughput (in B/s), NVML's PCIe counter over its last 20 ms.", gauge, func(g *gpuView) *float64 { return g.PCIeTXBps })
	add("DCGM_FI_PROF_PCIE_RX_BYTES", "PCIe receive throughput (in B/s), NVML's PCIe counter over its last 20 ms.", gauge, func(g *gpuView) *float64 { return g.PCIeRXBps })
	add("DCGM_FI_PROF_NVLINK_TX_BYTES", "NVLink transmit throughput, all links (in B/s).", gauge, func(g *gpuView) *float64 { return g.NVLinkTXBps })
	add("DCGM_FI_PROF_NVLINK_RX_BYTES", "NVLink receive throughput, all links (in B/s).", gauge, func(g *gpuView) *float64 { return g.NVLinkRXBps })
	add("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Uncorrectable (double-bit) ECC errors since the driver was last reloaded.", counter, func(g *gpuView) *float64 { return g.ECCUncorrected })

	host := []string{hostLabel}
	labels = nvgoLabels(hostLabel)
	c.up = prometheus.NewDesc("nvgo_up", "1 when the exporter read the NVIDIA driver at this scrape, 0 when it could not.", host, nil)
	c.duration = prometheus.NewDesc("nvgo_scrape_duration_seconds", "How long this scrape took to read the driver and the host's processes.", host, nil)
	c.info = prometheus.NewDesc("nvgo_gpu_info", "Always 1: the GPU's model, driver version, CUDA driver version and MIG mode as labels.",
		append(labels[:len(labels):len(labels)], "model_name", "driver_version", "cuda_version", "mig_mode"), nil)
	c.processes = prometheus.NewDesc("nvgo_gpu_processes", "Processes on the GPU (with MIG, on the GPU and every MIG device); 0 means the GPU is free.", labels, nil)
	user := append(labels[:len(labels):len(labels)], "user")
	c.userProcs = prometheus.NewDesc("nvgo_gpu_user_processes", "Processes of the user on the GPU.", user, nil)
	c.userMem = prometheus.NewDesc("nvgo_gpu_user_memory_used_bytes", "GPU memory used by the user's processes on the GPU (the part the driver reports).", user, nil)
	c.userSince = prometheus.NewDesc("nvgo_gpu_user_start_time_seconds", "Unix time at which the user's oldest process on the GPU started.", user, nil)
	proc := append(labels[:len(labels):len(labels)], "pid", "user", "command")
	c.procMem = prometheus.NewDesc("nvgo_process_gpu_memory_used_bytes", "GPU memory used by the process (--per-process).", proc, nil)
	c.procSM = prometheus.NewDesc("nvgo_process_sm_utilization_ratio", "The process's share of SM time (0 to 1) (--per-process)."+meanNote, proc, nil)
	c.procLimit = prometheus.NewDesc("nvgo_process_series_limit", "Most processes served per scrape (--per-process-max).", host, nil)
	c.procDroppd = prometheus.NewDesc("nvgo_process_series_dropped", "Processes left out of this scrape by --per-process-max.", host, nil)
	return c
}

// Describe sends every family's description.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.families {
		ch <- f.desc
	}
	for _, d := range []*prometheus.Desc{c.up, c.duration, c.info, c.processes, c.userProcs, c.userMem, c.userSince} {
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
	c.emit(ch, &v)
}

// emit sends the series of v.
func (c *collector) emit(ch chan<- prometheus.Metric, v *nodeView) {
	host := v.Hostname
	up := 1.0
	if v.Err != "" {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, host)
	ch <- prometheus.MustNewConstMetric(c.duration, prometheus.GaugeValue, v.Duration.Seconds(), host)
	served, dropped := 0, 0
	for i := range v.GPUs {
		g := &v.GPUs[i]
		if g.Err != "" {
			continue // a lost GPU has no sample; nvgo_gpu_info leaves it out too
		}
		dcgm := deviceLabels(g, host, "", "")
		c.emitDevice(ch, g, dcgm)
		labels := nvgoValues(dcgm)
		ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, append(labels[:len(labels):len(labels)], g.Name, v.Driver, v.CUDA, g.MIGMode)...)
		n := len(g.Processes)
		for j := range g.MIGs {
			n += len(g.MIGs[j].Processes)
		}
		if g.ProcessesErr == "" {
			ch <- prometheus.MustNewConstMetric(c.processes, prometheus.GaugeValue, float64(n), labels...)
		}
		s, d := c.emitProcesses(ch, g, labels, served)
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
			c.emitDevice(ch, m, mdcgm)
			ml := nvgoValues(mdcgm)
			if m.ProcessesErr == "" {
				ch <- prometheus.MustNewConstMetric(c.processes, prometheus.GaugeValue, float64(len(m.Processes)), ml...)
			}
			s, d := c.emitProcesses(ch, m, ml, served)
			served, dropped = served+s, dropped+d
		}
	}
	if c.perProcess {
		ch <- prometheus.MustNewConstMetric(c.procLimit, prometheus.GaugeValue, float64(c.maxProcesses), host)
		ch <- prometheus.MustNewConstMetric(c.procDroppd, prometheus.GaugeValue, float64(dropped), host)
	}
}

// emitDevice sends the dcgm-exporter families of one device.
func (c *collector) emitDevice(ch chan<- prometheus.Metric, g *gpuView, labels []string) {
	for _, f := range c.families {
		if x := f.value(g); x != nil {
			ch <- prometheus.MustNewConstMetric(f.desc, f.kind, *x, labels...)
		}
	}
}

// emitProcesses sends one device's per-user series and, with --per-process,
// its per-process series while fewer than the cap are served (served so
// far); it returns how many it served and left out.
func (c *collector) emitProcesses(ch chan<- prometheus.Metric, g *gpuView, labels []string, served int) (int, int) {
	for _, u := range g.Users {
		ul := append(labels[:len(labels):len(labels)], u.User)
		ch <- prometheus.MustNewConstMetric(c.userProcs, prometheus.GaugeValue, float64(u.Processes), ul...)
		ch <- prometheus.MustNewConstMetric(c.userMem, prometheus.GaugeValue, u.MemMiB*(1<<20), ul...)
		if u.Since != nil {
			ch <- prometheus.MustNewConstMetric(c.userSince, prometheus.GaugeValue, float64(u.Since.UnixMilli())/1000, ul...)
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
		pl := append(labels[:len(labels):len(labels)], strconv.Itoa(p.PID), p.User, shortCommand(p.Command))
		if p.MemMiB != nil {
			ch <- prometheus.MustNewConstMetric(c.procMem, prometheus.GaugeValue, *p.MemMiB*(1<<20), pl...)
		}
		if p.SM != nil {
			ch <- prometheus.MustNewConstMetric(c.procSM, prometheus.GaugeValue, *p.SM/100, pl...)
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
