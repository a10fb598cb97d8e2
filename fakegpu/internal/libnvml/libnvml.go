// Package libnvml holds nvgo's drop-in libnvidia-ml.so.1: its C sources,
// the layout of the state file it reads (state.h, with the Go types of
// ztypes.go generated from it), and the code that compiles it.
//
// Package fakegpu writes state files (fakegpu.Mirror); the library, loaded
// by any NVML client in place of the driver's, answers from them. The
// command fakegpu/cmd/libnvml builds it for users.
package libnvml

import "embed"

// Magic opens every state file (NVGO_FAKE_MAGIC in state.h).
const Magic = "NVGOFAKE"

// sources are the library's C sources and the state layout they share
// with the Go writer.
//
//go:embed state.h csrc/*.c csrc/*.h csrc/*.def
var sources embed.FS
