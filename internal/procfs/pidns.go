package procfs

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// NVML reports PIDs as the initial (host) PID namespace sees them; the
// driver does not translate them (NVIDIA/nvidia-docker#1483). In a
// container without --pid=host such a PID is either missing or names an
// unrelated process, so host-process data is only read for NVML PIDs when
// we share the host's PID namespace.

// procPIDInitIno is PROC_PID_INIT_INO from include/linux/proc_ns.h: the
// fixed inode number of the initial PID namespace (Linux 3.8 and later).
const procPIDInitIno = 0xEFFFFFFC // 4026531836

// readPIDNamespaceLink returns the target of /proc/self/ns/pid, such as
// "pid:[4026531836]". Tests replace it.
var readPIDNamespaceLink = func() (string, error) { return os.Readlink("/proc/self/ns/pid") }

var (
	pidnsOnce   sync.Once
	pidnsIsHost bool
)

// InHostPIDNamespace reports whether this process runs in the initial PID
// namespace, so that PIDs from NVML name the processes we see in /proc.
// When the link cannot be read or parsed (no procfs, an old kernel, a
// non-Linux system) it assumes true, as nvitop does. The answer is
// computed once.
func InHostPIDNamespace() bool {
	pidnsOnce.Do(func() { pidnsIsHost = IsHostPIDNamespaceLink(readPIDNamespaceLink()) })
	return pidnsIsHost
}

// IsHostPIDNamespaceLink decides from the target of /proc/self/ns/pid (or
// the error reading it).
func IsHostPIDNamespaceLink(link string, err error) bool {
	if err != nil {
		return true
	}
	s, ok := strings.CutPrefix(link, "pid:[")
	if !ok {
		return true
	}
	s, ok = strings.CutSuffix(s, "]")
	if !ok {
		return true
	}
	ino, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return true
	}
	return ino == procPIDInitIno
}
