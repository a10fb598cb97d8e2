package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The files of a log directory besides the daily CSVs.
const (
	stateName = "usagelog.state" // JSON: the last interval written
	gapsName  = "gaps.csv"       // the spans nothing was measured
	lockName  = ".usagelog.lock" // held by the running logger
)

// dayLayout names the daily CSVs: 2026-11-21.csv.
const dayLayout = "2006-01-02"

var dayFileName = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}\.csv$`)

// dayFile returns the CSV that rows of an interval ending at end go to: the
// file of end's date in loc.
func dayFile(dir string, end time.Time, loc *time.Location) string {
	return filepath.Join(dir, end.In(loc).Format(dayLayout)+".csv")
}

// dataFile is one daily CSV.
type dataFile struct {
	Day  string // YYYY-MM-DD
	Path string
}

// dataFiles lists the daily CSVs of dir by date.
func dataFiles(dir string) ([]dataFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []dataFile
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !dayFileName.MatchString(name) {
			continue
		}
		day := strings.TrimSuffix(name, ".csv")
		if _, err := time.Parse(dayLayout, day); err != nil {
			continue
		}
		out = append(out, dataFile{Day: day, Path: filepath.Join(dir, name)})
	}
	slices.SortFunc(out, func(a, b dataFile) int { return strings.Compare(a.Day, b.Day) })
	return out, nil
}

// appendLines appends data (whole lines) to path in one write(2) with
// O_APPEND, preceded by head (unless "") when the file is new or empty, and
// syncs it to disk, so that a crash leaves either all the lines or a torn
// last line that repairTail cuts.
func appendLines(path, head string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if st.Size() == 0 && head != "" {
		data = append([]byte(head+"\n"), data...)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if st.Size() == 0 {
		return syncDir(filepath.Dir(path)) // the new file's name
	}
	return nil
}

// tornSuffix names the side file that keeps what repairTail cut off a file:
// 2025-01-01.csv.torn beside 2025-01-01.csv. dataFiles does not list it.
const tornSuffix = ".torn"

// tailRepair is what repairTail did to the last line of a file.
type tailRepair struct {
	// Ended is the length of a whole last line that lacked only its "\n",
	// which repairTail appended; 0 when there was none.
	Ended int
	// Cut is a torn last line that repairTail cut off; nil when none.
	Cut []byte
	// Side is the side file Cut was appended to ("" when nothing was cut).
	Side string
}

// repairTail makes path end with a whole line. A last line without its
// "\n" (a write interrupted by a crash, or a file written by another tool)
// is kept, and the "\n" appended, when whole reports that it is a whole
// record; otherwise it is appended, with a "\n", to the side file
// path+".torn" (never overwritten), synced, and only then cut off path, so
// that no byte is lost. A file that ends with "\n", is empty or does not
// exist is left alone.
func repairTail(path string, whole func(line string) bool) (tailRepair, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return tailRepair{}, nil
	}
	if err != nil {
		return tailRepair{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return tailRepair{}, err
	}
	keep, err := lastLineEnd(f, st.Size())
	if err != nil || keep == st.Size() {
		return tailRepair{}, err
	}
	tail := make([]byte, st.Size()-keep)
	if _, err := f.ReadAt(tail, keep); err != nil {
		return tailRepair{}, fmt.Errorf("read the last line: %w", err)
	}
	if whole(string(tail)) {
		if _, err := f.WriteAt([]byte("\n"), st.Size()); err != nil {
			return tailRepair{}, fmt.Errorf("end the last line: %w", err)
		}
		return tailRepair{Ended: len(tail)}, f.Sync()
	}
	side := path + tornSuffix
	if err := appendLines(side, "", append(tail, '\n')); err != nil {
		return tailRepair{}, fmt.Errorf("keep the torn line in %s: %w", side, err)
	}
	if err := f.Truncate(keep); err != nil {
		return tailRepair{}, fmt.Errorf("cut the torn line: %w", err)
	}
	return tailRepair{Cut: tail, Side: side}, f.Sync()
}

// lastLineEnd returns the offset just after the last "\n" in the first size
// bytes of f (0 when there is none), reading backwards.
func lastLineEnd(f io.ReaderAt, size int64) (int64, error) {
	const chunk = 4096
	buf := make([]byte, chunk)
	for end := size; end > 0; {
		start := max(end-chunk, 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// lastRowTime returns the newest Timestamp among the well-formed rows of a
// daily CSV; ok is false when it has none.
func lastRowTime(path string) (last int64, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	err = scanLines(f, func(_ int, line string, complete bool) {
		if r, err := parseRow(line); err == nil && complete && r.Time > last {
			last, ok = r.Time, true
		}
	})
	return last, ok, err
}

// scanLines calls fn with each line of r and its number (from 1); complete
// is false for a last line without "\n" (one being written, or torn).
func scanLines(r io.Reader, fn func(n int, line string, complete bool)) error {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			complete := strings.HasSuffix(line, "\n")
			fn(n, strings.TrimSuffix(line, "\n"), complete)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// state is the state file: the end of the last interval written, whether it
// had rows or not (an idle GPU writes none), so that a restart can tell a
// gap from an idle spell.
type state struct {
	Version int `json:"version"`
	// LastEnd is the end of the last interval written.
	LastEnd time.Time `json:"last_end"`
	// File is the CSV its rows went to, if it had any; for people.
	File string `json:"file,omitempty"`
	// Interval and Tick are the logger's settings, for people.
	Interval string `json:"interval,omitempty"`
	Tick     string `json:"tick,omitempty"`
}

const stateVersion = 1

// loadState reads dir's state file; nil and no error when there is none.
func loadState(dir string) (*state, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", stateName, err)
	}
	if s.Version != stateVersion || s.LastEnd.IsZero() {
		return nil, fmt.Errorf("%s: version %d, last_end %v: not a state this version writes", stateName, s.Version, s.LastEnd)
	}
	return &s, nil
}

// saveState replaces dir's state file atomically (replaceFile).
func saveState(dir string, s state) error {
	s.Version = stateVersion
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return replaceFile(filepath.Join(dir, stateName), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// errNotRegular is returned by replaceFile for a path that is neither a
// regular file nor missing.
var errNotRegular = errors.New("not a regular file")

// replaceFile writes path (mode 0644) through a temporary file in its
// directory, synced and renamed over it, and syncs the directory: a reader
// sees the old file or the new one, never half of one, and a crash leaves
// one of them. It replaces only a regular file, or creates a missing one;
// anything else (a symbolic link, a named pipe, a device, a directory, a
// socket) is refused with errNotRegular, naming what it is: renaming over
// it would replace the link or the node itself (as root, /dev/full with a
// chart), and writing through it is not what "replace FILE" means. A path
// that turns into something else after the check is still not written
// through: rename replaces a link, never its target.
func replaceFile(path string, write func(io.Writer) error) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is %s, %w: not replaced", path, fileKind(fi.Mode()), errNotRegular)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	for _, step := range []func() error{
		func() error { return write(tmp) },
		func() error { return tmp.Chmod(0o644) },
		tmp.Sync,
	} {
		if err := step(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// fileKind names the kind of file of a mode that is not a regular file's.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a file of an unknown kind"
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// lockDir takes an exclusive lock on dir, so that two loggers never write
// the same files; closing the returned file releases it.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("another nvgo-usagelog is writing to %s", dir)
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return f, nil
}
