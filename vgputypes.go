package nvgo

import (
	"fmt"
	"time"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// VirtualizationMode says how a physical GPU is virtualized
// (nvmlGpuVirtualizationMode_t).
type VirtualizationMode int

// Virtualization modes.
const (
	// VirtualizationNone: bare metal, no virtualization.
	VirtualizationNone VirtualizationMode = nvmlx.VirtualizationNone
	// VirtualizationPassthrough: the whole GPU is passed through to a VM.
	VirtualizationPassthrough VirtualizationMode = nvmlx.VirtualizationPassthrough
	// VirtualizationVGPU: a vGPU, as seen from inside its VM.
	VirtualizationVGPU VirtualizationMode = nvmlx.VirtualizationVGPU
	// VirtualizationHostVGPU: a vGPU host, whose GPU VMs share as vGPU instances.
	VirtualizationHostVGPU VirtualizationMode = nvmlx.VirtualizationHostVGPU
	// VirtualizationHostVSGA: a vSGA host.
	VirtualizationHostVSGA VirtualizationMode = nvmlx.VirtualizationHostVSGA
)

var virtualizationText = [...]string{"none", "passthrough", "vgpu", "host vgpu", "host vsga"}

// String returns the mode in words, e.g. "host vgpu".
func (m VirtualizationMode) String() string {
	if m >= 0 && int(m) < len(virtualizationText) {
		return virtualizationText[m]
	}
	return fmt.Sprintf("VirtualizationMode(%d)", int(m))
}

// MarshalText makes the mode a JSON string.
func (m VirtualizationMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// IsVgpuHost reports whether VMs share the GPU as vGPU instances.
func (m VirtualizationMode) IsVgpuHost() bool { return m == VirtualizationHostVGPU }

// LicenseState is the licensing state of a vGPU instance
// (nvmlGridLicenseState_t).
type LicenseState uint32

// License states.
const (
	LicenseUnknown LicenseState = iota
	LicenseUninitialized
	LicenseUnlicensedUnrestricted // not licensed, still fully usable
	LicenseUnlicensedRestricted   // not licensed, performance restricted
	LicenseUnlicensed
	LicenseLicensed
)

var licenseText = [...]string{"unknown", "uninitialized", "unlicensed (unrestricted)", "unlicensed (restricted)", "unlicensed", "licensed"}

// String returns the state in words, e.g. "licensed".
func (s LicenseState) String() string {
	if int(s) < len(licenseText) {
		return licenseText[s]
	}
	return fmt.Sprintf("LicenseState(%d)", uint32(s))
}

// MarshalText makes the state a JSON string.
func (s LicenseState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// VgpuLicense is the license of a vGPU instance, as the guest's driver
// reported it to the host.
type VgpuLicense struct {
	Licensed bool
	State    LicenseState
	// Permanent is true for a license that does not expire.
	Permanent bool
	// Expiry is when the license expires (UTC). N/A (NotReported) when the
	// driver gives no date: for a permanent license, or none at all.
	Expiry Value[time.Time]
}

// licenseOf converts NVML's license information.
func licenseOf(l nvmlx.VgpuLicense) VgpuLicense {
	out := VgpuLicense{
		Licensed:  l.Licensed,
		State:     LicenseState(l.State),
		Permanent: l.ExpiryStatus == nvmlx.LicenseExpiryPermanent,
		Expiry:    NA[time.Time](NotReported, errNoExpiry),
	}
	if l.ExpiryStatus == nvmlx.LicenseExpiryValid && l.Year != 0 {
		out.Expiry = Some(time.Date(int(l.Year), time.Month(l.Month), int(l.Day),
			int(l.Hour), int(l.Min), int(l.Sec), 0, time.UTC))
	}
	return out
}

var errNoExpiry = fmt.Errorf("no license expiry date: %w", ErrNotReported)

// VgpuType is a vGPU type (profile): how much of the GPU one instance gets.
type VgpuType struct {
	// ID is NVML's vGPU type ID.
	ID Value[uint32]
	// Name is e.g. "NVIDIA H100-20C"; N/A when the driver gives none.
	Name Value[string]
	// Class is "Compute", "Quadro", "NVS", …; N/A when the driver gives none.
	Class Value[string]
	// Framebuffer is the memory each instance of the type gets.
	Framebuffer Value[Bytes]
}

// VMIDKind says what a VM ID is.
type VMIDKind uint8

// String returns "uuid" or "domain".
func (k VMIDKind) String() string {
	if k == VMIDDomain {
		return "domain"
	}
	return "uuid"
}

// MarshalText makes the kind a JSON string.
func (k VMIDKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// VM identifies the virtual machine a vGPU instance is attached to.
type VM struct {
	ID   string
	Kind VMIDKind
}

// VgpuUtilization is one utilization sample of a vGPU instance.
type VgpuUtilization struct {
	// SMUtilization is the percent of time the instance's kernels (3D or
	// compute) ran.
	SMUtilization Percent
	// FramebufferUtilization is the percent of time its framebuffer was
	// read or written.
	FramebufferUtilization Percent
	// EncoderUtilization and DecoderUtilization are the video engines'.
	EncoderUtilization, DecoderUtilization Percent
	// Time is when the driver took the sample.
	Time time.Time
}

// VgpuProcess is one process inside a VM, seen from the host through its
// vGPU instance. Its PID is the guest's: it means nothing on the host, and
// two VMs can have the same one.
type VgpuProcess struct {
	// Instance is the ID of the vGPU instance the process runs on.
	Instance uint32 `json:"vgpu_instance"`
	// PID is the process ID inside the VM.
	PID int `json:"pid"`
	// Name is the process name the guest reported.
	Name string `json:"name"`
	// SMUtilization, MemoryUtilization, EncoderUtilization and
	// DecoderUtilization are the process's share of the instance's engines.
	SMUtilization      Percent `json:"sm_utilization"`
	MemoryUtilization  Percent `json:"memory_utilization"`
	EncoderUtilization Percent `json:"encoder_utilization"`
	DecoderUtilization Percent `json:"decoder_utilization"`
	// Time is when the driver took the sample.
	Time time.Time `json:"timestamp"`
}

// VgpuInstanceSnapshot is one vGPU instance at one moment: plain data that
// never reaches back to the driver. N/A is null in JSON.
type VgpuInstanceSnapshot struct {
	Timestamp time.Time `json:"timestamp"`
	// ID is NVML's instance ID (nvidia-smi's "vGPU ID").
	ID uint32 `json:"id"`
	// DeviceIndex and DeviceUUID name the physical GPU.
	DeviceIndex int    `json:"device_index"`
	DeviceUUID  string `json:"device_uuid"`
	// Err is why the instance could not be read in full (ErrVgpuGone when it
	// was destroyed after it was listed); Error is its text in JSON.
	Err   error  `json:"-"`
	Error string `json:"error,omitempty"`

	UUID            Value[string]   `json:"uuid"`
	TypeID          Value[uint32]   `json:"type_id"`
	TypeName        Value[string]   `json:"type_name"`
	TypeClass       Value[string]   `json:"type_class"`
	VMID            Value[string]   `json:"vm_id"`
	VMIDKind        Value[VMIDKind] `json:"vm_id_type"`
	VMDriverVersion Value[string]   `json:"vm_driver_version"`
	PlacementID     Value[int]      `json:"placement_id"`
	GPUInstanceID   Value[int]      `json:"gpu_instance_id"`

	FramebufferTotal   Value[Bytes]   `json:"framebuffer_total"`
	FramebufferUsed    Value[Bytes]   `json:"framebuffer_used"`
	FramebufferPercent Value[Percent] `json:"framebuffer_percent"`
	FrameRateLimit     Value[int]     `json:"frame_rate_limit"`
	EncoderCapacity    Value[Percent] `json:"encoder_capacity"`
	ECCMode            Value[OnOff]   `json:"ecc_mode"`

	Licensed         Value[bool]         `json:"licensed"`
	LicenseState     Value[LicenseState] `json:"license_state"`
	LicensePermanent Value[bool]         `json:"license_permanent"`
	// LicenseExpiry is N/A for a permanent license and where the driver
	// gives no date.
	LicenseExpiry Value[time.Time] `json:"license_expiry"`

	// The newest utilization sample and when the driver took it.
	SMUtilization          Value[Percent]   `json:"sm_utilization"`
	FramebufferUtilization Value[Percent]   `json:"framebuffer_utilization"`
	EncoderUtilization     Value[Percent]   `json:"encoder_utilization"`
	DecoderUtilization     Value[Percent]   `json:"decoder_utilization"`
	UtilizationTime        Value[time.Time] `json:"utilization_timestamp"`

	AccountingMode Value[OnOff] `json:"accounting_mode"`
	// Processes are the guest processes busy in the driver's latest sample
	// period; nil when they could not be read (ProcessesError says why).
	Processes      []VgpuProcess `json:"processes"`
	ProcessesErr   error         `json:"-"`
	ProcessesError string        `json:"processes_error,omitempty"`
}

// Kinds of VM ID.
const (
	VMIDUUID   VMIDKind = iota // the VM's UUID (KVM, most hypervisors)
	VMIDDomain                 // a domain ID (Xen)
)
