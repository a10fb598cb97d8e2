package nvgo_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nvgo/nvgo"
)

func ExampleParseBytes() {
	for _, s := range []string{"512", "10k", "10KiB", "1.5GiB", "4g", " +8 MiB "} {
		b, err := nvgo.ParseBytes(s)
		fmt.Printf("%q = %d bytes (%v), err = %v\n", s, uint64(b), b, err)
	}

	_, err := nvgo.ParseBytes("-1GiB")
	fmt.Println(err)
	fmt.Println(errors.Is(err, nvgo.ErrBadSize))
	// Output:
	// "512" = 512 bytes (512B), err = <nil>
	// "10k" = 10000 bytes (10KiB), err = <nil>
	// "10KiB" = 10240 bytes (10KiB), err = <nil>
	// "1.5GiB" = 1610612736 bytes (1536MiB), err = <nil>
	// "4g" = 4000000000 bytes (3815MiB), err = <nil>
	// " +8 MiB " = 8388608 bytes (8.00MiB), err = <nil>
	// parse size "-1GiB": invalid size: want a non-negative decimal number
	// true
}

func ExampleBytes_String() {
	for _, b := range []nvgo.Bytes{
		512,
		3 << 10,
		8<<20 + 512<<10,
		150 << 20,
		8862 << 20,
		20 << 30,
		80 << 30,
		640 << 30,
	} {
		fmt.Println(b)
	}
	// Output:
	// 512B
	// 3KiB
	// 8.50MiB
	// 150.0MiB
	// 8862MiB
	// 20.00GiB
	// 80.00GiB
	// 640.0GiB
}

func ExampleHumanDuration() {
	fmt.Println(nvgo.HumanDuration(5*time.Minute + 7*time.Second))
	fmt.Println(nvgo.HumanDuration(46*time.Hour + 13*time.Minute + 33*time.Second))
	fmt.Println(nvgo.HumanDuration(108 * time.Hour))
	// Output:
	// 5:07
	// 46:13:33
	// 4.5 days
}

func ExampleCommandJoin() {
	fmt.Println(nvgo.CommandJoin([]string{"python3", "-c", "import torch; print(torch.cuda.device_count())"}))
	fmt.Println(nvgo.CommandJoin([]string{"sh", "-c", "echo $HOME"}))
	fmt.Println(nvgo.CommandJoin([]string{"printf", "it's\n"}))
	// A single element is usually a title set with setproctitle; it is kept as it is.
	fmt.Println(nvgo.CommandJoin([]string{"ray::Trainer.train()"}))
	// Output:
	// python3 -c "import torch; print(torch.cuda.device_count())"
	// sh -c 'echo $HOME'
	// printf "it's\n"
	// ray::Trainer.train()
}

func ExampleValue() {
	used := nvgo.Some(nvgo.Bytes(8862 << 20))
	// A read that failed: the 0 it returned is not a fan speed.
	fan := nvgo.FromErr(0, &nvgo.NVMLError{Op: "nvmlDeviceGetFanSpeed", Code: 3})

	fmt.Printf("memory used: %v\n", used)
	fmt.Printf("fan: [%6v] because %v\n", fan, fan.Reason())
	fmt.Println("fan or -1:", fan.Or(-1))

	b, _ := json.Marshal(struct {
		Used nvgo.Value[nvgo.Bytes] `json:"memory_used"`
		Fan  nvgo.Value[int]        `json:"fan_speed"`
	}{used, fan})
	fmt.Println(string(b))
	// Output:
	// memory used: 8862MiB
	// fan: [   N/A] because not supported
	// fan or -1: -1
	// {"memory_used":9292480512,"fan_speed":null}
}

func ExampleCompare() {
	temps := []nvgo.Value[nvgo.Celsius]{
		nvgo.Some[nvgo.Celsius](71),
		nvgo.NA[nvgo.Celsius](nvgo.GPULost, nil),
		nvgo.Some[nvgo.Celsius](-4),
		nvgo.Some[nvgo.Celsius](38),
	}
	slices.SortFunc(temps, nvgo.Compare[nvgo.Celsius])
	fmt.Println(temps)
	// Output:
	// [-4C 38C 71C N/A]
}
