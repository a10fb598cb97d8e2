package nvgo

import (
	"errors"
	"testing"
)

func TestNormalizeBusID(t *testing.T) {
	tests := []struct {
		name, in, want string
		bad            bool
	}{
		{name: "NVML's own form is kept", in: "00000000:17:00.0", want: "00000000:17:00.0"},
		{name: "a 4-digit domain is widened", in: "0000:17:00.0", want: "00000000:17:00.0"},
		{name: "lower case is upper-cased", in: "0000:9a:00.0", want: "00000000:9A:00.0"},
		{name: "no domain means domain 0", in: "17:00.0", want: "00000000:17:00.0"},
		{name: "single-digit fields are padded", in: "1:2.3", want: "00000000:01:02.3"},
		{name: "a 1-digit domain is rejected", in: "0:1:2.3", bad: true},
		{name: "a non-zero domain is kept", in: "0001:c1:1f.7", want: "00000001:C1:1F.7"},
		{name: "surrounding space is ignored", in: " 0000:17:00.0\n", want: "00000000:17:00.0"},
		{name: "empty is rejected", in: "", bad: true},
		{name: "garbage is rejected", in: "nope", bad: true},
		{name: "a 6-digit domain is rejected", in: "000000:17:00.0", bad: true},
		{name: "a missing function is rejected", in: "0000:17:00", bad: true},
		{name: "a 3-digit bus is rejected", in: "0000:117:00.0", bad: true},
		{name: "device 20 is out of range", in: "0000:17:20.0", bad: true},
		{name: "function 8 is out of range", in: "0000:17:00.8", bad: true},
		{name: "a sign is rejected", in: "0000:+7:00.0", bad: true},
		{name: "too many colons are rejected", in: "0:0:17:00.0", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeBusID(tt.in)
			if tt.bad {
				if !errors.Is(err, ErrBadBusID) {
					t.Fatalf("NormalizeBusID(%q) = %q, %v; want ErrBadBusID", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("NormalizeBusID(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func FuzzNormalizeBusID(f *testing.F) {
	for _, s := range []string{"00000000:17:00.0", "0000:9a:00.0", "17:00.0", "", "x:y:z.w", "0:0:0.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := NormalizeBusID(s)
		if err != nil {
			if !errors.Is(err, ErrBadBusID) {
				t.Fatalf("error %v does not wrap ErrBadBusID", err)
			}
			return
		}
		// The canonical form is a fixed point.
		again, err := NormalizeBusID(got)
		if err != nil || again != got || len(got) != len("00000000:00:00.0") {
			t.Fatalf("NormalizeBusID(%q) = %q, then %q, %v", s, got, again, err)
		}
	})
}

func TestMatchUUIDPrefix(t *testing.T) {
	uuids := []string{"GPU-aaaa1111-0000", "GPU-aaaa2222-0000", "GPU-bbbb0000-0000"}
	tests := []struct {
		name, prefix string
		want         int
		err          error
	}{
		{"a full UUID matches", "GPU-bbbb0000-0000", 2, nil},
		{"a unique prefix matches", "GPU-aaaa2", 1, nil},
		{"a shared prefix is ambiguous", "GPU-aaaa", -1, ErrAmbiguous},
		{"matching is case-sensitive, as in CUDA", "GPU-AAAA2", -1, ErrNotFound},
		{"the GPU- prefix is required", "aaaa2", -1, ErrNotFound},
		{"GPU- alone names nothing", "GPU-", -1, ErrNotFound},
		{"an unknown UUID is not found", "GPU-cccc", -1, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := matchUUIDPrefix(tt.prefix, uuids)
			if got != tt.want || !errors.Is(err, tt.err) {
				t.Fatalf("matchUUIDPrefix(%q) = %d, %v; want %d, %v", tt.prefix, got, err, tt.want, tt.err)
			}
		})
	}
}

func TestFieldsStringAndParse(t *testing.T) {
	tests := []struct {
		in   string
		want Fields
		bad  bool
	}{
		{in: "memory", want: FieldMemory},
		{in: "memory,power", want: FieldMemory | FieldPower},
		{in: "memory|processes", want: FieldMemory | FieldProcesses},
		{in: "all", want: FieldsAll},
		{in: "status", want: FieldsStatus},
		{in: "MEMORY", want: FieldMemory},
		{in: "memroy", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFields(tt.in)
			if tt.bad != (err != nil) || got != tt.want {
				t.Fatalf("ParseFields(%q) = %v, %v", tt.in, got, err)
			}
			if !tt.bad {
				back, err := ParseFields(got.String())
				if err != nil || back != got {
					t.Fatalf("round trip of %v: %v, %v", got, back, err)
				}
			}
		})
	}
}
