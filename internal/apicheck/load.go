package apicheck

import (
	"bytes"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// Module is the import path of the library module whose API is recorded.
const Module = "github.com/nvgo/nvgo"

// Packages lists the public packages of the library, relative to the module
// root: the one place to add a new one (TestPackagesListsEveryPublicPackage
// fails until it is added here).
var Packages = []string{
	".",
	"./fakegpu",
	"./fakegpu/fakehost",
	"./fakegpu/fleetclock",
	"./host",
	"./nvgotest",
}

// ImportPath returns the import path of rel, a package in Packages.
func ImportPath(rel string) string {
	return path.Join(Module, rel)
}

// GoldenFile returns where the API of rel is recorded under the module root:
// api/nvgo.txt for the root package, api/fakegpu.fakehost.txt for
// ./fakegpu/fakehost.
func GoldenFile(root, rel string) string {
	name := strings.ReplaceAll(path.Clean(rel), "/", ".")
	if name == "." {
		name = path.Base(Module)
	}
	return filepath.Join(root, "api", name+".txt")
}

// Load compiles the packages rels of the module at root with the go command,
// cgo on, and returns their types read from the compiler's export data, by
// import path.
func Load(root string, rels []string) (map[string]*types.Package, error) {
	args := append([]string{"list", "-deps", "-export", "-f", "{{.ImportPath}}\t{{.Export}}"}, rels...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		importPath, file, _ := strings.Cut(line, "\t")
		exports[importPath] = file
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(importPath string) (io.ReadCloser, error) {
		file := exports[importPath]
		if file == "" {
			return nil, fmt.Errorf("go list gave no export data for %s", importPath)
		}
		return os.Open(file)
	})
	pkgs := map[string]*types.Package{}
	for _, rel := range rels {
		pkg, err := imp.Import(ImportPath(rel))
		if err != nil {
			return nil, err
		}
		pkgs[pkg.Path()] = pkg
	}
	return pkgs, nil
}
