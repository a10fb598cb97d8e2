//go:build !cgo

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "libnvml: built without cgo; the fake fleet needs it: build with CGO_ENABLED=1 and a C compiler")
	os.Exit(1)
}
