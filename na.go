package nvgo

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nvgo/nvgo/internal/nverr"
)

// Reason says why a metric is N/A. The zero Reason means the value is real.
type Reason uint8

// Reasons a metric can be N/A.
const (
	// Available is the zero Reason: the value is real.
	Available Reason = iota
	// NotSupported: the GPU or driver does not offer this metric.
	NotSupported
	// NoPermission: the caller lacks the privileges to read it.
	NoPermission
	// GPULost: the GPU fell off the bus or needs a reset.
	GPULost
	// FunctionMissing: the installed driver lacks the NVML function; nvgo did not call it.
	FunctionMissing
	// ProcessGone: the process exited (or its PID was reused) before it could be read.
	ProcessGone
	// OtherPIDNamespace: NVML reports host PIDs, which this process cannot see
	// (a container without --pid=host).
	OtherPIDNamespace
	// Zombie: the process has exited but was not yet reaped; it has no command line or memory.
	Zombie
	// NotReported: the driver answered, but with "value not available" (e.g. WDDM
	// per-process memory), or has no sample yet.
	NotReported
	// Failed: any other error; Value.Err says which.
	Failed
	// InstanceGone: the vGPU instance was destroyed (its VM stopped, say)
	// before it could be read.
	InstanceGone
)

var reasonText = [...]string{
	Available:         "available",
	NotSupported:      "not supported",
	NoPermission:      "no permission",
	GPULost:           "GPU lost",
	FunctionMissing:   "function missing from driver",
	ProcessGone:       "process gone",
	OtherPIDNamespace: "not visible from this PID namespace",
	Zombie:            "zombie process",
	NotReported:       "not reported",
	Failed:            "error",
	InstanceGone:      "instance gone",
}

// String returns the reason in words.
func (r Reason) String() string {
	if int(r) < len(reasonText) {
		return reasonText[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Value is a metric that is either real or N/A. N/A is never zero: a Value
// that is N/A keeps the Reason (and the error, where there was one) that made
// it so. It prints "N/A", marshals to JSON null and unmarshals null back to
// N/A. The zero Value is N/A with reason NotReported.
//
// A Value is immutable and safe for concurrent use.
type Value[T any] struct {
	v      T
	ok     bool
	reason Reason
	err    error
}

// Some returns a real Value holding v.
func Some[T any](v T) Value[T] { return Value[T]{v: v, ok: true} }

// NA returns an N/A Value with the given reason and cause (which may be nil).
// Reason Available is turned into NotReported: an N/A value always has a reason.
func NA[T any](reason Reason, cause error) Value[T] {
	if reason == Available {
		reason = NotReported
	}
	return Value[T]{reason: reason, err: cause}
}

// FromErr returns Some(v) when err is nil and otherwise an N/A Value whose
// reason is derived from err (see ReasonOf).
func FromErr[T any](v T, err error) Value[T] {
	if err == nil {
		return Some(v)
	}
	return NA[T](ReasonOf(err), err)
}

// ReasonOf maps an error to the Reason a metric read with that error is N/A.
func ReasonOf(err error) Reason {
	switch {
	case err == nil:
		return Available
	case errors.Is(err, ErrVgpuGone):
		return InstanceGone
	case errors.Is(err, nverr.ErrFunctionMissing):
		return FunctionMissing
	case errors.Is(err, nverr.ErrNotSupported), errors.Is(err, errors.ErrUnsupported):
		return NotSupported
	case errors.Is(err, nverr.ErrNoPermission):
		return NoPermission
	case errors.Is(err, nverr.ErrGPULost):
		return GPULost
	case errors.Is(err, ErrOtherPIDNamespace):
		return OtherPIDNamespace
	case errors.Is(err, ErrZombie):
		return Zombie
	case errors.Is(err, ErrProcessGone):
		return ProcessGone
	case errors.Is(err, ErrNotReported), errors.Is(err, nverr.ErrNoData):
		return NotReported
	}
	return Failed
}

// Get returns the value and whether it is real.
func (x Value[T]) Get() (T, bool) { return x.v, x.ok }

// Or returns the value, or def when it is N/A.
func (x Value[T]) Or(def T) T {
	if x.ok {
		return x.v
	}
	return def
}

// IsNA reports whether the value is N/A.
func (x Value[T]) IsNA() bool { return !x.ok }

// Reason returns why the value is N/A, or Available when it is real.
func (x Value[T]) Reason() Reason {
	if x.ok {
		return Available
	}
	if x.reason == Available {
		return NotReported
	}
	return x.reason
}

// Err returns the error that made the value N/A, or nil. It may be nil for an
// N/A value whose reason needs no error (e.g. NotReported).
func (x Value[T]) Err() error {
	if x.ok {
		return nil
	}
	return x.err
}

// String returns "N/A" or the value formatted with fmt (so typed units print
// in their human form, e.g. "8862MiB").
func (x Value[T]) String() string {
	if !x.ok {
		return "N/A"
	}
	return fmt.Sprint(x.v)
}

// Format implements fmt.Formatter so that %v, %s and width flags print "N/A"
// for an N/A value and the value's own formatting otherwise (%s as %v, so
// that a number prints as one).
func (x Value[T]) Format(f fmt.State, verb rune) {
	if !x.ok {
		s := "N/A"
		if w, ok := f.Width(); ok {
			pad := w - len(s)
			for ; pad > 0 && !f.Flag('-'); pad-- {
				s = " " + s
			}
			for ; pad > 0; pad-- {
				s += " "
			}
		}
		fmt.Fprint(f, s)
		return
	}
	if verb == 's' {
		verb = 'v'
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), x.v)
}

// MarshalJSON encodes an N/A value as null and a real one as its value.
func (x Value[T]) MarshalJSON() ([]byte, error) {
	if !x.ok {
		return []byte("null"), nil
	}
	b, err := json.Marshal(x.v)
	var unsupported *json.UnsupportedValueError
	if errors.As(err, &unsupported) {
		// NaN and ±Inf have no JSON form; one must not break a whole snapshot.
		return []byte("null"), nil
	}
	return b, err
}

// UnmarshalJSON decodes null as N/A (reason NotReported) and anything else as a real value.
func (x *Value[T]) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*x = NA[T](NotReported, nil)
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*x = Some(v)
	return nil
}

// Compare orders two values with every N/A after every real value; two N/A
// values are equal. It returns -1, 0 or +1, for use with slices.SortFunc.
func Compare[T cmp.Ordered](a, b Value[T]) int {
	switch {
	case a.ok && b.ok:
		return cmp.Compare(a.v, b.v)
	case a.ok:
		return -1
	case b.ok:
		return 1
	}
	return 0
}

// Map applies f to a real value and keeps an N/A value's reason and error.
func Map[T, U any](x Value[T], f func(T) U) Value[U] {
	if !x.ok {
		return Value[U]{reason: x.reason, err: x.err}
	}
	return Some(f(x.v))
}

// FlatMap applies f, which may itself give N/A, to a real value, and keeps
// an N/A value's reason and error: for a field of a Value that is a Value
// itself, such as a VgpuType's Name.
func FlatMap[T, U any](x Value[T], f func(T) Value[U]) Value[U] {
	if !x.ok {
		return Value[U]{reason: x.reason, err: x.err}
	}
	return f(x.v)
}
