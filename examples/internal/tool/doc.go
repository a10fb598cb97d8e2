// Package tool holds what nvgo's command-line tools share: reading their
// flags (Args, nvitop's way or argparse's, CommonFlags for the flags the
// tools share, and the flag package's way with NewFlagSet and ParseFlags),
// answering -h and bad arguments (ArgsDone), opening the NVML library or a
// simulated fleet (--simulate) and saying why it cannot be used
// (ExplainNoDriver), choosing devices (--only, --only-visible) and
// filtering processes (--compute, --user, --pid), so that every tool
// answers the same flag the same way.
package tool
