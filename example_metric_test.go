//go:build cgo

package nvgo_test

import (
	"fmt"
	"strings"

	"github.com/nvgo/nvgo"
)

// A program that serves readings loops over the metrics instead of naming
// each: here, every temperature and power reading of a GPU, with its unit,
// as a number and as nvgo prints it. A reading nvgo adds later appears
// without a change here.
func ExampleDeviceMetrics() {
	lib, err := nvgo.Open(nvgo.WithNVML(exampleFleet()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lib.Close()
	d, err := lib.DeviceByIndex(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := d.Snapshot(nvgo.FieldTemperature | nvgo.FieldPower)
	for _, m := range nvgo.DeviceMetrics() {
		if m.Group&(nvgo.FieldTemperature|nvgo.FieldPower) == 0 {
			continue
		}
		x, ok := m.Value(&s).Get()
		if !ok {
			fmt.Printf("%-25s N/A (%v)\n", m.Name, m.Value(&s).Reason())
			continue
		}
		fmt.Printf("%-25s %-8s %g %s (%s)\n", m.Name, m.Kind, x, m.Unit, m.Text(&s))
	}
	// Output:
	// temperature               gauge    41 C (41C)
	// memory_temperature        gauge    44 C (44C)
	// power_usage               gauge    72000 mW (72W)
	// power_limit               gauge    700000 mW (700W)
	// default_power_limit       gauge    700000 mW (700W)
	// total_energy_consumption  counter  0 mJ (0mJ)
}

// LookupDeviceMetric finds one metric's description by its name, e.g. to
// label a reading read elsewhere.
func ExampleLookupDeviceMetric() {
	m, ok := nvgo.LookupDeviceMetric("memory_temperature")
	fmt.Println(ok, m.Unit, m.Kind, m.Group, m.MIG)
	fmt.Println(strings.HasPrefix(m.Help, "Memory (HBM) temperature"))
	// Output:
	// true C gauge temperature false
	// true
}
