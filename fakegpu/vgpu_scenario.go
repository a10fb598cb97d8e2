//go:build cgo

package fakegpu

import (
	"encoding/json"
	"strings"
	"time"
)

// scenarioVgpu is one element of "vgpu_instances".
type scenarioVgpu struct {
	ID              *uint32         `json:"id"`
	UUID            *string         `json:"uuid"`
	Type            *string         `json:"type"`
	TypeID          *uint32         `json:"type_id"`
	FramebufferMiB  *uint64         `json:"framebuffer_mib"`
	VMID            *string         `json:"vm_id"`
	VMIDType        *string         `json:"vm_id_type"`
	VMDriverVersion *string         `json:"vm_driver_version"`
	FBUsedMiB       *uint64         `json:"fb_used_mib"`
	Licensed        *bool           `json:"licensed"`
	LicenseExpiry   *string         `json:"license_expiry"`
	FrameRateLimit  *uint32         `json:"frame_rate_limit"`
	EncoderCapacity *uint32         `json:"encoder_capacity"`
	ECC             *bool           `json:"ecc"`
	PlacementID     *uint32         `json:"placement_id"`
	GPUInstanceID   *uint32         `json:"gpu_instance_id"`
	SMUtil          *uint32         `json:"sm_util"`
	FBUtil          *uint32         `json:"fb_util"`
	EncUtil         *uint32         `json:"enc_util"`
	DecUtil         *uint32         `json:"dec_util"`
	Processes       json.RawMessage `json:"processes"`
	Accounting      json.RawMessage `json:"accounting"`
}

// scenarioVgpuProcess is one element of a vGPU instance's "processes".
type scenarioVgpuProcess struct {
	PID     *uint32 `json:"pid"`
	Name    *string `json:"name"`
	SMUtil  *uint32 `json:"sm_util"`
	MemUtil *uint32 `json:"mem_util"`
	EncUtil *uint32 `json:"enc_util"`
	DecUtil *uint32 `json:"dec_util"`
}

// scenarioVgpuAccounting is a vGPU instance's "accounting".
type scenarioVgpuAccounting struct {
	Enabled    *bool `json:"enabled"`
	BufferSize *int  `json:"buffer_size"`
}

// vgpuKeys maps VgpuSpec fields to their scenario keys, for errors.
var vgpuKeys = map[string]string{
	"ID": "id", "UUID": "uuid", "Type": "type", "TypeID": "type_id", "FramebufferMiB": "framebuffer_mib",
	"VMID": "vm_id", "VMIDType": "vm_id_type", "VMDriverVersion": "vm_driver_version", "FBUsedMiB": "fb_used_mib",
	"Licensed": "licensed", "LicenseExpiry": "license_expiry", "FrameRateLimit": "frame_rate_limit",
	"EncoderCapacity": "encoder_capacity", "ECC": "ecc", "PlacementID": "placement_id",
	"GPUInstanceID": "gpu_instance_id", "SM": "sm_util", "FB": "fb_util", "Enc": "enc_util", "Dec": "dec_util",
	"Processes": "processes", "Accounting": "accounting.enabled", "AccountingBufferSize": "accounting.buffer_size",
}

// parseVgpus decodes "vgpu_instances". The checks that need the GPU's
// spec are left to overrideSpec, those across GPUs to checkUnique.
func (p *gpuPlan) parseVgpus() error {
	if isNull(p.raw.VgpuInstances) {
		return nil
	}
	path := keyPath(p.path, "vgpu_instances")
	elems, err := decodeArray(p.raw.VgpuInstances, path)
	if err != nil {
		return err
	}
	if len(elems) > maxVgpusPerGPU {
		return bad(path, "at most %d vGPU instances per GPU, got %d", maxVgpusPerGPU, len(elems))
	}
	p.hasVgpus, p.vgpus, p.vgpuRaw = true, []VgpuSpec{}, make([]scenarioVgpu, len(elems))
	idAt := make(map[uint32]string)
	uuidAt := make(map[string]string)
	for i, e := range elems {
		at := indexPath(path, i)
		key := func(k string) string { return keyPath(at, k) }
		sv := &p.vgpuRaw[i]
		if err := decodeObject(e, at, sv); err != nil {
			return err
		}
		var vs VgpuSpec
		setIf(&vs.ID, sv.ID)
		setIf(&vs.UUID, sv.UUID)
		setIf(&vs.Type, sv.Type)
		setIf(&vs.TypeID, sv.TypeID)
		setIf(&vs.FramebufferMiB, sv.FramebufferMiB)
		setIf(&vs.VMID, sv.VMID)
		setIf(&vs.VMIDType, sv.VMIDType)
		setIf(&vs.VMDriverVersion, sv.VMDriverVersion)
		setIf(&vs.FBUsedMiB, sv.FBUsedMiB)
		setIf(&vs.Licensed, sv.Licensed)
		setIf(&vs.FrameRateLimit, sv.FrameRateLimit)
		setIf(&vs.EncoderCapacity, sv.EncoderCapacity)
		setIf(&vs.PlacementID, sv.PlacementID)
		setIf(&vs.SM, sv.SMUtil)
		setIf(&vs.FB, sv.FBUtil)
		setIf(&vs.Enc, sv.EncUtil)
		setIf(&vs.Dec, sv.DecUtil)
		vs.ECC, vs.GPUInstanceID = sv.ECC, sv.GPUInstanceID

		if sv.ID != nil {
			if *sv.ID == 0 {
				return bad(key("id"), "want a non-zero ID (or leave it out for a derived one)")
			}
			if other, dup := idAt[*sv.ID]; dup {
				return bad(key("id"), "%d is also the ID of %s", *sv.ID, other)
			}
			idAt[*sv.ID] = at
		}
		if sv.UUID != nil {
			if !validVgpuUUID(*sv.UUID) {
				return bad(key("uuid"), "want xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hex, no prefix), got %q", *sv.UUID)
			}
			if other, dup := uuidAt[strings.ToLower(*sv.UUID)]; dup {
				return bad(key("uuid"), "%q is also the UUID of %s", *sv.UUID, other)
			}
			uuidAt[strings.ToLower(*sv.UUID)] = at
		}
		if sv.Type != nil && sv.FramebufferMiB == nil {
			if _, _, ok := parseVgpuType(*sv.Type); !ok {
				return bad(key("type"), `want a type name ending in "-<GiB><class letter>" like "NVIDIA H100-20C" (or a "framebuffer_mib"), got %q`, *sv.Type)
			}
		}
		if sv.TypeID != nil && *sv.TypeID == 0 {
			return bad(key("type_id"), "want a non-zero type ID (or leave it out for a derived one)")
		}
		for _, m := range []struct {
			key string
			v   *uint64
		}{{"framebuffer_mib", sv.FramebufferMiB}, {"fb_used_mib", sv.FBUsedMiB}} {
			if m.v != nil && *m.v > maxMiB {
				return bad(key(m.key), "want at most %d MiB, got %d", maxMiB, *m.v)
			}
		}
		if sv.FramebufferMiB != nil && *sv.FramebufferMiB == 0 {
			return bad(key("framebuffer_mib"), "want a positive size, got 0")
		}
		if sv.VMID != nil && *sv.VMID == "" {
			return bad(key("vm_id"), "want a VM ID (or leave it out for a derived one), got an empty string")
		}
		if sv.VMIDType != nil && *sv.VMIDType != VMIDTypeUUID && *sv.VMIDType != VMIDTypeDomain {
			return bad(key("vm_id_type"), "want %q or %q, got %q", VMIDTypeUUID, VMIDTypeDomain, *sv.VMIDType)
		}
		if sv.LicenseExpiry != nil {
			t, err := time.Parse(time.RFC3339, *sv.LicenseExpiry)
			if err != nil || t.UTC().Year() < 1 {
				return bad(key("license_expiry"), `want an RFC 3339 time like "2026-12-31T23:59:59Z", got %q`, *sv.LicenseExpiry)
			}
			vs.LicenseExpiry = t
		}
		for _, u := range []struct {
			key string
			v   *uint32
		}{{"encoder_capacity", sv.EncoderCapacity}, {"sm_util", sv.SMUtil}, {"fb_util", sv.FBUtil}, {"enc_util", sv.EncUtil}, {"dec_util", sv.DecUtil}} {
			if u.v != nil && *u.v > 100 {
				return bad(key(u.key), "want a percentage 0..100, got %d", *u.v)
			}
		}
		if !isNull(sv.Accounting) {
			var acc scenarioVgpuAccounting
			if err := decodeObject(sv.Accounting, key("accounting"), &acc); err != nil {
				return err
			}
			setIf(&vs.Accounting, acc.Enabled)
			if acc.BufferSize != nil {
				if *acc.BufferSize <= 0 {
					return bad(keyPath(key("accounting"), "buffer_size"), "want a positive size, got %d", *acc.BufferSize)
				}
				vs.AccountingBufferSize = *acc.BufferSize
			}
		}
		if !isNull(sv.Processes) {
			if vs.Processes, err = parseVgpuProcesses(sv.Processes, key("processes")); err != nil {
				return err
			}
		}
		p.vgpus = append(p.vgpus, vs)
	}
	return nil
}

// parseVgpuProcesses decodes a vGPU instance's process list raw at path.
func parseVgpuProcesses(raw json.RawMessage, path string) ([]VgpuProcess, error) {
	elems, err := decodeArray(raw, path)
	if err != nil {
		return nil, err
	}
	if len(elems) > maxGPUProcesses {
		return nil, bad(path, "at most %d processes per vGPU instance, got %d", maxGPUProcesses, len(elems))
	}
	procs := []VgpuProcess{}
	pidAt := make(map[uint32]string)
	for i, e := range elems {
		at := indexPath(path, i)
		var sp scenarioVgpuProcess
		if err := decodeObject(e, at, &sp); err != nil {
			return nil, err
		}
		if sp.PID == nil {
			return nil, bad(keyPath(at, "pid"), "required")
		}
		vp := VgpuProcess{PID: *sp.PID}
		setIf(&vp.Name, sp.Name)
		setIf(&vp.SM, sp.SMUtil)
		setIf(&vp.Mem, sp.MemUtil)
		setIf(&vp.Enc, sp.EncUtil)
		setIf(&vp.Dec, sp.DecUtil)
		if field, problem := vp.check(); field != "" {
			return nil, bad(keyPath(at, processKeys[field]), "%s", problem)
		}
		if other, dup := pidAt[vp.PID]; dup {
			return nil, bad(keyPath(at, "pid"), "%d is also the PID of %s", vp.PID, other)
		}
		pidAt[vp.PID] = at
		procs = append(procs, vp)
	}
	return procs, nil
}

// overrideVgpus applies "vgpu_host" and "vgpu_instances" to the GPU's spec
// and checks its instances against the GPU.
func (p *gpuPlan) overrideVgpus(s *GPUSpec) error {
	r := &p.raw
	setIf(&s.VgpuHost, r.VgpuHost)
	switch {
	case p.hasVgpus:
		if r.VgpuHost != nil && !*r.VgpuHost && len(p.vgpus) > 0 {
			return bad(keyPath(p.path, "vgpu_instances"), `vGPU instances need a vGPU host, got "vgpu_host": false`)
		}
		s.Vgpus = p.vgpus
	case !s.VgpuHost:
		s.Vgpus = nil // a preset's, when the scenario ends host mode
	}
	var first *vgpuIssue
	s.resolveIn("", 0, &vgpuCheck{
		owner: func(j int) string { return indexPath(keyPath(p.path, "vgpu_instances"), j) },
		report: func(is vgpuIssue) {
			if first == nil {
				first = &is
			}
		},
	})
	if first != nil {
		return p.vgpuError(first)
	}
	return nil
}

// vgpuError turns a problem with the GPU's vGPU instances into a scenario
// error naming its key: a framebuffer or type ID the scenario left to
// the type name is blamed on "type".
func (p *gpuPlan) vgpuError(is *vgpuIssue) error {
	path := indexPath(keyPath(p.path, "vgpu_instances"), is.inst)
	key := vgpuKeys[is.field]
	if p.hasVgpus && is.inst < len(p.vgpuRaw) {
		sv := p.vgpuRaw[is.inst]
		if is.field == "FramebufferMiB" && sv.FramebufferMiB == nil || is.field == "TypeID" && sv.TypeID == nil {
			key = "type"
		}
	}
	path = keyPath(path, key)
	if is.proc >= 0 {
		path = keyPath(indexPath(path, is.proc), processKeys[is.pfield])
	}
	return bad(path, "%s", is.problem)
}

// checkVgpusUnique rejects a vGPU ID, UUID or type ID used twice in the
// fleet, naming the later one's key.
func checkVgpusUnique(specs []GPUSpec, plans []*gpuPlan, seed string) error {
	taken := newVgpuTaken()
	for i, s := range specs {
		plan := &gpuPlan{path: indexPath("gpus", i)}
		if i < len(plans) {
			plan = plans[i]
		}
		var first *vgpuIssue
		s.resolveIn(seed, i, &vgpuCheck{
			taken: taken,
			owner: func(j int) string { return indexPath(keyPath(plan.path, "vgpu_instances"), j) },
			report: func(is vgpuIssue) {
				if first == nil {
					first = &is
				}
			},
		})
		if first != nil {
			return plan.vgpuError(first)
		}
	}
	return nil
}

// applyVgpus sets what VgpuSpec cannot say: an encoder capacity of 0.
func (p *gpuPlan) applyVgpus(g *GPU) {
	g.update(func() {
		for i, sv := range p.vgpuRaw {
			if sv.EncoderCapacity != nil && *sv.EncoderCapacity == 0 && i < len(g.vgpus) {
				g.vgpus[i].encCap = 0
			}
		}
	})
}
