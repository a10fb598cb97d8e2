// Package fakegpu is a programmable fake fleet of NVIDIA GPUs that
// implements go-nvml's nvml.Interface, for testing code that uses NVML on
// machines without a GPU.
//
// Like go-nvml itself, the package needs cgo: with CGO_ENABLED=0 it is
// empty (only this documentation compiles), so cgo-less builds of modules
// that contain it still succeed. No NVIDIA driver or libnvidia-ml is
// needed, only a C compiler.
//
// # Building a fleet
//
// New builds GPUs from GPUSpecs (Model "a100", "h100", "h200" or "b200"
// supplies the defaults); Preset builds an 8-GPU DGX-like machine
// ("dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "dgx-a100-mig" and
// "dgx-h100-mig" with MIG devices on GPU 0, and "vgpu-h100", a vGPU host
// with instances on GPUs 0 and 1); ParseScenario and
// LoadScenario build one from JSON. UUIDs, serial numbers and PCI bus IDs
// not given are derived from a seed (the preset name, else "fakegpu") and
// the GPU index, so every run sees the same fleet. The NVML index of a GPU
// is its position; its minor number equals its index.
//
//	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "a100"})
//	fleet.GPU(0).SetUtilization(80, 30)
//	fleet.GPU(1).StartProcess(fakegpu.Process{PID: 4242, Type: fakegpu.Compute, UsedMemory: 2 << 30, SM: 50})
//	lib := nvml.Interface(fleet) // hand it to the code under test
//
// A process may carry host facts (Process.Host: its owner, command line,
// CPU and memory use, and age); package fakegpu/fakehost serves them to nvgo
// as the host's /proc, so that a simulated node's processes look real. The
// presets' processes have them.
//
// The fleet has a clock of its own, which stands still until Advance moves
// it; utilization samples and accounting records are taken as it moves.
// nvgo's samplers need a clock that moves it: open the Library with
// nvgo.WithClock(fleetclock.RealTime(fleet)) for a live simulation, or
// fleetclock.NewStepped(fleet) in tests that step time. On the system
// clock alone the fleet stands still and every process shows 0% SM.
//
// # Testing code that uses nvgo
//
// Open an nvgo Library on a fleet with nvgo.WithNVML, and the code under test
// reads the fleet as it would read a machine's GPUs:
//
//	fleet, _ := fakegpu.Preset("dgx-h100") // 8 × H100, the same UUIDs and bus IDs on every run
//	fleet.GPU(0).SetUtilization(90, 40)
//	fleet.GPU(1).StartProcess(fakegpu.Process{PID: 4242, Type: fakegpu.Compute, UsedMemory: 512 << 20, SM: 30})
//	fleet.GPU(2).Lose()                                // falls off the bus
//	fleet.MissingSymbols("nvmlDeviceGetMemoryInfo_v2") // an older driver
//	lib, err := nvgo.Open(nvgo.WithNVML(fleet),
//		nvgo.WithCacheTTL(0),                          // every Device method reads the fleet anew
//		nvgo.WithHostSource(fakehost.New(fleet)),      // the processes' owners and command lines
//		nvgo.WithClock(fleetclock.NewStepped(fleet)))  // samplers tick when the test says
//	… the code under test …
//	fmt.Println(fleet.Calls())      // NVML calls per function
//	fmt.Println(fleet.Violations()) // calls that would have killed a real process: none
//
// nvgo's per-metric Device methods reuse a reading for nvgo.DefaultCacheTTL
// (a second), so a test that changes the fleet between two such calls opens
// the Library with nvgo.WithCacheTTL(0), or reads a snapshot, which never uses
// the cache. With fakehost the presets' processes read as believable host
// processes, while any other PID reads the real /proc. To drive a vGPU host,
// start from the "vgpu-h100" preset or add instances with [GPU.AddVgpu], and
// change them with [Vgpu.SetUtilization], [Vgpu.StartProcess] and
// [Vgpu.Destroy]; [Vgpu.DestroyOnCall] destroys an instance at the next call
// of a method, so a test can end one between GetActiveVgpus and the
// per-instance reads.
//
// # Fidelity
//
// The fake refuses what would kill a real process. With the real library a
// call without a successful Init (before it, after a failed one, or after
// the last Shutdown) or a call to a function the installed driver lacks
// ends the process with "undefined symbol". The fake answers such a call
// with ERROR_UNINITIALIZED or ERROR_FUNCTION_NOT_FOUND instead and records
// it; Fleet.Violations lists them, and a test of correct code expects
// none. Init, InitWithFlags, Extensions, LookupSymbol and ErrorString are
// always safe (go-nvml answers the last three in Go). Init and Shutdown are
// counted in pairs, as NVML does. A function counts as missing when its
// NVML symbol ("nvml"+M for an nvml.Interface method M, "nvmlDevice"+M for
// an nvml.Device method M, "nvmlVgpuInstance"+M for an nvml.VgpuInstance
// method, "nvmlVgpuType"+M for an nvml.VgpuTypeId method) was declared
// missing with MissingSymbols; the three process-list functions count as
// missing only when the base symbol and its _v2 and _v3 forms all are,
// since go-nvml binds the newest, and VgpuInstance.GetLicenseInfo only
// when it and its _v2 are.
//
// Every method of nvml.Interface, nvml.Device, nvml.VgpuInstance and
// nvml.VgpuTypeId answers: those the fake does not model return zero values
// and ERROR_NOT_SUPPORTED, as on a GPU without the feature, never the
// "method is nil" panic of the plain moq mocks. Library-level twins such
// as DeviceGetName(dev) and VgpuInstanceGetUUID(vgpu) forward to the
// handle's method, as the real library does. The seven methods that return
// handler structs with an unexported handle (GetTemperatureV,
// GetNvLinkInfo, GetGpuFabricInfoV, GetC2cModeInfoV,
// GetGpuInstanceProfileInfoV, GetGpuInstanceProfileInfoByIdV,
// GpmQueryDeviceSupportV) return zero handlers: do not call their methods.
//
// Modelled behaviour worth knowing:
//   - GetMemoryInfo_v2 reports Reserved (0.5% of the total by default) apart
//     from Used; GetMemoryInfo counts it in Used. Used is the sum of the
//     processes' memory unless GPU.SetMemoryUsed fixes it.
//   - The SXM models have no fan: fan queries answer NOT_SUPPORTED.
//   - With MIG enabled, GetUtilizationRates and GetProcessUtilization
//     answer NOT_SUPPORTED; outside MIG, process lists report 0xFFFFFFFF
//     as GPU and compute instance IDs.
//   - GetProcessUtilization(lastSeen) returns, per process, the newest
//     sample newer than lastSeen (µs on the fake clock), or
//     ERROR_NOT_FOUND when there is none. Samples are taken when a process
//     starts, when its utilization is set, and at every Fleet.Advance.
//   - GetSamples answers GPU_UTILIZATION_SAMPLES and
//     MEMORY_UTILIZATION_SAMPLES newer than lastSeen (ERROR_NOT_FOUND when
//     none): a sample is taken at every SetUtilization and Fleet.Advance,
//     and the last 120 are kept. Other sample types, MIG devices and GPUs
//     with MIG on answer NOT_SUPPORTED.
//   - A "C+G" process is in both process lists: its compute entry carries
//     its memory, its graphics entry at most 4 MiB. An "M+C" process (an
//     MPS client) is on the MPS list only; name its server, a "C" process,
//     nvidia-cuda-mps-server, as NVML shows it.
//   - GetFieldValues fills NvmlReturn, ValueType, Value (little-endian) and
//     Timestamp per field and succeeds as a whole; unknown field IDs answer
//     NOT_SUPPORTED, an empty slice ERROR_INVALID_ARGUMENT. FI_DEV_POWER_AVERAGE
//     is NOT_SUPPORTED on the A100, as on GA100. FI_DEV_MEMORY_TEMP, the HBM
//     stacks' temperature, is the core's plus 3 °C.
//   - A lost GPU (GPU.Lose) answers ERROR_GPU_IS_LOST from every method, and
//     the DeviceGetHandleBy… functions return its handle with that code.
//   - Accounting (GPUSpec.Accounting, GPU.SetAccountingMode,
//     SetAccountingMode) keeps a record per process that runs on the GPU
//     itself while the mode is on, in a circular buffer of
//     GetAccountingBufferSize records (4000) that evicts the oldest. A
//     record starts when the process starts, or when accounting is turned
//     on if later; its GpuUtilization and MemoryUtilization are the exact
//     time-weighted means of the process's SM and memory percentages over
//     that lifetime (integrated at every SetProcessUtilization,
//     Fleet.Advance and StopProcess), rounded to the nearest percent, halves
//     up; MaxMemoryUsage is the largest UsedMemory seen (SetProcessMemory),
//     NotAvailable if none was; Time is 0 and IsRunning 1 while it runs,
//     then the lifetime in whole ms, rounded down. A stopped process's
//     record stays until evicted or ClearAccountingPids; a reused PID gets
//     a new record, and GetAccountingStats answers the newest.
//     GetAccountingPids lists each PID once. Turning accounting off deletes
//     every record; while it is off GetAccountingPids, GetAccountingStats
//     and ClearAccountingPids answer NOT_SUPPORTED, as NVML does; an
//     unknown PID answers NOT_FOUND. MIG device handles answer
//     NOT_SUPPORTED, and processes on MIG devices are not accounted.
//
// # MIG
//
// A GPU with MIG enabled (GPUSpec.MIGEnabled, GPU.SetMIGMode) reports
// GetMigMode 1/1 and GetMaxMigDeviceCount 7 (0 without MIG), and has up to
// seven MIG devices (GPUSpec.MIGDevices, GPU.AddMIGDevice), each in a slot
// 0..6 that GetMigDeviceHandleByIndex answers with the device's own
// nvml.Device handle, the same value every time. A free slot answers
// ERROR_NOT_FOUND, an index outside 0..6 ERROR_INVALID_ARGUMENT, and a GPU
// without MIG ERROR_NOT_SUPPORTED. On a GPU's handle IsMigDeviceHandle is
// false and GetDeviceHandleFromMigDeviceHandle, GetGpuInstanceId and
// GetComputeInstanceId answer ERROR_INVALID_ARGUMENT. The GPU's compute
// process list holds its MIG devices' processes (with their instance IDs)
// besides its own, and its used memory theirs.
//
// A MIG device's handle (see MIG for the full list) reports
// IsMigDeviceHandle true, its parent, instance IDs, UUID ("MIG-…"), name
// ("NVIDIA H100 80GB HBM3 MIG 1g.10gb"), memory, attributes and processes,
// and the parent's PCI info; GetIndex, the MIG-mode functions and the
// utilization, clock, power, temperature, ECC, sample and field-value
// queries answer ERROR_NOT_SUPPORTED. DeviceGetHandleByUUID takes MIG
// UUIDs, and the legacy "MIG-GPU-<GPU UUID>/<GI>/<CI>" form. Calls count
// under the GPUs' names ("Device.GetUUID"). A lost parent makes its MIG
// devices answer ERROR_GPU_IS_LOST; GPU.Fail and GPU.Unsupported do not
// reach them (MIG.Fail does). GPU.RemoveMIGDevice and disabling MIG end
// MIG devices: their handles answer ERROR_INVALID_ARGUMENT from then on.
//
// # vGPU
//
// A GPU in host-vGPU mode (GPUSpec.VgpuHost, GPU.SetVgpuHost) reports
// GetVirtualizationMode GPU_VIRTUALIZATION_MODE_HOST_VGPU (NONE otherwise)
// and hosts vGPU instances (GPUSpec.Vgpus, GPU.AddVgpu), each a Vgpu with
// an nvml.VgpuInstance handle. Outside host mode GetActiveVgpus,
// GetVgpuUtilization and GetVgpuProcessUtilization answer
// ERROR_NOT_SUPPORTED, as do MIG device handles; in it:
//   - GetActiveVgpus lists the live instances' handles in creation order,
//     the same value every time (an empty list, SUCCESS, without any).
//   - GetVgpuUtilization(lastSeen) returns one sample per instance whose
//     newest sample is newer than lastSeen (µs on the fake clock, as for
//     GetSamples): VgpuInstance is the instance ID, SmUtil, MemUtil (the
//     framebuffer), EncUtil and DecUtil little-endian uint32s, value type
//     VALUE_TYPE_UNSIGNED_INT. Without instances it succeeds with no
//     samples; with instances but no newer sample it answers
//     ERROR_NOT_FOUND. An instance samples when created, at every
//     Vgpu.SetUtilization and at every Fleet.Advance (the last 120 kept).
//   - GetVgpuProcessUtilization(lastSeen) returns, per guest process, its
//     newest sample if newer than lastSeen (ERROR_NOT_FOUND when there is
//     none), taken as GPU processes' are: at start if busy, at
//     Vgpu.SetProcessUtilization and at every Fleet.Advance while busy.
//   - GetMemoryInfo counts the instances' framebuffers as used.
//
// An instance's handle answers its identity (GetUUID, GetMdevUUID, GetVmID,
// GetGpuPciId, GetGpuInstanceId: 0xFFFFFFFF unless MIG-backed),
// GetVmDriverVersion, GetFbUsage, GetType, GetFrameRateLimit
// (ERROR_NOT_SUPPORTED with the limiter off), GetEccMode, Get- and
// SetEncoderCapacity, GetLicenseStatus, GetLicenseInfo (expiry in UTC with
// status 2, valid; status 4, permanent, without an expiry; status 0 when
// unlicensed), and per-process accounting of its guest processes,
// modelled as on a GPU (Vgpu.SetAccountingMode); the rest answer
// ERROR_NOT_SUPPORTED. It also has Handle() uint32, the instance ID, and
// GetPlacementId, which go-nvml v0.13.3-1's interface lacks: find them by
// type assertion. Vgpu.Destroy ends an instance: every method of its handle
// answers ERROR_NOT_FOUND from then on, and Vgpu.DestroyOnCall arms the next
// call of a method to do so first. Vgpu.Fail injects errors; the parent's
// GPU.Fail does not reach the handle, its loss does (ERROR_GPU_IS_LOST).
//
// GetType's handle, one per type ID in the fleet, answers GetName,
// GetFramebufferSize, GetClass ("Compute", "Quadro" or "NVS" by the last
// letter of the name), GetLicense, GetFrameRateLimit,
// GetMaxInstances(dev) (the GPU's memory over the type's framebuffer) and
// GetMaxInstancesPerVm (1), and has Handle() uint32, the type ID.
//
// # Faults, metrics and counting
//
// GPU.Unsupported and GPU.Fail take metric names (MetricNames) or
// nvml.Device method names; a metric stands for the methods and field IDs
// behind it:
//
//	metric               Device methods (field IDs)
//	name, uuid, serial, index, minor_number, pci_info, brand, architecture
//	                     GetName, GetUUID, GetSerial, GetIndex, GetMinorNumber,
//	                     GetPciInfo, GetBrand, GetArchitecture
//	compute_capability   GetCudaComputeCapability
//	memory               GetMemoryInfo, GetMemoryInfo_v2
//	bar1                 GetBAR1MemoryInfo
//	utilization          GetUtilizationRates
//	encoder, decoder     GetEncoderUtilization, GetDecoderUtilization
//	clocks, max_clocks   GetClockInfo, GetMaxClockInfo
//	fan_speed            GetFanSpeed, GetFanSpeed_v2, GetNumFans
//	temperature          GetTemperature, GetTemperatureV
//	power                GetPowerUsage (FI_DEV_POWER_AVERAGE, FI_DEV_POWER_INSTANT)
//	power_limit          GetPowerManagementLimit, GetEnforcedPowerLimit,
//	                     GetPowerManagementDefaultLimit
//	                     (FI_DEV_POWER_CURRENT_LIMIT, FI_DEV_POWER_DEFAULT_LIMIT)
//	energy               GetTotalEnergyConsumption (FI_DEV_TOTAL_ENERGY_CONSUMPTION)
//	pcie                 GetPcieThroughput (FI_DEV_PCIE_COUNT_TX_BYTES, _RX_BYTES)
//	nvlink               GetNvLinkState (FI_DEV_NVLINK_LINK_COUNT,
//	                     FI_DEV_NVLINK_THROUGHPUT_DATA_TX, _RX)
//	ecc                  GetTotalEccErrors, GetEccMode (FI_DEV_ECC_DBE_VOL_TOTAL)
//	pstate               GetPerformanceState, GetPowerState
//	persistence_mode     GetPersistenceMode
//	compute_mode         GetComputeMode
//	display              GetDisplayActive, GetDisplayMode
//	mig_mode             GetMigMode, GetMaxMigDeviceCount,
//	                     GetMigDeviceHandleByIndex
//	processes            GetComputeRunningProcesses, GetGraphicsRunningProcesses,
//	                     GetMPSComputeRunningProcesses
//	process_utilization  GetProcessUtilization
//	field_values         GetFieldValues
//	accounting           GetAccountingMode, SetAccountingMode, GetAccountingPids,
//	                     GetAccountingStats, GetAccountingBufferSize,
//	                     ClearAccountingPids
//
// Fleet.Calls counts calls by function: library-level methods by name
// ("DeviceGetCount"), device methods with a "Device." prefix
// ("Device.GetMemoryInfo_v2"), summed over GPUs and MIG devices, vGPU
// instance methods with "VgpuInstance." ("VgpuInstance.GetFbUsage") and
// vGPU type methods with "VgpuTypeId." ("VgpuTypeId.GetName").
//
// Fleet's fake clock (Now, Advance) starts at 2025-01-01T00:00:00Z and
// drives sample and field timestamps and the energy and PCIe byte counters.
//
// # Scenarios
//
// A scenario is a JSON description of a fleet: [LoadScenario] and
// [ParseScenario] read one, and so do [Load] and the --simulate flag of nvgo's
// tools. The position of a GPU in "gpus" is its NVML index:
//
//	{"driver_version": "580.95.05", "cuda_driver_version": 13000,
//	 "gpus": [{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-2b5e1c3a-9f0d-4c6e-8a7b-1d2e3f405162",
//	           "bus_id": "00000000:17:00.0", "memory_total_mib": 81559, "memory_used_mib": 1024,
//	           "gpu_util": 37, "mem_util": 12, "temperature_c": 41, "power_mw": 72000,
//	           "power_limit_mw": 700000, "unsupported": ["fan_speed"], "lost": false,
//	           "processes": [{"pid": 4242, "type": "C", "used_memory_mib": 512, "sm_util": 30, "mem_util": 5}]}]}
//
// Omitted keys keep their defaults; unknown
// keys, values of the wrong type and bad values are errors that wrap
// ErrBadScenario and name the key path, e.g.
// `gpus[0].processes[1].type: want "C", "G", "C+G" or "M+C", got "X"`.
// A key repeated in one object is an error too, at any depth
// (`gpus[0].gpu_util: duplicate key`), not a silent choice of one value.
// A scenario file must be a regular file, symlinks followed: a named pipe,
// device or directory is refused at once, without reading or waiting on it.
// A scenario file may be at most 16 MiB, far more than any real scenario
// needs, so that naming something endless cannot exhaust memory.
//
// Top-level keys:
//
//	key                  type      meaning (default)
//	preset               string    start from Preset(name); "gpus" entries then
//	                               override its GPUs by position and may add more
//	driver_version       string    SystemGetDriverVersion ("580.95.05")
//	cuda_driver_version  int       SystemGetCudaDriverVersion (13000)
//	nvml_version         string    SystemGetNVMLVersion ("13.580.95.05": CUDA
//	                               major and driver version)
//	missing_symbols      [string]  NVML symbols the driver lacks, e.g.
//	                               "nvmlDeviceGetMemoryInfo_v2"
//	init_error           string    Init fails with this code: LIBRARY_NOT_FOUND,
//	                               DRIVER_NOT_LOADED, LIB_RM_VERSION_MISMATCH, …
//	gpus                 [object]  the GPUs; the position is the NVML index
//
// Keys of a GPU:
//
//	key                  type      meaning (default)
//	model                string    a100, h100, h200 or b200: the defaults below
//	                               (the preset's model, else h100)
//	name                 string    product name (the model's, e.g.
//	                               "NVIDIA H100 80GB HBM3")
//	uuid                 string    GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (derived)
//	bus_id               string    PCI bus ID, any form NVML accepts; reported as
//	                               00000000:18:00.0 (DGX H100 buses 18, 2A, 3A,
//	                               5D, 9A, AB, BA, DB, then domain 1, 2, …)
//	serial               string    board serial (13 derived digits)
//	compute_capability   string    "major.minor", e.g. "9.0" (the model's)
//	memory_total_mib     uint      framebuffer size (the model's)
//	memory_reserved_mib  uint      driver-reserved memory (0.5% of the total)
//	memory_used_mib      uint      allocated memory, reserved excluded (sum of
//	                               the processes' memory)
//	bar1_total_mib       uint      BAR1 size (128 or 256 GiB)
//	bar1_used_mib        uint      BAR1 in use (2)
//	gpu_util, mem_util   0..100    GetUtilizationRates (0)
//	enc_util, dec_util   0..100    encoder and decoder utilization (0)
//	temperature_c        uint      GPU temperature in °C (30); the memory
//	                               (HBM) temperature, field 82, is 3 °C above
//	power_mw             uint      power draw in mW (the model's idle power)
//	power_limit_mw       uint>0    current and enforced power limit (the model's)
//	clocks               object    current clocks in MHz: graphics, sm, memory,
//	                               video (345, 345, max memory, 765)
//	max_clocks           object    maximum clocks, same keys (the model's)
//	fan_speed            0..100    fan speed in %; gives the board a fan (none)
//	pstate               0..15     performance state (0)
//	persistence_mode     bool      (true)
//	compute_mode         string    Default, Exclusive_Process or Prohibited
//	                               (Default)
//	display_active       bool      (false)
//	display_mode         bool      (false)
//	ecc_errors           uint      uncorrected ECC errors (0)
//	pcie_tx_kbps         uint      PCIe TX throughput in KB/s (0)
//	pcie_rx_kbps         uint      PCIe RX throughput in KB/s (0)
//	nvlink_links         0..36     NVLink links; 0 = no NVLink (12 or 18)
//	nvlink_tx_kib        uint      NVLink TX data counter, all links, KiB (0)
//	nvlink_rx_kib        uint      NVLink RX data counter, all links, KiB (0)
//	mig_mode             0 or 1    current and pending MIG mode (0)
//	mig_enabled          bool      the same as mig_mode 1 or 0 (false); giving
//	                               both, disagreeing, is an error
//	mig_devices          [object]  MIG devices; need MIG enabled; replace a
//	                               preset's (kept unless MIG is disabled)
//	unsupported          [string]  metrics (or Device methods) answering
//	                               NOT_SUPPORTED, e.g. ["fan_speed"]
//	errors               object    metric → NVML error name it answers, e.g.
//	                               {"temperature": "NO_PERMISSION"}
//	lost                 bool      the GPU fell off the bus (false)
//	accounting           bool      per-process accounting on, so processes
//	                               get records (false)
//	processes            [object]  running processes; replaces a preset's
//	                               (those of its MIG devices stay)
//	vgpu_host            bool      host-vGPU mode (true with vgpu_instances);
//	                               false drops a preset's instances
//	vgpu_instances       [object]  vGPU instances; need a vGPU host; replace a
//	                               preset's
//
// Keys of a process:
//
//	key                  type      meaning (default)
//	pid                  uint>0    host PID, unique on the GPU (required)
//	name                 string    SystemGetProcessName ("python3")
//	type                 string    "C", "G", "C+G" or "M+C" ("C")
//	used_memory_mib      int       GPU memory; -1 = not available (0)
//	sm_util, mem_util    0..100    GetProcessUtilization sample (0)
//	enc_util, dec_util   0..100    GetProcessUtilization sample (0)
//	gpu_instance_id      uint      MIG GPU instance, reported with MIG on
//	compute_instance_id  uint      MIG compute instance, reported with MIG on
//	host                 object    host facts (Process.Host), served by
//	                               package fakehost; none: the PID is left
//	                               to the real /proc
//
// Keys of a process's host:
//
//	key                  type      meaning (default)
//	user                 string    owner ("root")
//	command              [string]  command line ([name])
//	cpu                  float     share of one CPU in percent (0)
//	memory_mib           uint      resident memory (0)
//	age                  duration  how long it has run, e.g. "3h20m" (0s)
//
// Keys of a MIG device:
//
//	key                  type      meaning (default)
//	gi                   0..65535  GPU instance ID (required)
//	ci                   0..65535  compute instance ID (0); the pair is unique
//	                               on the GPU
//	profile              string    "1g.10gb", or "1c.3g.40gb" with a compute
//	                               instance part; at most 7 slices (required)
//	memory_total_mib     uint>0    its memory (1000 per GB of the profile);
//	                               the GPU instances' must fit in the GPU's
//	index                0..6      GetMigDeviceHandleByIndex slot (its
//	                               position); skip slots to model gaps
//	uuid                 string    MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx,
//	                               unique in the fleet (derived)
//	processes            [object]  its processes, keys as above; type "C"
//	                               only, instance IDs the device's, PIDs
//	                               unique on the GPU
//
// Keys of a vGPU instance (all optional):
//
//	key                  type      meaning (default)
//	id                   uint>0    vGPU instance ID, unique in the fleet (derived)
//	uuid                 string    xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, unique in
//	                               the fleet (derived)
//	type                 string    type name ending in "-<GiB><class>", e.g.
//	                               "NVIDIA H100-20C" (a compute type with a quarter
//	                               of the GPU's memory)
//	type_id              uint>0    vGPU type ID, one per type in the fleet
//	                               (derived from the name)
//	framebuffer_mib      uint>0    the type's framebuffer (the name's GiB × 1024);
//	                               the instances' must fit in the GPU's memory
//	vm_id                string    VM ID (derived)
//	vm_id_type           string    "uuid" or "domain" ("uuid")
//	vm_driver_version    string    guest driver (the fleet's driver version)
//	fb_used_mib          uint      framebuffer in use, at most the type's (0)
//	licensed             bool      (false)
//	license_expiry       string    RFC 3339 time (none: a permanent licence)
//	frame_rate_limit     uint      fps; 0 = limiter off (0)
//	encoder_capacity     0..100    encoder share in % (100)
//	ecc                  bool      ECC mode (true)
//	placement_id         uint      GetPlacementId (0)
//	gpu_instance_id      uint      backing MIG GPU instance (none)
//	sm_util, fb_util     0..100    GetVgpuUtilization sample (0)
//	enc_util, dec_util   0..100    GetVgpuUtilization sample (0)
//	processes            [object]  guest processes: pid (uint>0, unique on the
//	                               instance, required), name ("python3"),
//	                               sm_util, mem_util, enc_util, dec_util (0..100)
//	accounting           object    enabled (bool, false), buffer_size (int>0,
//	                               4000)
//
// # The C door
//
// The same fleet also reaches programs that load NVML themselves, through
// a drop-in libnvidia-ml.so.1: nvgo built with cgo and no WithNVML, C
// programs, Python's ctypes and pynvml, atop's atopgpud. Build it with
//
//	go run ./fakegpu/cmd/libnvml -o DIR [--driver current|r470|r418]
//
// (or BuildLibNVML and CachedLibNVML from Go) and put DIR first in
// LD_LIBRARY_PATH. The library is C, compiled against go-nvml's nvml.h, and
// answers in well under a microsecond (BenchmarkCLibraryCall: about 80 ns a
// call through go-nvml). It serves the fleet named by EnvFleet
// (NVGO_FAKE_FLEET), read at the first nvmlInit:
//
//   - a preset or a scenario file, which it has its helper (nvgo-fake-fleet,
//     beside it) load and publish, with the fleet's clock following the
//     system clock, until the library shuts down or its process exits;
//   - the state file of a Mirror, which a test (or any Go program) keeps
//     in step with a fleet it steers: each Mirror.Sync publishes the fleet
//     as it is, and the client sees it at its next call. Mirror.Run
//     publishes a few times a second, with the clock following real time.
//
// What a client reads is what the fleet's Go door answers: the state file
// is written by asking the fleet through the same wired functions a
// client's calls reach (uncounted), so unsupported metrics, injected
// faults, lost GPUs, MIG devices with gaps and removed ones, vGPU
// instances, accounting records and sample buffers all carry over. On top,
// the library applies NVML's protocols: NULL or too-small buffers get
// INSUFFICIENT_SIZE and the count needed, sample and utilization calls
// answer NOT_FOUND when nothing is newer than lastSeen, versioned structs
// (nvmlMemory_v2_t, nvmlTemperature_t, nvmlProcessDetailList_t,
// nvmlVgpuPlacementId_t) are checked (ARGUMENT_VERSION_MISMATCH), calls
// before nvmlInit answer UNINITIALIZED, Init and Shutdown are refcounted,
// and nvmlErrorString answers every code. EnvInitError makes every nvmlInit
// fail with a code; a fleet that cannot be loaded makes it fail with
// DRIVER_NOT_LOADED after one line on stderr that names the file and the
// key. Each call is counted per function: LoadedLibNVMLCalls in the
// process that loaded it, and the file named by EnvCalls at the last
// nvmlShutdown and at exit.
//
// What it does not model: the C door is read-only, so calls that change
// the GPU (nvmlDeviceSetAccountingMode, nvmlDeviceClearAccountingPids,
// nvmlDeviceSetPersistenceMode, nvmlVgpuInstanceClearAccountingPids)
// answer NO_PERMISSION, as without root; DestroyOnCall does not fire; the
// fleet's MissingSymbols make the functions answer FUNCTION_NOT_FOUND,
// while the symbols stay exported (build with --driver for a library that
// lacks them); events, GPM, clocks' offsets, topology and the other
// functions nvgo, nvitop and atopgpud do not call are not exported. A
// state file holds at most 256 GPU and MIG devices, 16384 processes and
// as many accounting records; Mirror.Sync says what it had to cut.
//
// # Using the C door
//
// From nvgo's repository, or any module that requires nvgo (then the
// command is github.com/nvgo/nvgo/fakegpu/cmd/libnvml), with a C compiler:
//
//	go run ./fakegpu/cmd/libnvml -o /tmp/fakenvml
//	NVGO_FAKE_FLEET=dgx-h100-mig LD_LIBRARY_PATH=/tmp/fakenvml go run ./examples/nvgo-status
//
// [EnvFleet] also takes any preset or scenario file that Load takes, and
// [EnvInitError] a return code by name (DRIVER_NOT_LOADED, NO_PERMISSION,
// LIB_RM_VERSION_MISMATCH, …) or by number. With --driver r470 the library
// leaves out what R470 drivers lacked (nvmlDeviceGetMemoryInfo_v2, the _v3
// process lists, nvmlDeviceGetTemperatureV, …) and answers newer field IDs
// with a per-field INVALID_ARGUMENT; --driver r418 also leaves out the MIG
// functions and the _v2 process lists. [LibNVMLDrivers], and the command's
// --help, list what each lacks.
//
// A process loads one libnvidia-ml.so.1: run each client of a fleet, and each
// build of the library, in a process of its own.
//
// Python, through ctypes as pynvml does it:
//
//	import ctypes
//	nvml = ctypes.CDLL("libnvidia-ml.so.1")  # found through LD_LIBRARY_PATH
//	nvml.nvmlInit_v2()
//	n = ctypes.c_uint(); nvml.nvmlDeviceGetCount_v2(ctypes.byref(n))
//	h = ctypes.c_void_p(); nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h))
//	name = ctypes.create_string_buffer(96); nvml.nvmlDeviceGetName(h, name, 96)
//	print(n.value, name.value.decode())      # 8 NVIDIA H100 80GB HBM3
//
// C, compiled against go-nvml's nvml.h and linked against the library:
//
//	#include <stdio.h>
//	#include <nvml.h>
//
//	int main(void) {
//		nvmlDevice_t dev;
//		nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
//		if (nvmlInit_v2() != NVML_SUCCESS)
//			return 1;
//		nvmlDeviceGetHandleByIndex_v2(0, &dev);
//		nvmlDeviceGetMemoryInfo_v2(dev, &mem); /* the fleet's memory, reserved apart */
//		printf("%llu MiB total, %llu MiB reserved\n", mem.total >> 20, mem.reserved >> 20);
//		nvmlShutdown();
//		return 0;
//	}
//
// Inside a module that requires go-nvml (nvgo's, or one that requires nvgo),
// go list finds the header:
//
//	cc -I"$(go list -m -f '{{.Dir}}' github.com/NVIDIA/go-nvml)/pkg/nvml" -o client client.c -L/tmp/fakenvml -lnvidia-ml
//	NVGO_FAKE_FLEET=dgx-h100 LD_LIBRARY_PATH=/tmp/fakenvml ./client
//
// Go, through go-nvml as on a real machine, in a test that steers the fleet
// with a [Mirror] (its example runs this):
//
//	dir, err := fakegpu.CachedLibNVML(ctx, fakegpu.LibNVMLOptions{})
//	fleet, _ := fakegpu.Preset("dgx-h100")
//	m, err := fakegpu.NewMirror(fleet, filepath.Join(t.TempDir(), "fleet.state"))
//	t.Setenv(fakegpu.EnvFleet, m.Path())
//	lib, err := nvgo.Open(nvgo.WithNVML(nvml.New(nvml.WithLibraryPath(filepath.Join(dir, fakegpu.LibNVMLFile)))))
//	fleet.GPU(0).SetUtilization(90, 40)
//	m.Sync() // the library answers 90% from its next call on
//
// After Sync every NVML call sees the new state, and so does an nvgo snapshot.
// nvgo's per-metric Device methods may still serve a reading made within the
// Library's cache TTL (nvgo.DefaultCacheTTL, a second, unless nvgo.WithCacheTTL
// sets another; 0 reads at every call). [CachedLibNVML] builds the library once
// per version of its sources and options, in $NVGO_LIBNVML_CACHE, else in a
// directory private to the user in the temporary directory.
//
// # Concurrency
//
// A Fleet and its GPUs are safe for concurrent use: NVML calls and control
// calls may run from any goroutine. Fleet embeds go-nvml's moq mocks, which
// record the arguments of every call; a fleet polled for hours keeps those
// records in memory.
package fakegpu

//go:generate go run ./internal/gennorecord
