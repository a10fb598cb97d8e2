package nvgo

// SetBeforeLockHook makes ReserveDevices call f between its selection and
// its locks, so a test can change the fleet in that window.
func SetBeforeLockHook(f func()) { testHookBeforeLock = f }

// TickNow makes a take one tick now, outside its schedule. Benchmarks use it
// with a clock that never fires, so the sampler goroutine stays idle.
func TickNow(a *Accumulator) { a.tick(a.clock.Now()) }
