package nvgo_test

import (
	"context"
	"fmt"
	"os"

	"github.com/nvgo/nvgo"
)

func ExampleReadHost() {
	s := nvgo.ReadHost(context.Background())
	fmt.Println("has CPUs:", s.CPUCount > 0)
	fmt.Println("memory known:", !s.MemoryTotal.IsNA())
	// A metric that could not be read prints "N/A", and its Reason says why:
	// fmt.Println(s.SwapPercent, s.SwapPercent.Reason()) might print "N/A error".

	// Output:
	// has CPUs: true
	// memory known: true
}

func ExampleNewHostProcess() {
	p, err := nvgo.NewHostProcess(os.Getpid())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("running:", p.IsRunning())
	fmt.Println("has a name:", !p.Name().IsNA())
	if cmd, ok := p.Command().Get(); ok && cmd != "" {
		fmt.Println("has a command line")
	}
	// Output:
	// running: true
	// has a name: true
	// has a command line
}
