// Package nvgo gives Go programs a typed, trustworthy view of NVIDIA GPUs and
// the processes on them: the Go counterpart of nvitop's nvitop.api, built on
// NVML (github.com/NVIDIA/go-nvml), gopsutil and ttlcache.
//
// # Shape
//
// A Library is an opened NVML. Open returns one over the system's
// libnvidia-ml.so.1, or over any go-nvml nvml.Interface with WithNVML (for
// instance the fake fleet of package fakegpu); the package-level functions
// (Devices, DeviceByIndex, TakeSnapshot, …) use a lazily opened Default.
//
//	lib, err := nvgo.Open()
//	defer lib.Close()
//	devs, err := lib.Devices()
//	fmt.Println(devs[0].Name(), devs[0].MemoryUsed(), devs[0].GPUUtilization())
//
// Live objects hold handles and caches: Device (a physical GPU), GpuProcess
// (a process on a GPU) and HostProcess (the host side of a process). Plain
// data never reaches back to the driver: Snapshot, DeviceSnapshot,
// GpuProcessSnapshot and HostStats carry a capture time and JSON tags.
//
// # Readings
//
// Every device reading is defined once, in nvgo's table of metrics, and is
// the same thing in four places: a Device method (d.MemoryTemperature()),
// a DeviceSnapshot field of the same name, its JSON key
// ("memory_temperature") and a DeviceMetric of that name, which says its
// unit, kind (gauge, counter, state), Fields group and whether a MIG device
// has it. DeviceMetrics lists them all, so a program that serves or shows
// readings (an exporter, a status page, a detail screen) loops over them
// and gains each reading nvgo adds; DeviceMetric.Value gives a reading of a
// snapshot as a number in its unit.
//
// # Names
//
// Type names follow nvitop's classes where nvgo mirrors one (GpuProcess,
// MigDevice, CudaDevice) and NVML's for vGPU (VgpuInstance and the other
// Vgpu types). Every other name writes an initialism in capitals: GPU, MIG,
// CUDA, PID, UUID, ID, NVML, NVLink, PCIe, ECC, BAR1, SM, VM (as in
// GPUUtilization, MIGDevices, CUDAIndex, VisibleCUDADevices, NVLinkCount),
// except vGPU, which is always Vgpu, as NVML and go-nvml write it
// (VgpuInstances). A reading has one name wherever it
// appears: live, in snapshots, in an accumulator's counters and intervals.
//
// # vGPU hosts
//
// On a host that shares its GPUs with virtual machines through NVIDIA vGPU,
// Device.VgpuInstances lists each GPU's vGPU instances (Library.VgpuInstances
// those of every GPU): their VM, type, license, framebuffer, utilization
// (read with a cursor at the newest driver sample, so no sample is counted
// twice), the busy processes inside each VM and per-instance accounting.
// On bare metal the list is empty, not an error, and costs no NVML call once
// the GPU's virtualization mode is known.
//
// # N/A
//
// Every reading that can be unavailable is a Value[T]: real, or N/A with a
// Reason (not supported, no permission, GPU lost, function missing from the
// driver, process gone, not visible from this PID namespace, …) and the
// error behind it. N/A is never zero, false or an empty string: it prints
// "N/A", marshals to JSON null and sorts after every real number with
// Compare. A field that is not a Value says in its documentation why it
// cannot be unavailable.
//
// # Safety
//
// nvgo never crashes on a machine without a GPU or with an old driver. All
// NVML calls pass through one guarded adapter: after a failed nvmlInit no
// NVML call is made again (one would kill the process), and every optional
// symbol is probed once after Init so that a function missing from an older
// driver is reported as ErrFunctionMissing (which also matches
// ErrNotSupported) instead of being called. Errors wrap typed sentinels
// (ErrLibraryNotFound, ErrDriverNotLoaded, ErrDriverMismatch,
// ErrNotSupported, ErrNoPermission, ErrNotFound, ErrGPULost) usable with
// errors.Is; errors.As with *NVMLError gives the raw return code, and each
// code (ReturnInsufficientPower, …) is itself an errors.Is target.
//
// Built with CGO_ENABLED=0, the package still compiles and Open returns
// ErrBuiltWithoutCGO.
//
// # Cost
//
// Static values (name, UUID, bus ID, serial, minor number, compute capability,
// maximum clocks, NVLink link count) are read once per Device. Per-metric
// methods share a short TTL cache (DefaultCacheTTL). Library.Snapshot reads
// every dynamic value fresh with the fewest NVML calls: process lists take one
// call per kind with a buffer sized from the previous answer, per-process
// utilization keeps a cursor at the newest driver sample seen, power, power
// limit, ECC, NVLink and PCIe counters come from one batched field-value
// call, a reading the GPU answered "not supported" (or an old driver
// "invalid argument") is not asked again, and each host process costs one
// read of /proc/PID/stat.
//
// # Concurrency
//
// Library, Device, GpuProcess, HostProcess, Accumulator and Collector are
// safe for concurrent use. Reading nvgo starts no goroutine; the samplers
// do, one each: StartAccumulator until its context ends, and
// Collector.Start and Collector.CollectInBackground until theirs ends. All
// of them keep time on the Library's clock (WithClock).
//
// # Host
//
// The host processes behind GPU PIDs are read from a host.Source (package
// host): this machine's procfs by default, another with WithHostSource
// (package fakegpu/fakehost gives a fake fleet's processes believable
// owners and command lines).
package nvgo
