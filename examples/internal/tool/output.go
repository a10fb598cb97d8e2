package tool

import (
	"fmt"
	"io"
)

// Output is a tool's standard output, checked: the first write that fails
// (a full disk, a closed pipe, stdout on /dev/full) is remembered, every
// later write fails with it, and Finish makes it the tool's failure. Tools
// write through it, so no write error goes unseen; they wrap it in a
// bufio.Writer where they write much.
type Output struct {
	w   io.Writer
	err error
}

// NewOutput returns w, checked.
func NewOutput(w io.Writer) *Output { return &Output{w: w} }

// Write writes p, or fails with the first error of an earlier write. A
// short write is an error (io.ErrShortWrite).
func (o *Output) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	o.err = err
	return n, err
}

// Err returns the first write error, or nil.
func (o *Output) Err() error { return o.err }

// Finish returns the tool's exit status: code, unless a write failed. Then
// it says so on stderr ("NAME: cannot write the output: …") and returns
// ExitFailure in place of success; the status of an earlier failure
// stands.
func (o *Output) Finish(name string, code int, stderr io.Writer) int {
	if o.err == nil {
		return code
	}
	fmt.Fprintf(stderr, "%s: cannot write the output: %v\n", name, o.err)
	if code == 0 {
		return ExitFailure
	}
	return code
}
