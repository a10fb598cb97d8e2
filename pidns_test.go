package nvgo

import (
	"errors"
	"sync"
	"testing"
)

// setPIDNamespaceLink makes inHostPIDNamespace see the given link target (or
// error) until the test ends. Tests that use it must not run in parallel.
func setPIDNamespaceLink(t *testing.T, link string, err error) {
	t.Helper()
	saved := readPIDNamespaceLink
	readPIDNamespaceLink = func() (string, error) { return link, err }
	pidnsOnce = sync.Once{}
	t.Cleanup(func() {
		readPIDNamespaceLink = saved
		pidnsOnce = sync.Once{}
	})
}

func TestInHostPIDNamespace(t *testing.T) {
	tests := []struct {
		name string
		link string
		err  error
		want bool
	}{
		{"the initial namespace is the host's", "pid:[4026531836]", nil, true},
		{"another namespace is not", "pid:[4026532451]", nil, false},
		{"an unreadable link is assumed to be the host's", "", errors.New("no procfs"), true},
		{"an unparsable link is assumed to be the host's", "pid:[oops]", nil, true},
		{"a link to another kind of namespace is assumed to be the host's", "net:[4026531840]", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setPIDNamespaceLink(t, tt.link, tt.err)
			if got := inHostPIDNamespace(); got != tt.want {
				t.Errorf("inHostPIDNamespace() with link %q, err %v = %v, want %v", tt.link, tt.err, got, tt.want)
			}
		})
	}
}

func TestInHostPIDNamespaceIsMemoised(t *testing.T) {
	calls := 0
	saved := readPIDNamespaceLink
	readPIDNamespaceLink = func() (string, error) { calls++; return "pid:[4026531836]", nil }
	pidnsOnce = sync.Once{}
	t.Cleanup(func() { readPIDNamespaceLink = saved; pidnsOnce = sync.Once{} })

	for range 3 {
		inHostPIDNamespace()
	}
	if calls != 1 {
		t.Errorf("the link was read %d times, want 1", calls)
	}
}

func TestInHostPIDNamespaceReadsTheRealLink(t *testing.T) {
	pidnsOnce = sync.Once{}
	t.Cleanup(func() { pidnsOnce = sync.Once{} })
	link, err := readPIDNamespaceLink()
	if err != nil {
		t.Skipf("cannot read /proc/self/ns/pid: %v", err)
	}
	t.Logf("/proc/self/ns/pid -> %s; in host PID namespace: %v", link, inHostPIDNamespace())
}
