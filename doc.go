// Package nvgo gives Go programs a typed, trustworthy view of NVIDIA GPUs
// and the processes on them: the Go counterpart of nvitop's nvitop.api,
// built on NVML (github.com/NVIDIA/go-nvml), gopsutil and ttlcache.
//
// # Shape
//
// A [Library] is an opened NVML. [Open] returns one over the system's
// libnvidia-ml.so.1, or over any go-nvml [nvml.Interface] with [WithNVML]
// (for instance the fake fleet of package fakegpu). Open does not touch the
// driver: NVML is initialised by the first call that needs it, so Open fails
// only where NVML cannot be used at all ([ErrBuiltWithoutCGO]), and on a
// machine without a driver that first call fails with an error matching
// [ErrLibraryNotFound].
//
//	lib, err := nvgo.Open()
//	if err != nil { … }
//	defer lib.Close()
//	devs, err := lib.Devices()
//	for _, d := range devs {
//		fmt.Println(d.Index(), d.Name(), d.MemoryUsed(), "/", d.MemoryTotal(), d.GPUUtilization())
//		// 0 NVIDIA H100 80GB HBM3 8862MiB / 79.65GiB 37%
//	}
//
// Live objects hold handles and caches: [Device] (a physical GPU),
// [GpuProcess] (a process on a GPU) and [HostProcess] (the host side of a
// process). Plain data never reaches back to the driver: [Snapshot],
// [DeviceSnapshot], [GpuProcessSnapshot] and [HostStats] carry a capture
// time and JSON tags.
//
// A GPU is found by NVML index ([Library.DeviceByIndex]), by UUID
// ([Library.DeviceByUUID], which takes a unique prefix such as "GPU-5f7d",
// as CUDA does) or by PCI bus ID in any common form
// ([Library.DeviceByBusID]). [Device.Processes] lists the processes on a
// GPU, returning the same GpuProcess for a process as long as it lives;
// [GpuProcess.Host] gives its user, command line, CPU and memory, and the
// signal methods ([GpuProcess.Terminate], [GpuProcess.Kill], …) check that
// the PID still belongs to the same process (PID and start time) before they
// signal it. [Library.Snapshot] reads every GPU and its processes in one
// pass, and [ReadHost] reads the host's CPU, load, memory, swap and uptime.
//
// The package-level functions ([Devices], [DeviceByIndex], [DeviceCount],
// [DriverVersion], [TakeSnapshot], [SelectDevices], [ReserveDevices],
// [VisibleCUDADevices]) use [Default]: a Library over the system's NVML,
// opened on first use and never closed. Use Open for options (WithNVML,
// [WithCacheTTL], [WithClock], [WithHostSource], [WithLogger]) or to close
// NVML when done.
//
// # Names
//
// Type names follow nvitop's classes where nvgo mirrors one ([GpuProcess],
// [MigDevice], [CudaDevice]) and NVML's for vGPU ([VgpuInstance] and the
// other Vgpu types). Every other name writes an initialism in capitals: GPU,
// MIG, CUDA, PID, UUID, ID, NVML, NVLink, PCIe, ECC, BAR1, SM, VM (as in
// GPUUtilization, MIGDevices, CUDAIndex, [VisibleCUDADevices], NVLinkCount),
// except vGPU, which is always Vgpu, as NVML and go-nvml write it
// (VgpuInstances). A reading has one name wherever it appears: live, in
// snapshots, in an accumulator's counters and intervals.
//
// # Readings
//
// Every device reading is defined once, in nvgo's table of metrics, and is
// the same thing in four places: a [Device] method (d.MemoryTemperature()),
// a [DeviceSnapshot] field of the same name, its JSON key
// ("memory_temperature") and a [DeviceMetric] of that name, which says its
// unit, kind (gauge, counter, state), Fields group and whether a MIG device
// has it. [DeviceMetrics] lists them all, so a program that serves or shows
// readings (an exporter, a status page, a detail screen) loops over them and
// gains each reading nvgo adds; [DeviceMetric.Value] gives a reading of a
// snapshot as a number in its unit, and [DeviceMetric.Text] as nvgo prints
// it.
//
//	s := d.Snapshot(nvgo.FieldsAll)
//	for _, m := range nvgo.DeviceMetrics() {
//		if x, ok := m.Value(&s).Get(); ok {
//			fmt.Println(m.Name, x, m.Unit, m.Text(&s)) // memory_temperature 44 C 44C
//		}
//	}
//
// Readings come in Fields groups, and a caller pays in NVML calls only for
// the groups it asks for ([WithFields], [Device.Snapshot]): [FieldsStatus]
// is what an nvidia-smi-like table shows, [FieldsAll] is everything. nvgo's
// [Collector] loops over DeviceMetrics too. Inside nvgo, adding a reading is
// one entry in that table (metrics.go): a reading with an NVML field ID
// joins the batched field-value call of a snapshot with no other code, and
// one read by an NVML function of its own needs one line in internal/nvmlx.
//
// # N/A
//
// Every reading that can be unavailable is a Value[T]: real, or N/A with a
// [Reason] (not supported, no permission, GPU lost, function missing from
// the driver, process gone, not visible from this PID namespace, …) and the
// error behind it. N/A is never zero, false or an empty string: it prints
// "N/A", marshals to JSON null and sorts after every real number with
// [Compare]. A field that is not a [Value] says in its documentation why it
// cannot be unavailable.
//
// # Units
//
// A reading's type carries its unit, and prints as nvitop prints it: [Bytes]
// ("512B", "8862MiB", "79.65GiB": whole MiB below 20 GiB, as nvitop's
// bytes2human), [Percent] ("37%", "5.2%"), [MilliWatts] ("66W";
// [PowerStatus] gives "66W / 250W"), [Celsius] ("41C"), [MHz] ("1410MHz"),
// [MilliJoules] ("1.23kJ"), [KiBPerSecond] (a rate printed as Bytes, with
// "/s"), [PState] ("P0") and [OnOff] ("On"). The number inside is NVML's
// unit (bytes, milliwatts, …), which is also what a quantity marshals to in
// JSON; methods such as [Bytes.GiB] and [MilliWatts.Watts] convert it.
// [HumanDuration] prints a duration as nvitop does ("5:07", "46:13:33", "4.5
// days"), [CommandJoin] a command line as a shell user reads it, and
// [ParseBytes] reads a size as nvitop's human2bytes does: "10k" is 10000
// bytes, "10ki" and "10KiB" are 10240.
//
// # Errors
//
// Errors wrap typed sentinels for errors.Is, so that no caller compares
// strings. A failure of NVML wraps an *[NVMLError] and matches one of
// [ErrLibraryNotFound] (no driver installed), [ErrDriverNotLoaded],
// [ErrDriverMismatch] (the driver was upgraded without a reboot),
// [ErrNotSupported], [ErrNoPermission], [ErrNotFound], [ErrGPULost],
// [ErrFunctionMissing] (which also matches ErrNotSupported), [ErrClosed] or
// [ErrInvalidArgument]; [IsNVMLUnavailable] tells "no usable driver here"
// from the rest. errors.As with *NVMLError gives the NVML operation and its
// raw return code, and each code ([ReturnInsufficientPower], …) is itself an
// errors.Is target. Processes add [ErrProcessGone], [ErrZombie],
// [ErrOtherPIDNamespace], [ErrNotReported] and [ErrAmbiguous] (a UUID prefix
// that matches two devices); the other sentinels are named by the functions
// that return them ([ErrTooFewDevices], [ErrUndetermined],
// [ErrAccountingOff], [ErrVgpuGone], …). A reading that is N/A keeps its
// error ([Value.Err]) beside its [Reason], and [ReasonOf] maps an error to
// its Reason.
//
// One GPU that cannot be read does not fail a call about every GPU.
// [Library.LeafDevices], [Library.MIGDevices] and [Library.SelectDevices]
// return what they could read together with a [DeviceErrors], found with
// errors.As, which names each GPU left out and why (errors.Is(err,
// ErrGPULost) through it says that a GPU fell off the bus);
// [Reservation.LeftOut] does the same for a reservation, and a snapshot sets
// the lost GPU's [DeviceSnapshot.Err].
//
// # Safety
//
// nvgo never crashes on a machine without a GPU or with an old driver. All
// NVML calls pass through one guarded adapter: after a failed nvmlInit no
// NVML call is made again (one would kill the process), and every optional
// symbol is probed once after Init so that a function missing from an older
// driver is reported as [ErrFunctionMissing] instead of being called.
//
// Built with CGO_ENABLED=0, the package still compiles and [Open] returns
// [ErrBuiltWithoutCGO].
//
// # Caching and cost
//
// Static values (name, UUID, bus ID, serial, minor number, compute
// capability, maximum clocks, NVLink link count) are read once per [Device].
//
// Per-metric Device methods ([Device.GPUUtilization], [Device.MemoryUsed],
// …) reuse a reading for [DefaultCacheTTL], one second, so a program that
// calls several of them, or one of them in a loop, makes one NVML call per
// group per second. A change on the GPU shows in them once the reading has
// expired. [WithCacheTTL] sets another duration; zero or less makes every
// call read anew. Snapshots never use the cache: [Library.Snapshot] and
// [Device.Snapshot] read every dynamic value they are asked for, and leave
// their readings for the per-metric methods. [Device.AccountingMode], the
// accounting records and a [VgpuInstance]'s dynamic readings are read on
// every call.
//
// Library.Snapshot reads with the fewest NVML calls: process lists take one
// call per kind with a buffer sized from the previous answer, per-process
// utilization keeps a cursor at the newest driver sample seen, power, power
// limit, ECC, NVLink and PCIe counters come from one batched field-value
// call, a reading the GPU answered "not supported" (or an old driver
// "invalid argument") is not asked again, and each host process costs one
// read of /proc/PID/stat, on a descriptor kept open while a GPU lists the
// process. The measured costs, and the commands that measure them, are in
// docs/benchmarks.md in nvgo's repository.
//
// # Concurrency
//
// [Library], [Device], [GpuProcess], [HostProcess], [Accumulator] and
// [Collector] are safe for concurrent use. Reading nvgo starts no goroutine;
// the samplers do, one each: StartAccumulator until its context ends, and
// [Collector.Start] and [Collector.CollectInBackground] until theirs ends.
// All of them keep time on the Library's clock ([WithClock]).
//
// # Logging
//
// nvgo writes no log unless it is given a logger: [WithLogger] hands a
// [Library] a *[slog.Logger] for debug messages. What a caller needs to
// know, such as a GPU left out of a selection, is in the result, never only
// in a log.
//
// # Host
//
// The host processes behind GPU PIDs are read from a [host.Source] (package
// host): this machine's procfs by default, another with [WithHostSource]
// (package fakegpu/fakehost gives a fake fleet's processes believable owners
// and command lines).
//
// NVML reports host PIDs. Inside a container without --pid=host they are not
// visible, and nvgo reports the host fields as N/A with reason
// [OtherPIDNamespace] rather than read whichever process holds that PID in
// the container.
//
// # MIG devices
//
// On a GPU with MIG mode on, work runs on MIG devices. [Device.MIGDevices]
// lists those of one GPU and [Library.MIGDevices] those of every GPU, in MIG
// index order: every index up to the GPU's maximum is tried and the empty
// ones skipped, so the indices can have gaps. [Library.MIGDeviceByUUID]
// finds one by UUID, by a unique prefix, or by the form drivers before R470
// used, "MIG-GPU-<GPU UUID>/<GI>/<CI>". [Library.LeafDevices] lists where
// work runs: MIG devices where MIG is on, whole GPUs elsewhere.
//
//	gpu0, _ := lib.DeviceByIndex(0)
//	migs, _ := gpu0.MIGDevices()
//	for _, m := range migs {
//		fmt.Println(m, m.GPUInstanceID(), m.ComputeInstanceID(), m.MemoryUsed(), "/", m.MemoryTotal())
//		// MIG 0/3 (1g.10gb) 9 0 0B / 9984MiB
//	}
//
// A [MigDevice] embeds the *[Device] that reads its handle, so every metric
// method is there. Memory, BAR1 and processes are the MIG device's own. What
// NVML keeps only per physical GPU (utilization, clocks, power, temperature,
// fan, ECC, P-state, …) is N/A with reason NotSupported at no NVML call, and
// [MigDevice.Parent] has it. Its processes' SM and memory utilization are
// N/A too, never 0%: NVML keeps no per-process samples on MIG.
// [MigDevice.Profile] comes from the driver's name for the device ("… MIG
// 1g.10gb"), else from its slice counts and memory. A snapshot with
// [FieldMIGDevices] carries a GPU's MIG devices in
// [DeviceSnapshot.MIGDevices] (JSON "mig_devices"), each with its processes
// under it and its "mig_index", "gpu_instance_id", "compute_instance_id" and
// "mig_profile", which are null on a physical GPU.
//
// # vGPU hosts
//
// On a host that shares its GPUs with virtual machines through NVIDIA vGPU,
// [Device.VgpuInstances] lists a GPU's vGPU instances
// ([Library.VgpuInstances] those of every GPU). A [VgpuInstance] reads what
// the vGPU manager knows of it: its VM, type, license, framebuffer,
// utilization, the busy processes inside the VM and per-instance accounting.
// The example of Library.VgpuInstances reads each of these on the fake
// fleet's vGPU host.
//
//   - Bare metal costs nothing. On a GPU that is not a vGPU host, on a MIG
//     device and with a driver without the vGPU functions, the list is empty
//     and the error nil. The GPU's virtualization mode
//     ([Device.VirtualizationMode]) is static and read once; after that,
//     listing makes no NVML call.
//   - Identity (UUID, type, VM, placement ID, backing MIG GPU instance) is
//     read once. Framebuffer, license, frame-rate limit (N/A NotSupported
//     when the limiter is off, as for compute types), encoder capacity, ECC,
//     guest driver version and accounting mode are read at every call.
//   - Utilization follows NVML's lastSeenTimeStamp contract: one
//     nvmlDeviceGetVgpuUtilization call per GPU serves all its instances,
//     and the device keeps a cursor at the newest sample seen, so no sample
//     is counted twice (the accumulator keeps a cursor of its own).
//     [VgpuInstance.Processes] does the same with
//     nvmlDeviceGetVgpuProcessUtilization. The driver lists only processes
//     that were busy in its last sample period, so an idle guest process is
//     not listed. Guest PIDs are the VM's: they mean nothing on the host,
//     and two VMs can share one. The …UtilizationInfo variants are not used,
//     since go-nvml cannot pass them a buffer.
//   - Instances come and go with their VMs. An instance destroyed after it
//     was listed reads as N/A with reason InstanceGone, and its errors match
//     [ErrVgpuGone] and [ErrNotFound]. A snapshot stops reading an instance
//     once it is found gone, and a GPU that falls off the bus stops the
//     whole pass.
//   - Accounting is per instance, turned on inside the VM. The records live
//     in a circular buffer, so once it is full a new process overwrites the
//     oldest record; where a guest PID was reused only the process that
//     ended last is kept, and before the buffer is full some earlier
//     processes may not be listed at all. With accounting off every read
//     wraps [ErrAccountingOff] and matches [ErrNotSupported].
//     [VgpuInstance.ClearAccountedPIDs] needs root on the host.
//   - The license comes from nvmlVgpuInstanceGetLicenseInfo_v2 (go-nvml
//     falls back to the first version where the driver lacks it): licensed
//     or not, the [LicenseState], and the expiry, N/A for a permanent
//     license.
//   - go-nvml v0.13.3-1 declares nvmlVgpuInstanceGetPlacementId but exports
//     no method for it, so nvgo looks the symbol up in the loaded NVML
//     itself (R550 and later): [VgpuInstance.PlacementID] is N/A with reason
//     FunctionMissing where the driver lacks it.
//
// A snapshot with [FieldVgpuInstances] (part of [FieldsStatus] and
// [FieldsAll]) adds "virtualization_mode" and "vgpu_instances" to each
// device: [VgpuInstanceSnapshot] is plain data with JSON keys ("id", "uuid",
// "type_name", "vm_id", "licensed", "license_expiry", "framebuffer_used",
// "sm_utilization", "processes", …). "vgpu_instances" is null on a GPU that
// is not a vGPU host and [] on a host running none. The accumulator's
// [GPUCounters.Vgpus] counts each instance's utilization and framebuffer,
// and [Delta] averages them over any interval ([VgpuInterval]).
//
// None of this has run on a real vGPU host yet: the GPUs nvgo was tested on
// are bare-metal boards. The fake fleet's "vgpu-h100" preset models one.
//
// # CUDA_VISIBLE_DEVICES
//
// NVML ignores CUDA_VISIBLE_DEVICES. [Library.CUDADevices] maps a [CUDAEnv]
// (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER) to the devices CUDA would
// use, in CUDA ordinal order, as the CUDA driver reads it, without
// initialising CUDA anywhere, in microseconds.
//
//	devs, err := lib.VisibleCUDADevices()        // this process's environment
//	devs, err = lib.CUDADevices(nvgo.VisibleDevices("1,0"))
//	env, err := nvgo.ProcessCUDAEnv(pid)         // another process's, as it started
//	devs, err = lib.CUDADevices(env)
//	for _, c := range devs {
//		fmt.Println(c.CUDAIndex(), c.Index(), c.UUID(), c.MIG() != nil) // cuda:i → GPU or MIG device
//	}
//	s, err := lib.NormalizeCUDAVisibleDevices(env) // "GPU-…,MIG-…": stable across renumbering
//	i, err := lib.CUDAIndex(gpu, env)              // the reverse: which cuda:i is this device
//	if errors.Is(err, nvgo.ErrUndetermined) {      // the rules cannot decide: ask the driver
//		devs, err = lib.CUDADevicesFromDriver(ctx, env)
//	}
//
// The rules, pinned by the conformance table in cudavisible_test.go: unset
// means every device and set-but-empty none; entries are read left to right
// and the list ends at the first one CUDA rejects; indices are read as C's
// strtoul reads them (leading blanks, one sign, trailing junk ignored: "
// +1gpu" is 1, "-0" is 0, "-1" ends the list); a device named twice, even as
// two UUID prefixes, makes none visible; "GPU-" and "MIG-" entries are
// case-sensitive unique prefixes, and "MIG-GPU-<uuid>/<gi>/<ci>" is the
// pre-R470 form of a MIG device; before R570 CUDA uses one MIG device and
// then no whole GPU, from R570 one compute instance per GPU instance. Under
// CUDA_DEVICE_ORDER=PCI_BUS_ID nvgo sorts by bus ID itself.
//
// Where those rules do not settle the answer, nvgo returns an error instead
// of a guess: [ErrOrderUndetermined] for the default FASTEST_FIRST order on
// GPUs of different models (NVIDIA does not say what "fastest" means) or MIG
// devices beside whole GPUs from R570, and [ErrUndetermined], which
// ErrOrderUndetermined also matches, for indices while a GPU has MIG on, a
// list mixing indices and UUIDs, a UUID without its "GPU-" tag (which CUDA
// would read as an index), blanks before a UUID, an entry such as "0x1" that
// C reads differently in base 10 and base 0, several MIG devices where the
// driver uses one, and a list whose meaning depends on a GPU that fell off
// the bus. [Library.CUDADevicesFromDriver] settles every case: it
// re-executes the current program as a short-lived child (a hook in nvgo's
// init, keyed on a private environment variable, so the child never runs
// main) that loads libcuda.so.1, calls cuInit, cuDeviceGetCount and
// cuDeviceGetUuid_v2, and exits, so the caller never initialises CUDA. It
// costs a process start and a cuInit; answers are remembered per environment
// and set of devices, and without libcuda it fails with an error matching
// [ErrNoCUDADriver].
//
// # Choosing GPUs for a job
//
// [DeviceSnapshot.Free] is nvgo's one definition of a free device, which its
// tools share: a MIG device, or a GPU with MIG off, is free when its process
// list was read and is empty; a GPU with MIG on is free when it has at least
// one MIG device and every one of them is free (with none, no work can run
// on it). Free is N/A when it cannot be told.
//
// [Library.SelectDevices] picks devices for a job, as nvitop's
// select_devices does:
//
//	devs, err := lib.SelectDevices(ctx,
//		nvgo.WithCount(2),                         // or WithMinCount, WithMaxCount
//		nvgo.WithMinFreeMemory(20<<30),            // nvgo.ParseBytes("20GiB")
//		nvgo.WithMaxGPUUtilization(30),
//		nvgo.WithUtilizationWindow(5*time.Second), // the driver's samples, not one reading
//		nvgo.WithFreeAccounts("alice"),            // alice's own jobs count as free memory
//	)
//	var left nvgo.DeviceErrors
//	if errors.As(err, &left) { … }                 // GPUs that could not be read, and why
//	fmt.Println(nvgo.DeviceUUIDs(devs))            // for CUDA_VISIBLE_DEVICES
//
// Its other options are nvitop's too: [WithMinTotalMemory],
// [WithMaxMemoryUtilization], [WithTolerance], [WithoutSorting] and
// [WithCandidates]. The candidates are the leaf devices
// ([Library.LeafDevices]), and MIG devices obey CUDA's limits on what one
// process can use. N/A never satisfies a constraint: a GPU whose free memory
// or utilization cannot be read does not pass a minimum or maximum on it
// (nvitop lets N/A memory pass). Devices passing every strict threshold rank
// first, then those with the most free memory, the most used memory, the
// least GPU and memory utilization, and the highest index, which keeps GPU 0
// for last. With fewer devices than the minimum, [SelectDevices] returns
// those it found and an error matching [ErrTooFewDevices]. A GPU that cannot
// be read (one that fell off the bus, say) is left out, and the devices are
// chosen among the others; the error is then a [DeviceErrors] that names it,
// beside a full choice, and nothing is logged. [DeviceUUIDs] gives the
// choice's UUIDs and [DeviceIndices] its NVML indices, with an error
// matching [ErrInvalidArgument] for a MIG device, which has no index of its
// own.
//
// # Reservations
//
// Two launchers that read the same snapshot pick the same "free" GPU.
// [Library.ReserveDevices] selects as [SelectDevices] does and reserves what
// it picked, so that launchers using nvgo never share a GPU:
//
//	r, err := lib.ReserveDevices(ctx, nvgo.WithCount(2), nvgo.WithMinFreeMemory(20<<30))
//	if errors.Is(err, nvgo.ErrTooFewDevices) { … } // nothing reserved
//	cmd := r.Command(ctx, "python", "train.py")     // CUDA_VISIBLE_DEVICES=<UUIDs>, locks inherited
//	if err := cmd.Start(); err != nil { … }
//	r.Release()                                     // the child holds the reservation now
//	err = cmd.Wait()                                // until it, and whatever it passed the locks to, exits
//
// A reservation is one non-blocking flock(2) per device UUID in a directory
// every user shares ([WithLockDir], else $NVGO_LOCK_DIR, else
// /run/lock/nvgo, else nvgo-locks in the temporary directory).
// [ReserveDevices] walks the ranked candidates, takes each free lock and
// re-reads the device under the lock, keeping it only if it still qualifies;
// when launchers started together leave each other short, it lets go and
// tries again a few milliseconds later. The kernel drops a lock when its
// last holder exits, so a crashed launcher leaves nothing to clean up.
// [Reservation.LeftOut] names the devices that could not be considered: GPUs
// that could not be read, and devices whose lock file cannot be locked (a
// FIFO or a symbolic link planted at its path). SelectDevices with
// [WithoutReserved] leaves reserved devices out. Reservations are advisory:
// they keep nvgo launchers apart, not programs that ignore them.
//
// # Averages over any interval: the accumulator
//
// NVML answers "how busy is the GPU" for the last moment only. A monitor
// that reads every ten minutes, or a report of who used the GPUs yesterday,
// needs the average over the whole interval. An [Accumulator] samples once a
// second, as atopgpud does, into counters that only grow; any reader
// differences two of them at its own pace.
//
//	acc, err := lib.StartAccumulator(ctx) // ticks every second until ctx ends
//	reader := acc.NewReader()             // hands over each exited process once
//	prev := reader.Read()
//	time.Sleep(10 * time.Minute)
//	iv, err := nvgo.Delta(prev, reader.Read()) // averages over the ten minutes
//	for _, g := range iv.GPUs {
//		fmt.Println(g.Index, g.GPUUtilization, g.MemoryUtilization, g.MemoryUsed)
//		for _, p := range g.Processes { // those that exited in between too (p.Exited)
//			fmt.Println(p.PID, p.Username, p.GPUSMUtilization, p.GPUMemory, p.Samples)
//		}
//	}
//
// How the accumulator counts, and what it costs:
//
//   - Counters. Per GPU: the samples, and for GPU busy, memory busy and
//     memory used the last value, the sum and the number of samples summed
//     ([UtilizationCounter], [MemoryCounter]). Per process and GPU: the same
//     for SM and memory utilization and GPU memory, its type, user and name
//     (read once), and its accounting record where accounting mode is on. A
//     metric the GPU never reported stays N/A in both its last value and its
//     sum, with the reason (atop's -1); [UtilizationCounter.Mean],
//     [MemoryCounter.Mean] and [Delta] divide by the samples actually
//     summed.
//   - Between ticks. A GPU's utilization comes from the driver's sample
//     buffers (nvmlDeviceGetSamples), read from a cursor at the newest
//     sample seen; each tick adds the time-weighted mean of the new samples,
//     so a burst between two ticks counts. Per-process utilization is read
//     the same way from nvmlDeviceGetProcessUtilization; a process with no
//     new sample in a tick counts as idle for it, so keep the tick at or
//     above the driver's sampling period (the default second is). Where a
//     GPU keeps no buffer, the instantaneous reading is used.
//   - Reads never wait. Each tick publishes an immutable Counters;
//     [Accumulator.Counters] and [Reader.Read] take it without touching
//     NVML, and [Accumulator.Updated] is closed when the next tick lands.
//   - Processes. A process is its PID plus the tick it was first seen at
//     ([ProcessKey]): one that leaves the GPU's list is final, and a PID
//     that comes back starts new counters, so counters never go backwards.
//     Each [Reader] receives each exit once, in [GPUCounters.Exited], with
//     the final counters and accounting record; a Reader created later does
//     not see earlier exits, and one that never reads keeps at most
//     [DefaultMaxPendingExits] ([WithMaxPendingExits]).
//   - Failures. A GPU that is lost keeps its counters and reports the error
//     in [GPUCounters.Err]; the others go on. A tick that reads a GPU but
//     not its process lists says so in [GPUCounters.ProcessesErr] and leaves
//     [GPUCounters.ProcessSamples] behind Samples, so "no processes" is
//     never confused with "could not list them".
//   - Timing. Tick n is due at start + n·interval, so the schedule does not
//     drift; a tick that overruns skips the ones it missed
//     ([Counters.Missed]). It ticks on the [Library]'s clock: tests open the
//     Library with WithClock(fleetclock.NewStepped(fleet)) (package
//     fakegpu/fleetclock) and step the ticks one by one on the fake fleet's
//     clock, and fleetclock.RealTime(fleet) runs a simulation in real time.
//     Options: [WithAccumulatorInterval], [WithAccumulatorDevices],
//     WithMaxPendingExits.
//   - On a fake fleet, give it the fleet's clock. The fake driver takes its
//     utilization samples only when the fleet's clock moves, so an
//     accumulator on the system clock over a fake fleet sees GPU busy from
//     the instant reading but no process samples (every process at 0% SM).
//   - Cost. A tick makes 7 NVML calls per GPU with accounting off (memory,
//     two sample buffers, two process lists, process utilization, accounting
//     mode), and one more per process with it on, as atopgpud reads the
//     records; the heap stays flat over 100,000 ticks with processes coming
//     and going. docs/benchmarks.md has the times.
//
// # Process accounting
//
// With accounting mode on, the driver keeps a record of every compute or
// graphics process that uses the GPU: its SM and memory utilization averaged
// over its whole lifetime (not over the last second, as
// [GpuProcess.GPUSMUtilization] is), the most memory it held, when it
// started, and, once it has exited, how long it ran. Records outlive their
// processes, so a job's footprint can be read after it finished, until the
// GPU's circular buffer overwrites them.
//
//	gpu0, _ := lib.DeviceByIndex(0)
//	fmt.Println(gpu0.AccountingMode()) // Off: read now, never from the cache
//	if err := gpu0.SetAccountingMode(true); errors.Is(err, nvgo.ErrNoPermission) {
//		log.Fatal("accounting mode needs root") // and resets at driver unload without persistence mode
//	}
//	pids, err := gpu0.AccountedPIDs() // sorted, running and exited alike
//	for _, pid := range pids {
//		a, ok := gpu0.ProcessAccounting(pid).Get()
//		if !ok {
//			continue // overwritten meanwhile, say
//		}
//		fmt.Println(a.PID, a.GPUUtilization, a.MemoryUtilization, a.MaxMemory, a.RunningTime, a.Running)
//		// 4242 70% 25% 8862MiB 3m0s false
//	}
//	fmt.Println(gpu0.AccountingBufferSize()) // 4000: older records are overwritten
//	rec := proc.Accounting()                 // a GpuProcess's own record, PID reuse checked
//
// The N/A rules follow NVML. With accounting off every read is N/A with
// reason NotSupported and an error that wraps [ErrAccountingOff] (and
// matches [ErrNotSupported]); a PID without a record is NotReported
// (errors.Is(err, [ErrNotFound])); [ProcessAccounting.RunningTime] is
// NotReported while the process runs, since NVML reports 0 then;
// [ProcessAccounting.MaxMemory] is NotReported where the driver has no
// figure. Accounting is per physical GPU: on a MIG device every accounting
// method is NotSupported, without an NVML call.
//
// The driver keeps one record per PID, the latest. [GpuProcess.Accounting]
// compares the record's start with the host process's start and answers
// ProcessGone when the record began more than two seconds before the process
// did: it belongs to an earlier process that had the same PID.
//
// # Interval statistics
//
// A [Collector] answers "what did this training run (or epoch, or evaluation
// pass) use?": for every host, GPU and GPU-process metric, the time-weighted
// mean, the minimum, the maximum and the last value over the span of a tag.
// It is nvitop's ResourceMetricCollector, with per-process metrics that are
// actually reported.
//
//	c, err := lib.NewCollector() // every GPU (MIG devices too); processes descended from this one
//	ctx, cancel := context.WithCancel(ctx)
//	defer cancel()               // stops every goroutine below
//	c.Start(ctx)                 // sample every second in the background until ctx ends
//	c.Activate("train")
//	for range 10 {
//		c.Activate("epoch") // nested: keys "train/epoch/…"
//		… train …
//		m, err := c.Collect(ctx) // statistics of every active tag
//		s := m.Stats["train/epoch/gpu:0/memory_used (MiB)"]
//		fmt.Println(s.Mean, s.Min, s.Max, s.Last)
//		for k, v := range m.Flatten() { … } // nvitop's keys: …/mean, …/min, …/max, …/last
//		c.Deactivate("epoch")               // ends it, and anything nested in it
//	}
//	done := c.CollectInBackground(ctx, time.Minute, func(m nvgo.Metrics, err error) bool {
//		… // err: no tag active, or no driver (the host's statistics are still in m)
//		c.Clear("train") // each report covers its own minute
//		return true      // false stops it
//	})
//	<-done // closed once the goroutine has returned
//
// [Library.NewCollector] fails only for a bad option: an interval that is
// not positive, or a root PID that no process holds. Each sample is one
// [ReadHost] and one [Library.Snapshot] with just the groups it needs. The
// keys are "host/cpu_percent (%)", "memory_percent", "swap_percent",
// "memory_used (GiB)" and "load_average (1 min)", "(5 min)" and "(15 min)"
// (the raw load, not a percentage); per device "gpu:<i>/" (a MIG device is
// "gpu:<i>:<mig index>/") every gauge of the memory, utilization, fan,
// temperature and power groups of [DeviceMetrics], in MiB, %, C or W
// ("memory_used (MiB)", "gpu_utilization (%)", "temperature (C)",
// "power_usage (W)", "memory_temperature (C)", "power_limit (W)", …); per
// process "pid:<p>/host/" "cpu_percent", "host_memory (MiB)",
// "host_memory_percent" and "running_time (min)" (only its maximum is
// flattened), and "pid:<p>/gpu:<i>/" "gpu_memory (MiB)",
// "gpu_memory_percent", "gpu_memory_utilization" and "gpu_sm_utilization". A
// process counts when it is a root ([WithRootPIDs], by default this process)
// or descends from one; answers are remembered by PID and start time, so a
// reused PID is looked up again. nvgo holds its roots itself, where nvitop's
// collector keeps them only in a WeakSet, which Python's garbage collector
// can empty.
//
// N/A is skipped, never counted as zero: an SXM board has no "fan_speed" key
// at all, and a MIG device no utilization. The mean is the area under the
// straight lines joining a metric's samples (across N/A samples too),
// divided by the time covered; the first value counts from the tag's start,
// or from its own sample for a metric first seen later (a process that
// started mid-epoch). Collect samples first when the latest sample is older
// than half the interval; the background sampler keeps to start + n·interval
// and skips deadlines it missed rather than bunching them.
// [WithCollectorDevices] with no device samples the host alone, without
// NVML; without a driver Collect still returns the host's statistics, with
// an error matching [ErrLibraryNotFound]. A Collector ticks on the
// [Library]'s clock ([WithClock]), which tests make a fake one.
//
// # Building programs that use nvgo
//
//   - NVML is reached through cgo: build with CGO_ENABLED=1 and a C compiler
//     (gcc). libnvidia-ml is not needed at build time, only at run time; a
//     binary runs on a machine without it, where every call returns an error
//     matching [ErrLibraryNotFound].
//   - With CGO_ENABLED=0 nvgo still compiles, and [Open] returns
//     [ErrBuiltWithoutCGO]. Package fakegpu (and fakegpu/fleetclock,
//     fakegpu/fakehost) then has no API at all, since it stands on go-nvml's
//     cgo types: a test that uses it fails to build with "undefined:
//     fakegpu.Preset". Put //go:build cgo on such test files.
//   - Do not link statically (-extldflags -static): nvmlInit crashes in a
//     static binary.
//   - go-nvml leaves NVML's symbols to be bound when first called. A binary
//     linked with -z now, as some hardened toolchains do by default, cannot
//     start on a machine without the driver ("undefined symbol"); build it
//     with -ldflags=-extldflags=-Wl,-z,lazy. LD_BIND_NOW=1 in the
//     environment has the same effect at run time, and no build flag undoes
//     it: leave it unset.
//   - go-nvml's copy of nvml.h marks many functions deprecated; set
//     CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations" for a quiet build.
//
// # Testing without a GPU
//
// Package [github.com/nvgo/nvgo/fakegpu] is a programmable fake fleet of
// GPUs that implements go-nvml's [nvml.Interface]: open a [Library] on it
// with [WithNVML], and code built on nvgo runs in tests on any machine.
// Package fakegpu/fleetclock gives nvgo's samplers the fleet's clock, and
// package fakegpu/fakehost gives its processes a host side. The same fleet
// is also a drop-in libnvidia-ml.so.1 for programs that load NVML
// themselves. The runnable examples of this package use it.
package nvgo
