package apicheck

import (
	"errors"
	"flag"
	"go/types"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "record the current API in api/*.txt; refused while CHANGELOG.md's Unreleased section does not name every changed identifier")

// root is the library module's root, seen from this package's directory.
const root = "../.."

func TestAPIMatchesItsRecord(t *testing.T) {
	pkgs := load(t)
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	announced := Announced(string(changelog))
	for _, rel := range Packages {
		t.Run(ImportPath(rel), func(t *testing.T) {
			importPath, file := ImportPath(rel), GoldenFile(root, rel)
			var recorded []string
			data, err := os.ReadFile(file)
			switch {
			case err == nil:
				recorded = Parse(data)
			case !errors.Is(err, fs.ErrNotExist):
				t.Fatal(err)
			}
			current := Render(pkgs[importPath])
			write, err := Check(pkgs[importPath].Name(), recorded, current, announced, *update)
			if err != nil {
				rel, _ := filepath.Rel(root, file)
				t.Fatalf("%s (recorded in %s): %v", importPath, rel, err)
			}
			if write {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, Format(importPath, current), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("recorded the API of %s in %s", importPath, file)
			}
		})
	}
}

func TestPackagesListsEveryPublicPackage(t *testing.T) {
	goCommand(t)
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Name}}", root+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var public []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		importPath, name, _ := strings.Cut(line, " ")
		if name != "main" && !slices.Contains(strings.Split(importPath, "/"), "internal") {
			public = append(public, importPath)
		}
	}
	var listed []string
	for _, rel := range Packages {
		listed = append(listed, ImportPath(rel))
	}
	slices.Sort(public)
	slices.Sort(listed)
	if !slices.Equal(public, listed) {
		t.Errorf("the public packages of the module are\n\t%s\nbut Packages (load.go) lists\n\t%s",
			strings.Join(public, "\n\t"), strings.Join(listed, "\n\t"))
	}
}

// load returns the packages of Packages by import path, as the compiler
// sees them with cgo on; it skips where there is no go command or no C
// compiler.
func load(t *testing.T) map[string]*types.Package {
	t.Helper()
	goCommand(t)
	cc, err := exec.Command("go", "env", "CC").Output()
	if err != nil {
		t.Fatalf("go env CC: %v", err)
	}
	if fields := strings.Fields(string(cc)); len(fields) == 0 {
		t.Skip("no C compiler configured: the recorded API is that of a cgo build")
	} else if _, err := exec.LookPath(fields[0]); err != nil {
		t.Skipf("no C compiler (%v): the recorded API is that of a cgo build", err)
	}
	pkgs, err := Load(root, Packages)
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// goCommand skips the test when there is no go command to run.
func goCommand(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command on PATH (%v): the API is read by compiling the packages", err)
	}
}
