// Package sampling reads the driver's sample buffers: device utilization
// (nvmlDeviceGetSamples), per-process utilization, and the utilization of
// vGPU instances and of the processes inside their VMs. It is the one
// place in nvgo that moves a cursor over a buffer, decides which sample
// still counts and averages samples.
//
// A read asks the driver for the samples newer than a driver timestamp
// (µs). Every reader reads a buffer through a cursor of its own, one per
// (device, buffer, owner), so no reader takes samples away from another (a
// Device and an Accumulator read the same buffers apart); readers differ
// only in the rules they give their cursors.
//
// The owners, one per way of reading, each hold their cursors and what they
// learnt about the GPU (that it keeps no buffer, say), take an
// [nvmlx.Device] and the time, and return plain results:
//
//   - [DevicePerTick], [ProcessesPerTick] and [VgpusPerTick] count what
//     happened since the previous tick (the Accumulator);
//   - [CurrentProcesses], [CurrentVgpus] and [CurrentVgpuProcesses] keep the
//     newest sample per process or instance while it counts (Device,
//     VgpuInstance);
//   - [WindowMeans] averages the last window of the device buffers, with a
//     cursor that starts afresh (device selection).
//
// No owner is safe for concurrent use: its caller serializes the reads.
package sampling
