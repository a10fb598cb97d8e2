//go:build cgo

// Package fakehost gives nvgo a host for a fake fleet: an nvgo.HostSource
// under which the fleet's processes that carry host facts
// (fakegpu.Process.Host) are believable host processes, with an owner, a
// command line, a start time, and CPU and memory use, while every other PID
// reads the real procfs. Open a Library with it to make a simulated table
// look like a real node's:
//
//	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithHostSource(fakehost.New(fleet)))
package fakehost

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// clockTicksPerSecond is USER_HZ, the unit of the times in /proc/PID/stat.
const clockTicksPerSecond = 100

// firstUID is where the user IDs of simulated users start: far above those
// of real accounts, so that no real user's name is taken over.
const firstUID = 2_000_000_000

// Source is the host of a fake fleet (see the package documentation).
type Source struct {
	fleet *fakegpu.Fleet
	real  nvgo.HostSource
	made  time.Time // Host.Age counts back from here

	bootOnce sync.Once
	boot     time.Time
}

// New returns the host of fleet, over the real procfs.
func New(fleet *fakegpu.Fleet) *Source {
	return &Source{fleet: fleet, real: nvgo.HostProcFS(), made: time.Now()}
}

// uidOf returns the user ID of a simulated user name, the same on every run.
func uidOf(user string) uint32 {
	if user == "" || user == "root" {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(user))
	return firstUID + h.Sum32()%1_000_000
}

// ReadFile implements nvgo.HostSource.
func (s *Source) ReadFile(pid int, name string, buf []byte) ([]byte, error) {
	if pid > 0 {
		if p, ok := s.fleet.HostProcess(uint32(pid)); ok {
			return s.file(p, name)
		}
	}
	return s.real.ReadFile(pid, name, buf)
}

// file returns one procfs file of a simulated process.
func (s *Source) file(p fakegpu.Process, name string) ([]byte, error) {
	h := p.Host
	path := fmt.Sprintf("/proc/%d/%s", p.PID, name)
	comm := p.Name
	if comm == "" {
		comm = "python3"
	}
	if len(comm) > 15 {
		comm = comm[:15] // the kernel's cut
	}
	switch name {
	case "stat":
		// A process cannot have started before the host and its parent,
		// PID 1: on a host up for less than Age it started a minute after
		// boot (or when the source was made, on a younger host).
		boot := s.bootTime()
		start := s.made.Add(-h.Age)
		if earliest := boot.Add(time.Minute); start.Before(earliest) {
			start = earliest
			if s.made.Before(start) {
				start = s.made
			}
		}
		startTicks := int64(start.Sub(boot) * clockTicksPerSecond / time.Second)
		ran := max(time.Since(start).Seconds(), 0)
		busy := uint64(h.CPU / 100 * ran * clockTicksPerSecond)
		utime, stime := busy*85/100, busy-busy*85/100
		rss := h.Memory / uint64(os.Getpagesize())
		return fmt.Appendf(nil, "%d (%s) S 1 %d %d 0 -1 4194560 0 0 0 0 %d %d 0 0 20 0 8 0 %d %d %d 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
			p.PID, comm, p.PID, p.PID, utime, stime, startTicks, h.Memory*2, rss), nil
	case "status":
		uid := uidOf(h.User)
		return fmt.Appendf(nil, "Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t1\nTracerPid:\t0\nUid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\n",
			comm, p.PID, p.PID, uid, uid, uid, uid, uid, uid, uid, uid), nil
	case "cmdline":
		args := h.Command
		if len(args) == 0 {
			args = []string{comm}
		}
		var b bytes.Buffer
		for _, a := range args {
			b.WriteString(a)
			b.WriteByte(0)
		}
		return b.Bytes(), nil
	case "environ":
		// Another user's environment, as an unprivileged reader meets it.
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
}

// bootTime is the real host's boot time (the btime of /proc/stat), so that
// simulated start times sit among real ones; the source's making time when
// it cannot be read.
func (s *Source) bootTime() time.Time {
	s.bootOnce.Do(func() {
		s.boot = s.made
		b, err := s.real.ReadFile(0, "stat", nil)
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "btime "); ok {
				if secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					s.boot = time.Unix(secs, 0)
				}
			}
		}
	})
	return s.boot
}

// ReadLink implements nvgo.HostSource. A simulated process's links belong
// to another user.
func (s *Source) ReadLink(pid int, name string) (string, error) {
	if pid > 0 {
		if _, ok := s.fleet.HostProcess(uint32(pid)); ok {
			return "", &fs.PathError{Op: "readlink", Path: fmt.Sprintf("/proc/%d/%s", pid, name), Err: fs.ErrPermission}
		}
	}
	return s.real.ReadLink(pid, name)
}

// PIDs implements nvgo.HostSource: the real processes and the simulated.
func (s *Source) PIDs() ([]int, error) {
	pids, err := s.real.PIDs()
	for _, pid := range s.fleet.HostPIDs() {
		pids = append(pids, int(pid))
	}
	return pids, err
}

// Username implements nvgo.HostSource: a simulated user's name, else the
// system's.
func (s *Source) Username(uid uint32) (string, error) {
	if uid >= firstUID {
		for _, pid := range s.fleet.HostPIDs() {
			if p, ok := s.fleet.HostProcess(pid); ok && uidOf(p.Host.User) == uid {
				return p.Host.User, nil
			}
		}
		return "", errors.New("fakehost: no simulated user with that ID")
	}
	return s.real.Username(uid)
}

// HostPIDs implements nvgo.HostSource: the fleet's PIDs are this host's.
func (s *Source) HostPIDs() bool { return true }
