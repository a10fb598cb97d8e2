package apicheck

import (
	"slices"
	"strings"
	"testing"
)

// recorded is a small recorded surface that the cases below change.
var recorded = []string{
	"field Snapshot.Power Value[MilliWatts] `json:\"power\"`",
	"func Open(...Option) (*Library, error)",
	"method (*Device).MemoryUsed() Value[Bytes]",
	"type Device struct (has unexported fields)",
	"type Snapshot struct",
}

// changed returns recorded less the lines in drop, plus those in add, sorted.
func changed(drop []string, add ...string) []string {
	out := slices.DeleteFunc(slices.Clone(recorded), func(l string) bool { return slices.Contains(drop, l) })
	out = append(out, add...)
	slices.Sort(out)
	return out
}

func TestCheck(t *testing.T) {
	tagChanged := changed([]string{recorded[0]}, "field Snapshot.Power Value[MilliWatts] `json:\"power_draw\"`")
	methodAdded := changed(nil, "method (*Device).MemoryTemperature() Value[Celsius]")
	typeRemoved := changed([]string{recorded[0], recorded[4]})
	tests := []struct {
		name      string
		recorded  []string // nil: never recorded
		current   []string
		changelog string
		update    bool
		wantWrite bool
		wantErr   []string // each in the error; none: no error
	}{
		{name: "an unchanged API passes", recorded: recorded, current: recorded},
		{name: "an unchanged API is not rewritten by -update", recorded: recorded, current: recorded, update: true},
		{
			name: "a changed struct tag fails, showing both lines and how to record it", recorded: recorded, current: tagChanged,
			wantErr: []string{
				"- field Snapshot.Power Value[MilliWatts] `json:\"power\"`",
				"+ field Snapshot.Power Value[MilliWatts] `json:\"power_draw\"`",
				"(`Snapshot.Power`)", UpdateCommand,
			},
		},
		{
			name: "an added method fails even when CHANGELOG names it", recorded: recorded, current: methodAdded,
			changelog: "## Unreleased\n- `Device.MemoryTemperature`\n",
			wantErr:   []string{"+ method (*Device).MemoryTemperature() Value[Celsius]", UpdateCommand},
		},
		{
			name: "-update refuses an added method that CHANGELOG does not name", recorded: recorded, current: methodAdded,
			changelog: "## Unreleased\n- `Device.MemoryUsed`\n", update: true,
			wantErr: []string{"refusing", "does not name `Device.MemoryTemperature`"},
		},
		{
			name: "-update refuses a name that only an older release names", recorded: recorded, current: methodAdded,
			changelog: "## Unreleased\n- nothing yet\n\n## 0.1.0\n- `Device.MemoryTemperature`\n", update: true,
			wantErr: []string{"does not name `Device.MemoryTemperature`"},
		},
		{
			name: "-update records an added method that CHANGELOG names", recorded: recorded, current: methodAdded,
			changelog: "## [Unreleased]\n- `(*Device).MemoryTemperature()` reads HBM temperature.\n", update: true,
			wantWrite: true,
		},
		{
			name: "-update records a change named with its package", recorded: recorded, current: tagChanged,
			changelog: "## Unreleased\n- `nvgo.Snapshot.Power` is power_draw in JSON.\n", update: true,
			wantWrite: true,
		},
		{
			name: "-update records a removed type, its members covered by its name", recorded: recorded, current: typeRemoved,
			changelog: "## Unreleased\n- `Snapshot` is gone.\n", update: true,
			wantWrite: true,
		},
		{
			name: "a package never recorded fails", current: recorded,
			wantErr: []string{"no record", UpdateCommand},
		},
		{
			name: "-update records a package for the first time without names", current: recorded, update: true,
			wantWrite: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			write, err := Check("nvgo", tt.recorded, tt.current, Announced(tt.changelog), tt.update)
			if write != tt.wantWrite {
				t.Errorf("write = %v, want %v", write, tt.wantWrite)
			}
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want one with %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
		})
	}
}

func TestIdent(t *testing.T) {
	tests := []struct{ line, want string }{
		{"const FieldsAll Fields = 524287", "FieldsAll"},
		{"var ErrClosed error", "ErrClosed"},
		{"func Compare[T cmp.Ordered](Value[T], Value[T]) int", "Compare"},
		{"func Open(...Option) (*Library, error)", "Open"},
		{"type Value[T any] struct (has unexported fields)", "Value"},
		{"type ReturnCode = nverr.Code int32", "ReturnCode"},
		{"field DeviceSnapshot.Index int `json:\"index\"`", "DeviceSnapshot.Index"},
		{"method (*Device).MemoryUsed() Value[Bytes]", "Device.MemoryUsed"},
		{"method ReturnCode.String() string", "ReturnCode.String"},
		{"method (*Value).UnmarshalJSON([]byte) error", "Value.UnmarshalJSON"},
		{"method Clock.Now() time.Time", "Clock.Now"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Ident(tt.line); got != tt.want {
				t.Errorf("Ident(%q) = %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}

func TestCompareFindsAddedAndRemovedLines(t *testing.T) {
	d := Compare([]string{"a", "b", "d"}, []string{"b", "c", "d", "e"})
	if want := (Diff{Added: []string{"c", "e"}, Removed: []string{"a"}}); !slices.Equal(d.Added, want.Added) || !slices.Equal(d.Removed, want.Removed) {
		t.Errorf("Compare = %+v, want %+v", d, want)
	}
}

func TestFormatThenParseGivesTheLinesBack(t *testing.T) {
	for _, lines := range [][]string{recorded, {}} {
		if got := Parse(Format("example.com/p", lines)); !slices.Equal(got, lines) || got == nil {
			t.Errorf("Parse(Format(%q)) = %#v", lines, got)
		}
	}
}
