//go:build cgo

package fakegpu

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// maxScenarioFileBytes bounds what LoadScenario reads. Real scenarios are
// a few KiB; 256 GPUs with 500 processes each, every key written, come to
// about 15 MiB. A file at the element limits (maxScenarioGPUs GPUs of
// maxGPUProcesses fully written processes) would be some 125 MiB and take
// gigabytes to decode, so no useful cap admits it; this one keeps a
// mistaken --simulate argument from exhausting memory.
const maxScenarioFileBytes = 16 << 20

// readScenarioFile returns the contents of the regular file at path
// (symlinks followed). Anything else (a named pipe, a device, a
// directory), or a file over maxScenarioFileBytes, is a *ScenarioError
// naming path.
func readScenarioFile(path string) ([]byte, error) {
	// O_NONBLOCK keeps the open from waiting for a writer on a named pipe
	// or for a device; checking the opened file, not the path, leaves no
	// gap for the path to be swapped. It changes nothing for a regular file.
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("fakegpu: %w", err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("fakegpu: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, &ScenarioError{File: path, Problem: "is " + describeFileKind(info.Mode()) + ", not a regular file"}
	}
	data, err := io.ReadAll(io.LimitReader(file, maxScenarioFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fakegpu: %w", err)
	}
	if len(data) > maxScenarioFileBytes {
		return nil, &ScenarioError{File: path, Problem: fmt.Sprintf("larger than the %d MiB limit for scenario files", maxScenarioFileBytes>>20)}
	}
	return data, nil
}

// describeFileKind names, with an article, the kind of file that is not
// a regular one.
func describeFileKind(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file"
}
