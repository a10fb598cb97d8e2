package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	tail := " 1 1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 123456 1000 200 18446744073709551615"
	want := Stat{State: "sleeping", PPID: 7, Start: 1234560 * time.Millisecond, CPUTime: 80 * time.Millisecond, RSS: 200 * PageSize}
	zombie := want
	zombie.State, zombie.PPID = "zombie", 1
	tests := []struct {
		name    string
		in      string
		want    Stat
		wantErr bool
	}{
		{"a plain name", "42 (sleep) S 7" + tail, want, false},
		{"a name with spaces and parentheses", "42 (a) b (c)) Z 1" + tail, zombie, false},
		{"no name", "42 sleep S 7" + tail, Stat{}, true},
		{"too few fields", "42 (sleep) S 7 1 1", Stat{}, true},
		{"a bad start time", "42 (sleep) S 7 1 1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 x 1000", Stat{}, true},
		{"a state of two letters", "42 (sleep) SS 7" + tail, Stat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseStat(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
	if got := Comm([]byte("42 (a) b (c)) Z 1" + tail)); got != "a) b (c)" {
		t.Errorf("Comm = %q; want the name between the first ( and the last )", got)
	}
	if !zombie.IsZombie() || want.IsZombie() {
		t.Error("IsZombie is wrong for a zombie or a sleeping process")
	}
}

func TestStateWord(t *testing.T) {
	for letter, want := range map[byte]string{'R': "running", 'S': "sleeping", 'D': "disk-sleep", 'T': "stopped", 'Z': "zombie", 'X': "dead", 'I': "idle", '?': "unknown (?)"} {
		if got := StateWord(letter); got != want {
			t.Errorf("StateWord(%q) = %q, want %q", letter, got, want)
		}
	}
}

// FuzzParseStat feeds /proc/PID/stat parsing what a hostile command name
// or a truncated read could make of the file: it never panics, and what it
// accepts has the fields where proc(5) puts them.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (python3) S 1 4242 4242 0 -1 4194560 1234 0 0 0 150 25 0 0 20 0 8 0 987654 123456789 2048 18446744073709551615\n"))
	f.Add([]byte("7 (a) b) (c) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"))
	f.Add([]byte("1 () Z 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseStat(b)
		_ = Comm(b)
		if err != nil {
			return
		}
		// Accepted: the fields after the last ')', parted by spaces and
		// newlines as the kernel writes them, hold the values read.
		rest := bytes.FieldsFunc(b[bytes.LastIndexByte(b, ')')+1:], func(r rune) bool { return r == ' ' || r == '\n' })
		if len(rest) < 22 || st.State != StateWord(rest[0][0]) {
			t.Fatalf("ParseStat(%q) = %+v from fields %q", b, st, rest)
		}
		start, err := strconv.ParseUint(string(rest[19]), 10, 64)
		if err != nil || st.Start != ticksDuration(start) {
			t.Errorf("ParseStat(%q): start %v, want %q ticks", b, st.Start, rest[19])
		}
		u, err1 := strconv.ParseUint(string(rest[11]), 10, 64)
		s, err2 := strconv.ParseUint(string(rest[12]), 10, 64)
		if err1 != nil || err2 != nil || st.CPUTime != ticksDuration(u)+ticksDuration(s) {
			t.Errorf("ParseStat(%q): CPU time %v, want %q+%q ticks", b, st.CPUTime, rest[11], rest[12])
		}
	})
}

// FuzzParseStatusUID: /proc/PID/status parsing never panics, and a UID it
// returns is the first number of the first line that starts with Uid:.
func FuzzParseStatusUID(f *testing.F) {
	f.Add([]byte("Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\n"))
	f.Add([]byte("Uid:\t4294967296\n"))
	f.Add([]byte("Uid:"))
	f.Add([]byte("0Uid:\nUid:0")) // "Uid:" inside a line is not the Uid line
	f.Fuzz(func(t *testing.T, b []byte) {
		uid, err := ParseStatusUID(b)
		if err != nil {
			return
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if rest, ok := bytes.CutPrefix(line, []byte("Uid:")); ok {
				f := bytes.Fields(rest)
				want, err := strconv.ParseUint(string(f[0]), 10, 32)
				if err != nil || uint32(want) != uid {
					t.Errorf("ParseStatusUID(%q) = %d; the Uid line says %q", b, uid, f[0])
				}
				return
			}
		}
		t.Errorf("ParseStatusUID(%q) = %d without a Uid line", b, uid)
	})
}

func TestParseCPUTimes(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    CPUTimes
		wantErr bool
	}{
		{"a current kernel", "cpu  100 2 30 500 8 0 4 6 10 0\ncpu0 50 1 15 250 4 0 2 3 5 0\ncpu1 50 1 15 250 4 0 2 3 5 0\nintr 12345 1 2\nctxt 99\nbtime 1700000000\n",
			CPUTimes{Busy: 142, Total: 650, CPUs: 2}, false},
		{"a 2.4 kernel's four times", "cpu 10 0 10 80\ncpu0 10 0 10 80\n", CPUTimes{Busy: 20, Total: 100, CPUs: 1}, false},
		{"guest time is not counted twice", "cpu 100 0 0 100 0 0 0 0 100 100\n", CPUTimes{Busy: 100, Total: 200}, false},
		{"no trailing newline", "cpu 1 0 1 2 0 0 0 0\ncpu0 1 0 1 2 0 0 0 0", CPUTimes{Busy: 2, Total: 4, CPUs: 1}, false},
		{"no aggregate line", "cpu0 1 2 3 4\nintr 1\n", CPUTimes{}, true},
		{"too few times", "cpu 1 2 3\n", CPUTimes{}, true},
		{"a number that is not one", "cpu 1 2 x 4\n", CPUTimes{}, true},
		{"empty", "", CPUTimes{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCPUTimes([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseCPUTimes = %+v, %v; want %+v (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func FuzzParseCPUTimes(f *testing.F) {
	f.Add([]byte("cpu  100 2 30 500 8 0 4 6 10 0\ncpu0 50 1 15 250 4 0 2 3 5 0\n"))
	f.Add([]byte("cpu 18446744073709551615 0 0 0\n"))
	f.Add([]byte("cpu\ncpu \ncpu9"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseCPUTimes(b)
		if err != nil {
			return
		}
		if got.CPUs < 0 || got.Total < 0 || got.Busy < 0 || got.Busy > got.Total || math.IsNaN(got.Total) {
			t.Errorf("ParseCPUTimes(%q) = %+v", b, got)
		}
	})
}

func TestParseLoadAvg(t *testing.T) {
	tests := []struct {
		in      string
		want    [3]float64
		wantErr bool
	}{
		{"0.52 0.58 0.59 1/234 5678\n", [3]float64{0.52, 0.58, 0.59}, false},
		{"12.00 8.5 3", [3]float64{12, 8.5, 3}, false},
		{"0.52 0.58", [3]float64{}, true},
		{"0.52 -1 0.59 1/2 3", [3]float64{}, true},
		{"NaN 1 1 1/2 3", [3]float64{}, true},
		{"", [3]float64{}, true},
	}
	for _, tt := range tests {
		got, err := ParseLoadAvg([]byte(tt.in))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseLoadAvg(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseLoadAvg(f *testing.F) {
	f.Add([]byte("0.52 0.58 0.59 1/234 5678\n"))
	f.Add([]byte("1e308 Inf 0x1p3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLoadAvg(b)
		if err != nil {
			return
		}
		for _, v := range l {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("ParseLoadAvg(%q) = %v", b, l)
			}
		}
	})
}

func TestParseMemInfo(t *testing.T) {
	const current = "MemTotal:       24000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\nBuffers:          500000 kB\nCached:         15000000 kB\nSwapCached:            0 kB\nSReclaimable:     400000 kB\n"
	tests := []struct {
		name     string
		in       string
		want     MemInfo
		wantUsed uint64
		wantErr  bool
	}{
		{"a current kernel", current, MemInfo{Total: 24000000 << 10, Free: 1000000 << 10, Available: 20000000 << 10, Buffers: 500000 << 10, Cached: 15400000 << 10}, 7100000 << 10, false},
		{"before 3.14, no MemAvailable", "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 300 kB\n", MemInfo{Total: 1000 << 10, Free: 100 << 10, Available: 400 << 10, Buffers: 10 << 10, Cached: 300 << 10}, 590 << 10, false},
		{"more cache than memory", "MemTotal: 1000 kB\nMemFree: 900 kB\nCached: 900 kB\n", MemInfo{Total: 1000 << 10, Free: 900 << 10, Available: 1000 << 10, Cached: 900 << 10}, 0, false},
		{"no MemTotal", "MemFree: 100 kB\n", MemInfo{}, 0, true},
		{"garbage", "MemTotal: lots\n\x00", MemInfo{}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMemInfo([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want || got.Used() != tt.wantUsed {
				t.Errorf("ParseMemInfo = %+v (used %d), %v; want %+v (used %d), error %v", got, got.Used(), err, tt.want, tt.wantUsed, tt.wantErr)
			}
		})
	}
}

func FuzzParseMemInfo(f *testing.F) {
	f.Add([]byte("MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 300 kB\n"))
	f.Add([]byte("MemTotal: 18446744073709551615 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMemInfo(b)
		if err != nil {
			return
		}
		if m.Total == 0 || m.Used() > m.Total {
			t.Errorf("ParseMemInfo(%q) = %+v (used %d)", b, m, m.Used())
		}
	})
}

func TestParseBootTime(t *testing.T) {
	got, err := ParseBootTime([]byte("cpu 1 2 3 4\nbtime 1700000000\nprocesses 5\n"))
	if err != nil || !got.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("ParseBootTime = %v, %v", got, err)
	}
	if _, err := ParseBootTime([]byte("cpu 1 2 3 4\n")); err == nil {
		t.Error("ParseBootTime without a btime line: want an error")
	}
}

func TestParseCmdline(t *testing.T) {
	for in, want := range map[string][]string{
		"python3\x00train.py\x00":               {"python3", "train.py"},
		"title set by setproctitle\x00\x00\x00": {"title set by setproctitle"},
		"":                                      {},
	} {
		if got := ParseCmdline([]byte(in)); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) || got == nil {
			t.Errorf("ParseCmdline(%q) = %q; want %q (never nil)", in, got, want)
		}
	}
}

// The real procfs of this machine reads as the parsers expect.
func TestThisMachine(t *testing.T) {
	var fs FS
	if _, err := os.Stat(fs.Path(0, "stat")); err != nil {
		t.Skipf("no procfs here: %v", err)
	}
	var buf [StatBufSize]byte
	b, err := fs.ReadFile(os.Getpid(), "stat", buf[:])
	if err != nil {
		t.Fatal(err)
	}
	st, err := ParseStat(b)
	if err != nil || st.PPID != os.Getppid() || st.State == "" {
		t.Errorf("this process's stat: %+v, %v; want parent %d", st, err, os.Getppid())
	}
	if m, err := fs.MemInfo(); err != nil || m.Total == 0 || m.Available > m.Total {
		t.Errorf("MemInfo = %+v, %v", m, err)
	}
	var cpu []byte
	if c, err := fs.CPUTimes(&cpu); err != nil || c.CPUs < 1 {
		t.Errorf("CPUTimes = %+v, %v", c, err)
	}
	if up, err := fs.Uptime(); err != nil || up <= 0 {
		t.Errorf("Uptime = %v, %v", up, err)
	}
	if _, err := fs.ReadFile(os.Getpid(), "stat", buf[:10]); !TooBig(err) {
		t.Errorf("a read into a buffer too small: %v; want TooBig", err)
	}
	if _, err := fs.ReadFile(1<<30, "stat", buf[:]); !IsNotExist(err) {
		t.Errorf("the stat of a PID no process holds: %v; want IsNotExist", err)
	}
	f := fs.OpenStat(os.Getpid())
	if f == nil {
		t.Fatal("OpenStat of this process failed")
	}
	n := OpenStatFiles()
	if b, err := f.Read(buf[:]); err != nil || !bytes.Contains(b, []byte(strconv.Itoa(os.Getpid()))) {
		t.Errorf("a kept stat file read %q, %v", b, err)
	}
	f.Close()
	f.Close()
	if OpenStatFiles() != n-1 {
		t.Errorf("open stat files %d after Close; want %d", OpenStatFiles(), n-1)
	}
	if _, err := f.Read(buf[:]); err == nil {
		t.Error("a closed stat file still reads")
	}
}

// setPIDNamespaceLink makes InHostPIDNamespace see the given link target
// (or error) until the test ends. Tests that use it must not run in
// parallel.
func setPIDNamespaceLink(t *testing.T, link string, err error) {
	t.Helper()
	saved := readPIDNamespaceLink
	readPIDNamespaceLink = func() (string, error) { return link, err }
	pidnsOnce = sync.Once{}
	t.Cleanup(func() {
		readPIDNamespaceLink = saved
		pidnsOnce = sync.Once{}
	})
}

func TestInHostPIDNamespace(t *testing.T) {
	tests := []struct {
		name string
		link string
		err  error
		want bool
	}{
		{"the initial namespace is the host's", "pid:[4026531836]", nil, true},
		{"another namespace is not", "pid:[4026532451]", nil, false},
		{"an unreadable link is assumed to be the host's", "", errors.New("no procfs"), true},
		{"an unparsable link is assumed to be the host's", "pid:[oops]", nil, true},
		{"a link to another kind of namespace is assumed to be the host's", "net:[4026531840]", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setPIDNamespaceLink(t, tt.link, tt.err)
			if got := InHostPIDNamespace(); got != tt.want {
				t.Errorf("InHostPIDNamespace() with link %q, err %v = %v, want %v", tt.link, tt.err, got, tt.want)
			}
		})
	}
}

func TestInHostPIDNamespaceIsMemoised(t *testing.T) {
	calls := 0
	saved := readPIDNamespaceLink
	readPIDNamespaceLink = func() (string, error) { calls++; return "pid:[4026531836]", nil }
	pidnsOnce = sync.Once{}
	t.Cleanup(func() { readPIDNamespaceLink = saved; pidnsOnce = sync.Once{} })
	for range 3 {
		InHostPIDNamespace()
	}
	if calls != 1 {
		t.Errorf("the link was read %d times, want 1", calls)
	}
}

// On this machine the answer is what the real link says.
func TestInHostPIDNamespaceReadsTheRealLink(t *testing.T) {
	pidnsOnce = sync.Once{}
	t.Cleanup(func() { pidnsOnce = sync.Once{} })
	link, err := readPIDNamespaceLink()
	if err != nil {
		t.Skipf("cannot read /proc/self/ns/pid: %v", err)
	}
	if got, want := InHostPIDNamespace(), IsHostPIDNamespaceLink(link, nil); got != want {
		t.Errorf("InHostPIDNamespace() = %v with /proc/self/ns/pid -> %s; want %v", got, link, want)
	}
}
