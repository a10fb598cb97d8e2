package tool

import (
	"errors"
	"fmt"

	"github.com/nvgo/nvgo"
)

// OpenAvailable opens the library as Open does, then checks that its
// driver answers (nvgo.Library.Available), closing it when not. An error
// of Open is returned as it is (a bad --simulate file), one of Available
// explained by ExplainNoDriver.
func OpenAvailable(simulate string, live bool, opts ...nvgo.Option) (*nvgo.Library, error) {
	lib, err := Open(simulate, live, opts...)
	if err != nil {
		return nil, err
	}
	if err := lib.Available(); err != nil {
		lib.Close()
		return nil, ExplainNoDriver(err)
	}
	return lib, nil
}

// OpenDevices opens the library as OpenAvailable does and chooses the
// devices to show as ChooseDevices does, closing the library when that
// fails: for a tool that shows devices, whose exit status for the error
// ExitStatus tells. An error of Open is returned as it is; the others are
// explained by ExplainNoDriver, and one of CUDA's device list starts with
// "--only-visible: ".
func OpenDevices(simulate string, live bool, only []int, onlyVisible bool, opts ...nvgo.Option) (*nvgo.Library, Selection, error) {
	lib, err := OpenAvailable(simulate, live, opts...)
	if err != nil {
		return nil, Selection{}, err
	}
	sel, err := ChooseDevices(lib, only, onlyVisible)
	if err != nil {
		lib.Close()
		if errors.Is(err, nvgo.ErrUndetermined) {
			err = fmt.Errorf("--only-visible: %w", err)
		}
		return nil, Selection{}, ExplainNoDriver(err)
	}
	return lib, sel, nil
}
