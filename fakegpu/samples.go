//go:build cgo

package fakegpu

import (
	"encoding/binary"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// maxUtilSamples is how many utilization samples a GPU keeps, like the
// driver's ring buffer of a few seconds.
const maxUtilSamples = 120

type utilSample struct {
	ts       uint64 // µs on the fake clock
	gpu, mem uint32
}

// recordUtilLocked appends the current utilization to the sample buffer.
func (g *GPU) recordUtilLocked() {
	s := utilSample{ts: g.f.nowMicrosLocked(), gpu: g.gpuUtil, mem: g.memUtil}
	if n := len(g.utilSamples); n > 0 && g.utilSamples[n-1].ts == s.ts {
		g.utilSamples[n-1] = s
		return
	}
	g.utilSamples = append(g.utilSamples, s)
	if len(g.utilSamples) > maxUtilSamples {
		g.utilSamples = g.utilSamples[len(g.utilSamples)-maxUtilSamples:]
	}
}

// getSamples answers GPU and memory utilization samples newer than
// lastSeen (ERROR_NOT_FOUND when there is none); other sample types, MIG
// devices and GPUs with MIG on answer NOT_SUPPORTED.
func (d *device) getSamples(t nvml.SamplingType, lastSeen uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	if d.m != nil || g.migCur == nvml.DEVICE_MIG_ENABLE ||
		t != nvml.GPU_UTILIZATION_SAMPLES && t != nvml.MEMORY_UTILIZATION_SAMPLES {
		return 0, nil, nvml.ERROR_NOT_SUPPORTED
	}
	var out []nvml.Sample
	for _, s := range g.utilSamples {
		if s.ts <= lastSeen {
			continue
		}
		v := s.gpu
		if t == nvml.MEMORY_UTILIZATION_SAMPLES {
			v = s.mem
		}
		var smp nvml.Sample
		smp.TimeStamp = s.ts
		binary.LittleEndian.PutUint32(smp.SampleValue[:], v)
		out = append(out, smp)
	}
	if len(out) == 0 {
		return nvml.VALUE_TYPE_UNSIGNED_INT, nil, nvml.ERROR_NOT_FOUND
	}
	return nvml.VALUE_TYPE_UNSIGNED_INT, out, nvml.SUCCESS
}
