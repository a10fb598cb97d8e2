//go:build cgo

package fakegpu

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// defaultSeed is the identity seed of fleets built by New and of scenarios
// without a preset.
const defaultSeed = "fakegpu"

// dgxBuses are the PCI bus numbers of the eight GPUs of a DGX H100, in NVML
// index order.
var dgxBuses = [8]uint32{0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB}

// identityHash is the hash behind every derived identifier: stable across
// runs and Go versions.
func identityHash(seed, what string, index int) [32]byte {
	return sha256.Sum256([]byte(seed + "\x00" + what + "\x00" + strconv.Itoa(index)))
}

// deriveUUID returns the UUID of GPU index in a fleet with the given seed,
// lower-case like NVML's.
func deriveUUID(seed string, index int) string {
	h := identityHash(seed, "uuid", index)
	x := hex.EncodeToString(h[:16])
	return "GPU-" + x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// deriveSerial returns a 13-digit board serial number.
func deriveSerial(seed string, index int) string {
	h := identityHash(seed, "serial", index)
	return fmt.Sprintf("1%012d", binary.BigEndian.Uint64(h[:8])%1_000_000_000_000)
}

// deriveBusID returns the bus ID of GPU index: the DGX H100 bus numbers,
// repeated in PCI domain 1, 2, … past the eighth GPU.
func deriveBusID(index int) busID {
	return busID{domain: uint32(index / len(dgxBuses)), bus: dgxBuses[index%len(dgxBuses)]}
}

// deriveMIGUUID returns the UUID of the MIG device that is the gen-th to
// take slot on GPU index (gen 0 for those New creates), lower-case.
func deriveMIGUUID(seed string, index, slot, gen int) string {
	h := identityHash(seed, "mig-uuid/"+strconv.Itoa(slot)+"/"+strconv.Itoa(gen), index)
	x := hex.EncodeToString(h[:16])
	return "MIG-" + x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// validUUID reports whether s looks like an NVML GPU UUID:
// "GPU-" then hex digits grouped 8-4-4-4-12 (either case).
func validUUID(s string) bool { return validPrefixedUUID(s, "GPU-") }

// validMIGUUID reports whether s looks like an NVML MIG device UUID:
// "MIG-" then hex digits grouped 8-4-4-4-12 (either case).
func validMIGUUID(s string) bool { return validPrefixedUUID(s, "MIG-") }

func validPrefixedUUID(s, prefix string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != 36 {
		return false
	}
	for i, c := range rest {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c rune) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// busID is a parsed PCI address of a GPU.
type busID struct {
	domain, bus, device, function uint32
}

// String formats b as NVML's BusId does: "%08X:%02X:%02X.%X".
func (b busID) String() string {
	return fmt.Sprintf("%08X:%02X:%02X.%X", b.domain, b.bus, b.device, b.function)
}

// legacy formats b as NVML's BusIdLegacy does: "%04X:%02X:%02X.%X".
func (b busID) legacy() string {
	return fmt.Sprintf("%04X:%02X:%02X.%X", b.domain, b.bus, b.device, b.function)
}

var errBusID = errors.New(`want a PCI bus ID like "00000000:18:00.0"`)

// parseBusID parses the forms nvmlDeviceGetHandleByPciBusId accepts, in hex
// and either case: domain:bus:device.function, domain:bus:device and
// bus:device.function.
func parseBusID(s string) (busID, error) {
	var b busID
	parts := strings.Split(s, ":")
	needFn := len(parts) == 2 // bus:device.function
	switch len(parts) {
	case 3:
		d, err := parseHex(parts[0], 8)
		if err != nil {
			return b, fmt.Errorf("%w, got %q", errBusID, s)
		}
		b.domain = d
		parts = parts[1:]
	case 2:
	default:
		return b, fmt.Errorf("%w, got %q", errBusID, s)
	}
	bus, err := parseHex(parts[0], 2)
	if err != nil {
		return b, fmt.Errorf("%w, got %q", errBusID, s)
	}
	b.bus = bus
	dev, fn, hasFn := strings.Cut(parts[1], ".")
	if needFn && !hasFn {
		return b, fmt.Errorf("%w, got %q", errBusID, s)
	}
	if b.device, err = parseHex(dev, 2); err != nil || b.device > 0x1F {
		return b, fmt.Errorf("%w, got %q", errBusID, s)
	}
	if hasFn {
		if b.function, err = parseHex(fn, 1); err != nil || b.function > 7 {
			return b, fmt.Errorf("%w, got %q", errBusID, s)
		}
	}
	return b, nil
}

// parseHex parses 1 to maxDigits hex digits.
func parseHex(s string, maxDigits int) (uint32, error) {
	if s == "" || len(s) > maxDigits {
		return 0, errBusID
	}
	for _, c := range s {
		if !isHex(c) {
			return 0, errBusID
		}
	}
	v, err := strconv.ParseUint(s, 16, 32)
	return uint32(v), err
}
