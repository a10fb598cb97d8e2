//go:build cgo

package fakegpu

import "testing"

// TestLicenseExpiryStatuses pins the NVML_GRID_LICENSE_EXPIRY_* values of
// nvml.h, which go-nvml does not define.
func TestLicenseExpiryStatuses(t *testing.T) {
	got := []int{licenseExpiryNotAvailable, licenseExpiryInvalid, licenseExpiryValid, licenseExpiryNotApplicable, licenseExpiryPermanent}
	for want, v := range got {
		if v != want {
			t.Errorf("status %d is %d", want, v)
		}
	}
}
