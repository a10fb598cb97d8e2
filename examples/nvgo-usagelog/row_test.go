package main

import (
	"errors"
	"strings"
	"testing"
)

func TestFormatRowWritesTheDocumentedColumns(t *testing.T) {
	tests := []struct {
		name string
		row  row
		want string
	}{
		{
			name: "a full row has ten columns, whole numbers without decimals",
			row: row{Time: 1735689610, User: "alice", PID: 4242, GPU: 1, Usage: some(60), Seconds: some(300),
				MemMiB: some(2048), MemUsage: some(20), Interval: some(300), UUID: "GPU-1"},
			want: "1735689610,alice,4242,1,60,300,2048,20,300,GPU-1\n",
		},
		{
			name: "means keep at most two decimals",
			row: row{Time: 1, User: "bob", PID: 1, GPU: 0, Usage: some(41.25), Seconds: some(2.5),
				MemMiB: some(1000.0 / 3), MemUsage: some(0.004), Interval: some(10)},
			want: "1,bob,1,0,41.25,2.5,333.33,0,10,\n",
		},
		{
			name: "N/A values are empty fields",
			row:  row{Time: 1, User: "carol", PID: 7, GPU: 3, Seconds: some(5), Interval: some(5)},
			want: "1,carol,7,3,,5,,,5,\n",
		},
		{
			name: "a user with a comma or quote is quoted",
			row:  row{Time: 1, User: `o"brien,x`, PID: 7, GPU: 0, Usage: some(1)},
			want: "1,\"o\"\"brien,x\",7,0,1,,,,,\n",
		},
		{
			name: "control characters in a user name do not break the line",
			row:  row{Time: 1, User: "ev\nil", PID: 7, GPU: 0},
			want: "1,ev?il,7,0,,,,,,\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(formatRow(tt.row)); got != tt.want {
				t.Errorf("formatRow = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseRowReadsRowsOldAndNew(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    row
		wantErr string
	}{
		{
			name: "a row of this version",
			line: "1735689610,alice,4242,1,60,300,2048,20,300,GPU-1",
			want: row{Time: 1735689610, User: "alice", PID: 4242, GPU: 1, Usage: some(60), Seconds: some(300),
				MemMiB: some(2048), MemUsage: some(20), Interval: some(300), UUID: "GPU-1"},
		},
		{
			name: "a row of the original five columns leaves the rest N/A",
			line: "1616584347,m_user,456815,1,90",
			want: row{Time: 1616584347, User: "m_user", PID: 456815, GPU: 1, Usage: some(90)},
		},
		{
			name: "empty, - and N/A fields are N/A",
			line: "1,bob,1,0,,-,N/A,,",
			want: row{Time: 1, User: "bob", PID: 1, GPU: 0},
		},
		{
			name: "columns a later version adds are ignored",
			line: "1,bob,1,0,5,1,1,1,1,GPU-2,future,more",
			want: row{Time: 1, User: "bob", PID: 1, GPU: 0, Usage: some(5), Seconds: some(1), MemMiB: some(1), MemUsage: some(1), Interval: some(1), UUID: "GPU-2"},
		},
		{
			name: "an empty user reads as ?",
			line: "1,,1,0,5",
			want: row{Time: 1, User: "?", PID: 1, GPU: 0, Usage: some(5)},
		},
		{
			name: "a quoted user with a comma",
			line: `1,"o""brien,x",7,0,1`,
			want: row{Time: 1, User: `o"brien,x`, PID: 7, Usage: some(1)},
		},
		{name: "the header is told apart", line: header, wantErr: "header line"},
		{name: "too few fields", line: "1,alice,2,3", wantErr: "4 fields, want at least 5"},
		{name: "a timestamp that is not a number", line: "yesterday,alice,2,3,4", wantErr: `bad Timestamp "yesterday"`},
		{name: "a zero timestamp", line: "0,alice,2,3,4", wantErr: `bad Timestamp "0"`},
		{name: "a negative PID", line: "1,alice,-2,3,4", wantErr: `bad PID "-2"`},
		{name: "a GPU that is not a number", line: "1,alice,2,x,4", wantErr: `bad GPU Number "x"`},
		{name: "a usage over 100%", line: "1,alice,2,3,101", wantErr: `bad GPU Usage "101": out of range`},
		{name: "a usage of NaN", line: "1,alice,2,3,NaN", wantErr: `bad GPU Usage "NaN": not a number`},
		{name: "negative seconds", line: "1,alice,2,3,4,-1", wantErr: `bad Seconds "-1"`},
		{name: "an unclosed quote", line: `1,"alice,2,3,4`, wantErr: "not CSV"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRow(tt.line)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseRow(%q) = %+v, %v; want an error containing %q", tt.line, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseRow(%q): %v", tt.line, err)
			}
			if got != tt.want {
				t.Errorf("parseRow(%q) =\n %+v\nwant\n %+v", tt.line, got, tt.want)
			}
		})
	}
}

// FuzzParseRow checks that parseRow never panics, that what it accepts is
// in range, and that writing a parsed row and reading it back is stable.
func FuzzParseRow(f *testing.F) {
	for _, s := range []string{
		header,
		"1735689610,alice,4242,1,60,300,2048,20,300,GPU-1",
		"1616584347,m_user,456815,1,90",
		"1,bob,1,0,,-,N/A,,",
		`1,"o""brien,x",7,0,1`,
		"1,\" spaced \",7,0,99.999,1e3,0x10,5,5",
		`1,"unclosed,2,3,4`,
		"",
		",,,,",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		r, err := parseRow(line)
		if err != nil {
			return
		}
		if r.Time <= 0 || r.PID < 0 || r.GPU < 0 || r.User == "" || strings.ContainsAny(r.User, "\r\n") {
			t.Fatalf("parseRow(%q) accepted %+v", line, r)
		}
		for _, n := range []num{r.Usage, r.MemUsage} {
			if n.ok && (n.v < 0 || n.v > 100) {
				t.Fatalf("parseRow(%q) accepted a percentage %v", line, n.v)
			}
		}
		out := formatRow(r)
		if n := strings.Count(string(out), "\n"); n != 1 || !strings.HasSuffix(string(out), "\n") {
			t.Fatalf("formatRow(parseRow(%q)) = %q: not one line", line, out)
		}
		r2, err := parseRow(strings.TrimSuffix(string(out), "\n"))
		if err != nil {
			t.Fatalf("the written row %q does not read back: %v", out, err)
		}
		if out2 := formatRow(r2); string(out2) != string(out) {
			t.Fatalf("writing is not stable: %q, then %q", out, out2)
		}
	})
}

func TestParseRowTellsTheHeaderApart(t *testing.T) {
	if _, err := parseRow(header + "\r"); !errors.Is(err, errHeader) {
		t.Errorf("parseRow(header with CR) = %v, want errHeader", err)
	}
}
