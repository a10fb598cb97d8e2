package nvgo

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
)

// FuzzParseProcStat feeds /proc/<pid>/stat parsing what a hostile command
// name or a truncated read could make of the file: it never panics, and
// what it accepts has the fields where proc(5) puts them.
func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("4242 (python3) S 1 4242 4242 0 -1 4194560 1234 0 0 0 150 25 0 0 20 0 8 0 987654 123456789 2048 18446744073709551615\n"))
	f.Add([]byte("7 (a) b) (c) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"))
	f.Add([]byte("1 () Z 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseProcStat(b)
		_ = statComm(b)
		if err != nil {
			return
		}
		// Accepted: the fields after the last ')' hold the values read.
		rest := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
		if len(rest) < 22 || rest[0][0] != st.state {
			t.Fatalf("parseProcStat(%q) = %+v from fields %q", b, st, rest)
		}
		for _, c := range []struct {
			field int
			got   string
		}{{11, fmt.Sprint(st.utime)}, {12, fmt.Sprint(st.stime)}, {19, fmt.Sprint(st.startTicks)}} {
			want, err := strconv.ParseUint(string(rest[c.field]), 10, 64)
			if err != nil || fmt.Sprint(want) != c.got {
				t.Errorf("parseProcStat(%q): field %d = %s, want %q", b, c.field+3, c.got, rest[c.field])
			}
		}
	})
}

// FuzzParseStatusUID: /proc/<pid>/status parsing never panics, and a UID
// it returns is the first number of the first line that starts with Uid:.
func FuzzParseStatusUID(f *testing.F) {
	f.Add([]byte("Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\n"))
	f.Add([]byte("Uid:\t4294967296\n"))
	f.Add([]byte("Uid:"))
	f.Add([]byte("0Uid:\nUid:0")) // "Uid:" inside a line is not the Uid line
	f.Fuzz(func(t *testing.T, b []byte) {
		uid, err := parseStatusUID(b)
		if err != nil {
			return
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if rest, ok := bytes.CutPrefix(line, []byte("Uid:")); ok {
				f := bytes.Fields(rest)
				want, err := strconv.ParseUint(string(f[0]), 10, 32)
				if err != nil || uint32(want) != uid {
					t.Errorf("parseStatusUID(%q) = %d; the Uid line says %q", b, uid, f[0])
				}
				return
			}
		}
		t.Errorf("parseStatusUID(%q) = %d without a Uid line", b, uid)
	})
}
