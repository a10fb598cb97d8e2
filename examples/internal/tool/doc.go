// Package tool holds what nvgo's command-line tools share: opening the
// NVML library or a simulated fleet (--simulate), choosing devices (--only,
// --only-visible), filtering processes (--compute, --user, --pid) and
// reading nvitop-style flags, so that every tool answers the same flag the
// same way.
package tool
