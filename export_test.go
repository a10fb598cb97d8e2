package nvgo

// SetBeforeLockHook makes ReserveDevices call f between its selection and
// its locks, so a test can change the fleet in that window.
func SetBeforeLockHook(f func()) { testHookBeforeLock = f }
