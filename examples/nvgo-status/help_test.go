package main

import "github.com/nvgo/nvgo/examples/internal/tool"

// errHelp is what parseArgs returns for -h and --help, in this package's
// tests.
var errHelp = tool.ErrHelp
