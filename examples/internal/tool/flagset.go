package tool

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// NewFlagSet returns an empty flag set for a tool read with the flag
// package (-flag, --flag, --flag=value): it prints nothing, neither errors
// nor a usage, and returns a bad flag as an error (flag.ContinueOnError),
// for the tool to report its own way.
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// ParseFlags parses args with fs, a tool that takes flags and no other
// word. It returns ErrHelp for -h, -help or --help, the flag package's
// error for a bad flag ("flag provided but not defined: -x"), and an
// error "unexpected argument" naming the first word left after the flags.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ErrHelp
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// Given reports whether the command line parsed with fs set the flag name,
// to any value: so an empty value given ("--dir=") is told from none.
func Given(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
