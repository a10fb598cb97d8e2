package tool

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The tools' names are the names of their directories: go install and go
// build name a command after its directory. A tool once lived in
// examples/select, and "CUDA_VISIBLE_DEVICES=$(select -n 1)" is a syntax
// error in bash, where select is a keyword; status, monitor and exporter were
// as generic in a PATH. So every tool is named nvgo-…, but atopgpud, which
// stands in for upstream's daemon of that name.

// shellWords are bash's keywords (compgen -k) and builtins (compgen -b), as
// of bash 5.2: a command of one of these names cannot be run by its name.
var shellWords = strings.Fields(`
	if then else elif fi case esac for select while until do done in function
	time { } ! [[ ]] coproc
	. : [ alias bg bind break builtin caller cd command compgen complete compopt
	continue declare dirs disown echo enable eval exec exit export false fc fg
	getopts hash help history jobs kill let local logout mapfile popd printf
	pushd pwd read readarray readonly return set shift shopt source suspend
	test times trap true type typeset ulimit umask unalias unset wait`)

// checkToolName says why name is no name for a tool, or nil.
func checkToolName(name string, shell []string) error {
	if slices.Contains(shell, name) {
		return fmt.Errorf("%q is a shell keyword or builtin", name)
	}
	if name != "atopgpud" && (!strings.HasPrefix(name, "nvgo-") || name == "nvgo-") {
		return fmt.Errorf("%q is not named nvgo-… (nor atopgpud)", name)
	}
	return nil
}

func TestCheckToolName(t *testing.T) {
	for name, ok := range map[string]bool{
		"nvgo-status": true, "nvgo-select": true, "atopgpud": true,
		"select": false, "time": false, "test": false, "command": false, // shell words
		"status": false, "monitor": false, "exporter": false, "usagelog": false, "nvgo-": false,
	} {
		if err := checkToolName(name, shellWords); (err == nil) != ok {
			t.Errorf("checkToolName(%q) = %v; want ok %v", name, err, ok)
		}
	}
}

// TestToolNames checks every command under examples/ (a directory holding
// package main): its name, and that its --help starts "usage: NAME".
func TestToolNames(t *testing.T) {
	shell := slices.Clone(shellWords)
	if _, err := exec.LookPath("bash"); err == nil {
		// The installed bash too, in case it knows words the list does not.
		out, err := exec.Command("bash", "-c", "compgen -k; compgen -b").Output()
		if err != nil {
			t.Fatalf("bash compgen: %v", err)
		}
		shell = append(shell, strings.Fields(string(out))...)
	}
	root := filepath.Join("..", "..") // examples/
	dirs := commands(t, root)
	var names []string
	for _, dir := range dirs {
		names = append(names, filepath.Base(dir))
	}
	if !slices.Contains(names, "atopgpud") {
		t.Fatalf("found the commands %q under examples/, not atopgpud: the walk looked in the wrong place", dirs)
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		if err := checkToolName(name, shell); err != nil {
			t.Errorf("examples/%s: %v; go install would install it as %s", dir, err, name)
		}
		if usage := "usage: " + name + " "; !sourceSays(t, filepath.Join(root, dir), usage) {
			t.Errorf("examples/%s: no source file says %q: its --help names it otherwise than go install does", dir, usage)
		}
	}
}

// commands returns the directories under root, relative to it, that hold
// a package main.
func commands(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err == nil && f.Name.Name == "main" && !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// sourceSays reports whether a non-test Go file in dir contains s.
func sourceSays(t *testing.T, dir, s string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}
