package nvgo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrBadBusID is wrapped by NormalizeBusID for a string that is not a PCI bus ID.
var ErrBadBusID = errors.New("not a PCI bus ID")

// NormalizeBusID turns a PCI bus ID in any accepted form into NVML's
// canonical one, "00000000:17:00.0" (8-digit domain, upper-case hex as
// nvidia-smi prints it). It accepts any case, a 4- or 8-digit domain, or no
// domain (meaning 0): "0000:17:00.0", "00000000:17:00.0", "17:00.0".
func NormalizeBusID(s string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("nvgo: %q: %s: %w", s, why, ErrBadBusID)
	}
	t := strings.TrimSpace(s)
	parts := strings.Split(t, ":")
	var domain uint64
	switch len(parts) {
	case 2:
	case 3:
		d := parts[0]
		if len(d) != 4 && len(d) != 8 {
			return bad("domain must have 4 or 8 hex digits")
		}
		v, err := strconv.ParseUint(d, 16, 32)
		if err != nil {
			return bad("domain is not hex")
		}
		domain = v
		parts = parts[1:]
	default:
		return bad("want [domain:]bus:device.function")
	}
	bus, devfn := parts[0], parts[1]
	dev, fn, ok := strings.Cut(devfn, ".")
	if !ok {
		return bad("missing .function")
	}
	b, err1 := parseHexField(bus, 2)
	d, err2 := parseHexField(dev, 2)
	f, err3 := parseHexField(fn, 1)
	if err := errors.Join(err1, err2, err3); err != nil {
		return bad(err.Error())
	}
	if d > 0x1f || f > 7 {
		return bad("device must be at most 1f and function at most 7")
	}
	return fmt.Sprintf("%08X:%02X:%02X.%X", domain, b, d, f), nil
}

func parseHexField(s string, width int) (uint64, error) {
	if len(s) == 0 || len(s) > width {
		return 0, fmt.Errorf("field %q must have 1 to %d hex digits", s, width)
	}
	v, err := strconv.ParseUint(s, 16, 8)
	if err != nil {
		return 0, fmt.Errorf("field %q is not hex", s)
	}
	return v, nil
}
