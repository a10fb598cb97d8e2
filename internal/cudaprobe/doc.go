// Package cudaprobe asks the real CUDA driver (libcuda.so.1) which devices
// CUDA would enumerate under a given CUDA_VISIBLE_DEVICES and
// CUDA_DEVICE_ORDER, without initialising CUDA in the calling process.
//
// CUDA reads both variables once, at cuInit, and a process cannot undo
// cuInit: it keeps driver state and memory, and pins the device list for the
// rest of its life. A libcuda fault would also take the caller down. So
// Probe re-executes the running binary as a short-lived child with the
// requested environment; the child loads libcuda, calls cuInit,
// cuDeviceGetCount and cuDeviceGetUuid(_v2) per ordinal, prints one JSON
// line on stdout and exits. The parent only reads that line.
//
// # The child hook in every importing program
//
// Because the child is the caller's own executable, this package's init
// function checks for the environment variable NVGO_CUDAPROBE_CHILD. When its
// value starts with "nvgo-cudaprobe/", the process is a probe child: init
// removes the variable from its environment, runs the probe, writes the
// reply to stdout and calls os.Exit, so the program's main (or a test
// binary's TestMain) never runs. The root nvgo package imports this package,
// so every program that uses nvgo carries the hook. Nothing else sets that
// variable; without it the hook does nothing. Init functions of packages
// that Go initialises before this one do run in the child, as in any
// process start.
//
// # Environment
//
//   - NVGO_LIBCUDA: path of the CUDA driver library the child loads instead
//     of "libcuda.so.1" (for tests and unusual installs). Empty or unset
//     means the default, found through the dynamic linker's usual search.
//   - NVGO_CUDAPROBE_CHILD: the marker described above; set only by Probe.
//
// The child inherits the caller's environment, except that
// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER are replaced by the values in
// Env, and GORACE gains atexit_sleep_ms=0 (which matters only to binaries
// built with -race, such as test binaries).
//
// # Cost and concurrency
//
// One Probe costs a fork and exec of the binary plus the driver's cuInit,
// which on a real GPU host can take far longer than the process start.
// Probe keeps no state and does not memoise: the caller does. Probe is safe
// for concurrent use.
package cudaprobe
