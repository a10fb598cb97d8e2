package nvgo

import "sync"

// SetDefaultLibrary makes Default return l and err, so that tests can run
// the package-level shortcuts over a fake fleet. The returned function puts
// back what Default returned before (or makes it open the system's NVML on
// its next call, if it had not been called). Tests that use it must not run
// in parallel with anything that calls Default.
func SetDefaultLibrary(l *Library, err error) (restore func()) {
	fresh := false
	defaultOnce.Do(func() { fresh = true })
	oldLib, oldErr := defaultLib, defaultErr
	defaultLib, defaultErr = l, err
	return func() {
		defaultLib, defaultErr = oldLib, oldErr
		if fresh {
			defaultOnce = sync.Once{}
		}
	}
}
