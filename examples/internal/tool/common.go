package tool

import "errors"

// CommonFlags binds the nvitop-style flags that the tools share to where a
// tool keeps their values, so that every tool reads them the same way. A
// nil field is a flag the tool does not take: Parse leaves it to the tool.
// Parse writes through the fields, so one Parse at a time.
type CommonFlags struct {
	// Only is --only, -o IDX [IDX ...]: NVML indices, added to by each.
	Only *[]int
	// OnlyVisible is --only-visible.
	OnlyVisible *bool
	// Compute is --compute, -c.
	Compute *bool
	// Graphics is --graphics, -g.
	Graphics *bool
	// UserSet is --user, -u [NAME]; User its NAME, left as it was when
	// none is given (the current user's, when it stays ""). Bind both or
	// neither.
	UserSet *bool
	User    *string
	// PIDs is --pid PID [PID ...], added to by each.
	PIDs *[]int
	// ASCII is --ascii, -U.
	ASCII *bool
	// NoColor is --no-color.
	NoColor *bool
	// Simulate is --simulate NAME|FILE (Args.Simulate).
	Simulate *string
}

// read reads the current flag of a when it is -h, --help (ErrHelp) or a
// flag bound in c, and reports whether it was; the tool reads any other.
func (c CommonFlags) read(a *Args) (known bool, err error) {
	var set *bool // a switch
	switch name := a.Name(); {
	case name == "-h" || name == "--help":
		return true, ErrHelp
	case (name == "--only" || name == "-o") && c.Only != nil:
		*c.Only, err = a.Indices(*c.Only, "GPU index")
		return true, err
	case name == "--pid" && c.PIDs != nil:
		*c.PIDs, err = a.Indices(*c.PIDs, "PID")
		return true, err
	case (name == "--user" || name == "-u") && c.UserSet != nil:
		*c.UserSet = true
		if user, ok := a.OptionalValue(); ok {
			*c.User = user
		}
		return true, nil
	case name == "--simulate" && c.Simulate != nil:
		*c.Simulate, err = a.Simulate()
		return true, err
	case name == "--only-visible":
		set = c.OnlyVisible
	case name == "--compute" || name == "-c":
		set = c.Compute
	case name == "--graphics" || name == "-g":
		set = c.Graphics
	case name == "--ascii" || name == "-U":
		set = c.ASCII
	case name == "--no-color":
		set = c.NoColor
	}
	if set == nil {
		return false, nil
	}
	*set = true
	return true, a.NoValue()
}

// Parse reads every flag of args: -h, --help and those bound in c itself,
// the others with own, which returns a.Unknown() for a flag the tool does
// not take. It stops at the first error. Then it checks the flags
// together: the tool's own with ownCheck, when not nil, then those of c
// (--only with --only-visible is an error).
func (c CommonFlags) Parse(args []string, own func(a *Args) error, ownCheck func() error) error {
	a := NewArgs(args)
	for a.Next() {
		known, err := c.read(a)
		if !known {
			err = own(a)
		}
		if err != nil {
			return err
		}
	}
	if ownCheck != nil {
		if err := ownCheck(); err != nil {
			return err
		}
	}
	return c.check()
}

// check returns an error for flags that exclude each other: --only with
// --only-visible, two different selections (NVML indices, CUDA's list).
func (c CommonFlags) check() error {
	if c.Only != nil && c.OnlyVisible != nil && *c.OnlyVisible && len(*c.Only) > 0 {
		return errors.New("--only and --only-visible cannot be used together")
	}
	return nil
}
