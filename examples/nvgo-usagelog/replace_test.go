package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReplaceFileReplacesOnlyRegularFiles(t *testing.T) {
	const old, fresh = "old\n", "new\n"
	tests := []struct {
		name string
		// make creates what is at path before the call, in dir; nil
		// for nothing.
		make     func(t *testing.T, dir, path string)
		wantKind string // "" when the file is written
	}{
		{name: "a missing file is created"},
		{name: "a regular file is replaced", make: func(t *testing.T, _, path string) { writeFile(t, path, old) }},
		{
			name: "a symbolic link to a regular file is refused", wantKind: "a symbolic link",
			make: func(t *testing.T, dir, path string) {
				target := filepath.Join(dir, "target")
				writeFile(t, target, old)
				must(t, os.Symlink(target, path))
			},
		},
		{
			name: "a dangling symbolic link is refused", wantKind: "a symbolic link",
			make: func(t *testing.T, dir, path string) { must(t, os.Symlink(filepath.Join(dir, "none"), path)) },
		},
		{
			name: "a named pipe is refused", wantKind: "a named pipe",
			make: func(t *testing.T, _, path string) { must(t, syscall.Mkfifo(path, 0o644)) },
		},
		{
			name: "a character device is refused", wantKind: "a character device",
			make: func(t *testing.T, _, path string) {
				// A node like /dev/full's, in the test's own directory.
				if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|7); err != nil {
					t.Skip("cannot make a device node here (needs root):", err)
				}
			},
		},
		{
			name: "a directory is refused", wantKind: "a directory",
			make: func(t *testing.T, _, path string) { must(t, os.Mkdir(path, 0o755)) },
		},
		{
			name: "a socket is refused", wantKind: "a socket",
			make: func(t *testing.T, _, path string) {
				l, err := net.Listen("unix", path)
				if err != nil {
					t.Skip("cannot make a Unix socket here:", err)
				}
				t.Cleanup(func() { l.Close() })
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "chart.svg")
			if tt.make != nil {
				tt.make(t, dir, path)
			}
			before, _ := os.Lstat(path)
			err := replaceFile(path, func(w io.Writer) error {
				_, err := io.WriteString(w, fresh)
				return err
			})
			if tt.wantKind == "" {
				if err != nil {
					t.Fatal(err)
				}
				fi, err := os.Lstat(path)
				if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 || readFile(t, path) != fresh {
					t.Errorf("after replaceFile: %v, %v; want a regular file of mode 0644 holding %q", fi, err, fresh)
				}
			} else {
				want := path + " is " + tt.wantKind + ", not a regular file: not replaced"
				if !errors.Is(err, errNotRegular) || err.Error() != want {
					t.Errorf("replaceFile = %v; want %q", err, want)
				}
				after, err := os.Lstat(path)
				if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
					t.Errorf("the %s was replaced: %v, %v", tt.wantKind, after, err)
				}
				if target := filepath.Join(dir, "target"); fileExists(target) && readFile(t, target) != old {
					t.Errorf("the link's target was written: %q", readFile(t, target))
				}
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("a temporary file was left behind: %s", e.Name())
				}
			}
		})
	}
}

func TestReportRefusesAnSVGPathThatIsNoRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "chart.svg")
	must(t, syscall.Mkfifo(fifo, 0o644))
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"report", "--dir", dir, "--svg", fifo}, &stdout, &stderr)
	want := "nvgo-usagelog: --svg: " + fifo + " is a named pipe, not a regular file: not replaced\n"
	if code != exitError || stderr.String() != want {
		t.Errorf("report --svg FIFO = %d, stderr %q; want %d, %q", code, stderr.String(), exitError, want)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced: %v, %v", fi, err)
	}
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
