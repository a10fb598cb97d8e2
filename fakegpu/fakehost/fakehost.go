//go:build cgo

// Package fakehost gives nvgo a host for a fake fleet: a host.Source
// under which the fleet's processes that carry host facts
// (fakegpu.Process.Host) are believable host processes, with an owner, a
// command line, a start time, and CPU and memory use, while every other PID
// reads the real procfs. Open a Library with it to make a simulated table
// look like a real node's:
//
//	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithHostSource(fakehost.New(fleet)))
package fakehost

import (
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"syscall"
	"time"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/host"
)

// firstUID is where the user IDs of simulated users start: far above those
// of real accounts, so that no real user's name is taken over.
const firstUID = 2_000_000_000

// Source is the host of a fake fleet (see the package documentation). It
// is a host.Source, safe for concurrent use.
type Source struct {
	fleet *fakegpu.Fleet
	real  host.Source
	made  time.Time // Host.Age counts back from here

	bootOnce sync.Once
	boot     time.Time
}

var _ host.Source = (*Source)(nil)

// New returns the host of fleet, over the real procfs.
func New(fleet *fakegpu.Fleet) *Source {
	return &Source{fleet: fleet, real: host.ProcFS{}, made: time.Now()}
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

// simulated returns the simulated process of pid, if there is one.
func (s *Source) simulated(pid int) (fakegpu.Process, bool) {
	if pid <= 0 || pid > 1<<32-1 {
		return fakegpu.Process{}, false
	}
	return s.fleet.HostProcess(uint32(pid))
}

// comm is a simulated process's kernel name: cut to 15 bytes, as the
// kernel cuts it.
func comm(p fakegpu.Process) string {
	name := p.Name
	if name == "" {
		name = "python3"
	}
	if len(name) > 15 {
		name = name[:15]
	}
	return name
}

// Stat implements host.Source. A simulated process sleeps, child of PID 1,
// and has used its CPU share since it started; it cannot have started
// before the host and PID 1: on a host up for less than its age it started
// a minute after boot (or when the source was made, on a younger host).
func (s *Source) Stat(pid int) (host.ProcessStat, error) {
	p, ok := s.simulated(pid)
	if !ok {
		return s.real.Stat(pid)
	}
	h := p.Host
	boot := s.bootTime()
	start := s.made.Add(-h.Age)
	if earliest := boot.Add(time.Minute); start.Before(earliest) {
		start = earliest
		if s.made.Before(start) {
			start = s.made
		}
	}
	ran := max(time.Since(start), 0)
	return host.ProcessStat{
		Name:    comm(p),
		State:   "sleeping",
		PPID:    1,
		Start:   start.Sub(boot).Truncate(10 * time.Millisecond),
		CPUTime: time.Duration(h.CPU / 100 * float64(ran)).Truncate(10 * time.Millisecond),
		RSS:     h.Memory,
	}, nil
}

// Owner implements host.Source: a simulated user's ID.
func (s *Source) Owner(pid int) (uint32, error) {
	if p, ok := s.simulated(pid); ok {
		return uidOf(p.Host.User), nil
	}
	return s.real.Owner(pid)
}

// Cmdline implements host.Source.
func (s *Source) Cmdline(pid int) ([]string, error) {
	p, ok := s.simulated(pid)
	if !ok {
		return s.real.Cmdline(pid)
	}
	if len(p.Host.Command) == 0 {
		return []string{comm(p)}, nil
	}
	return append([]string(nil), p.Host.Command...), nil
}

// Environ implements host.Source: a simulated process has no
// environment, and says so (errors.ErrUnsupported) rather than invent a
// reason.
func (s *Source) Environ(pid int) ([]string, error) {
	if _, ok := s.simulated(pid); ok {
		return nil, simulatedHasNo(pid, "environment")
	}
	return s.real.Environ(pid)
}

// Cwd implements host.Source: a simulated process has no working
// directory (errors.ErrUnsupported).
func (s *Source) Cwd(pid int) (string, error) {
	if _, ok := s.simulated(pid); ok {
		return "", simulatedHasNo(pid, "working directory")
	}
	return s.real.Cwd(pid)
}

// simulatedHasNo is the error for what a simulated process does not have.
func simulatedHasNo(pid int, what string) error {
	return fmt.Errorf("fakehost: process %d is simulated and has no %s: %w", pid, what, errors.ErrUnsupported)
}

// bootTime is the real host's boot time, so that simulated start times sit
// among real ones; the source's making time when it cannot be read.
func (s *Source) bootTime() time.Time {
	s.bootOnce.Do(func() {
		s.boot = s.made
		if t, err := s.real.BootTime(); err == nil {
			s.boot = t
		}
	})
	return s.boot
}

// BootTime implements host.Source: the real host's.
func (s *Source) BootTime() (time.Time, error) { return s.bootTime(), nil }

// Uptime implements host.Source: the real host's.
func (s *Source) Uptime() (time.Duration, error) { return s.real.Uptime() }

// MemoryTotal implements host.Source: the real host's.
func (s *Source) MemoryTotal() (uint64, error) { return s.real.MemoryTotal() }

// PIDs implements host.Source: the real processes and the simulated.
func (s *Source) PIDs() ([]int, error) {
	pids, err := s.real.PIDs()
	for _, pid := range s.fleet.HostPIDs() {
		pids = append(pids, int(pid))
	}
	return pids, err
}

// Username implements host.Source: a simulated user's name, else the
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

// HostPIDs implements host.Source: the fleet's PIDs are this host's.
func (s *Source) HostPIDs() bool { return true }

// Signal implements host.Source. A simulated process is signalled in the
// simulation, never as the real process that may hold its PID: a signal
// whose default action ends a process (SIGTERM, SIGINT, SIGKILL, SIGHUP…)
// stops it on every GPU, as if it had exited; one ignored by default
// (SIGCHLD, SIGCONT, SIGURG, SIGWINCH), a stop signal and signal 0 change
// nothing. Any other PID is the real host's.
func (s *Source) Signal(pid int, sig syscall.Signal, same func() error) error {
	if _, ok := s.simulated(pid); !ok {
		return s.real.Signal(pid, sig, same)
	}
	if err := same(); err != nil {
		return err
	}
	switch sig {
	case 0, syscall.SIGCHLD, syscall.SIGCONT, syscall.SIGURG, syscall.SIGWINCH,
		syscall.SIGSTOP, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU:
		return nil
	}
	for i := range s.fleet.Count() {
		s.fleet.GPU(i).StopProcess(uint32(pid))
	}
	return nil
}
