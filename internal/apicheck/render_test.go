package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"
)

// source is a package with one of each thing Render records.
const source = `package p

// Max is documented.
const Max = 3

// Kind is a typed enum.
type Kind uint8

const (
	KindA Kind = iota
	KindB
)

// ErrGone is a sentinel.
var ErrGone error

// Open opens.
func Open(path string, opts ...Option) (*Lib, error) { return nil, nil }

// Option configures Open.
type Option func(*options)

type options struct{}

// Map is generic.
func Map[T any, U comparable](v T, f func(x T) U) U { return f(v) }

// Lib is a handle.
type Lib struct {
	base
	Name  string ` + "`json:\"name\"`" + `
	Inner
	hidden int
}

type base struct {
	ID int ` + "`json:\"id\"`" + `
}

// Close is promoted onto Lib from an unexported type.
func (*base) Close() error { return nil }

func (base) String() string { return "" }

// Inner is exported: its members are its own record's, not Lib's.
type Inner struct{ Depth int }

// Reset is Inner's.
func (i *Inner) Reset() {}

// Reader has a method set.
type Reader interface {
	Read(buf []byte) (n int, err error)
	seal()
}
`

// check type-checks a package from src, which imports nothing.
func check(t *testing.T, src string) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := new(types.Config).Check("example.com/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

func TestRenderRecordsWhatCallersCompileAgainst(t *testing.T) {
	want := []string{
		"const KindA Kind = 0",
		"const KindB Kind = 1",
		"const Max untyped int = 3",
		"field Inner.Depth int",
		"field Lib.ID int (promoted) `json:\"id\"`",
		"field Lib.Inner Inner (embedded)",
		"field Lib.Name string `json:\"name\"`",
		"func Map[T any, U comparable](T, func(T) U) U",
		"func Open(string, ...Option) (*Lib, error)",
		"method (*Inner).Reset()",
		"method (*Lib).Close() error (promoted)",
		"method Lib.String() string (promoted)",
		"method Reader.Read([]byte) (int, error)",
		"type Inner struct",
		"type Kind uint8",
		"type Lib struct (has unexported fields)",
		"type Option func(*options)",
		"type Reader interface (has unexported methods)",
		"var ErrGone error",
	}
	if got := Render(check(t, source)); !slices.Equal(got, want) {
		t.Errorf("Render =\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

func TestRenderChangesOnlyWithTheAPI(t *testing.T) {
	tests := []struct {
		name, old, new string
		wantChange     bool
	}{
		{"an edited doc comment is no change", "// Open opens.", "// Open opens a library, or fails.", false},
		{"a renamed parameter is no change", "Open(path string,", "Open(file string,", false},
		{"a renamed parameter of a func type is no change", "f func(x T) U", "f func(y T) U", false},
		{"an unexported field is no change", "hidden int", "hidden, more int", false},
		{"a changed JSON tag is a change", `json:"name"`, `json:"title"`, true},
		{"a changed parameter type is a change", "Open(path string,", "Open(path []byte,", true},
		{"a changed constant value is a change", "KindA Kind = iota", "KindA Kind = iota + 1", true},
		{"a method moved to the pointer receiver is a change", "func (base) String()", "func (*base) String()", true},
		{"an interface method added is a change", "seal()", "seal()\n\tClose() error", true},
	}
	before := Render(check(t, source))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(source, tt.old) {
				t.Fatalf("source lacks %q", tt.old)
			}
			after := Render(check(t, strings.Replace(source, tt.old, tt.new, 1)))
			if got := !slices.Equal(before, after); got != tt.wantChange {
				t.Errorf("changed = %v, want %v; now\n\t%s", got, tt.wantChange, strings.Join(after, "\n\t"))
			}
		})
	}
}
