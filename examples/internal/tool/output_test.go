package tool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// failAfter accepts n bytes, then fails every write.
type failAfter struct {
	n   int
	got bytes.Buffer
}

var errDiskFull = errors.New("no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.got.Len()+len(p) <= f.n {
		return f.got.Write(p)
	}
	k := f.n - f.got.Len()
	f.got.Write(p[:k])
	return k, errDiskFull
}

// shortWriter takes one byte less than it is given, without an error.
type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return max(len(p)-1, 0), nil }

// A failed write is the tool's failure, said once on stderr; writes after
// it fail too; a short write counts; an earlier failure's status stands.
func TestOutputMakesAFailedWriteAFailure(t *testing.T) {
	for _, tt := range []struct {
		name      string
		w         io.Writer
		code      int
		wantCode  int
		wantErr   string
		wantWrote string
	}{
		{"all written", &failAfter{n: 100}, 0, 0, "", "one\ntwo\n"},
		{"fails at once", &failAfter{n: 0}, 0, ExitFailure, "no space left on device", ""},
		{"fails midway, and after", &failAfter{n: 6}, 0, ExitFailure, "no space left on device", "one\ntw"},
		{"a short write", shortWriter{}, 0, ExitFailure, io.ErrShortWrite.Error(), ""},
		{"an earlier failure stands", &failAfter{n: 0}, ExitUsage, ExitUsage, "no space left on device", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := NewOutput(tt.w)
			fmt.Fprint(out, "one\n")
			fmt.Fprint(out, "two\n")
			var stderr strings.Builder
			code := out.Finish("nvgo-tool", tt.code, &stderr)
			if code != tt.wantCode {
				t.Errorf("Finish = %d; want %d", code, tt.wantCode)
			}
			if tt.wantErr == "" {
				if stderr.Len() > 0 || out.Err() != nil {
					t.Errorf("stderr %q, Err %v; want nothing", stderr.String(), out.Err())
				}
			} else if want := "nvgo-tool: cannot write the output: " + tt.wantErr + "\n"; stderr.String() != want {
				t.Errorf("stderr %q; want %q", stderr.String(), want)
			}
			if f, ok := tt.w.(*failAfter); ok && f.got.String() != tt.wantWrote {
				t.Errorf("wrote %q; want %q (nothing after the failure)", f.got.String(), tt.wantWrote)
			}
		})
	}
}
