package apicheck

import (
	"bytes"
	"fmt"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// promoted marks a field or method reached through an embedded field.
const promoted = " (promoted)"

// Render returns the exported API of pkg as sorted lines, one per
// declaration or member, in the format the package doc shows.
func Render(pkg *types.Package) []string {
	r := renderer{pkg: pkg}
	var lines []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if !token.IsExported(name) {
			continue
		}
		switch obj := scope.Lookup(name).(type) {
		case *types.Const:
			lines = append(lines, fmt.Sprintf("const %s %s = %s", name, r.typ(obj.Type()), obj.Val().ExactString()))
		case *types.Var:
			lines = append(lines, fmt.Sprintf("var %s %s", name, r.typ(obj.Type())))
		case *types.Func:
			lines = append(lines, "func "+name+r.signature(obj.Type().(*types.Signature)))
		case *types.TypeName:
			lines = append(lines, r.typeDecl(obj)...)
		}
	}
	sort.Strings(lines)
	return lines
}

// renderer renders the types of one package, naming other packages by their
// package name.
type renderer struct{ pkg *types.Package }

// qualify is the types.Qualifier of r: nothing for r's own package.
func (r renderer) qualify(p *types.Package) string {
	if p == r.pkg {
		return ""
	}
	return p.Name()
}

// typeDecl renders a type declaration and its exported fields and methods.
// An alias of a type in an internal package gets that type's members, which
// no other record holds.
func (r renderer) typeDecl(tn *types.TypeName) []string {
	name := tn.Name()
	named, _ := types.Unalias(tn.Type()).(*types.Named)
	if tn.IsAlias() {
		head := "type " + name + " = " + r.typ(types.Unalias(tn.Type()))
		if named == nil || !internal(named.Obj().Pkg()) {
			return []string{head}
		}
		return append([]string{head + " " + r.underlying(named)}, r.members(name, named)...)
	}
	head := "type " + name + r.typeParams(named.TypeParams()) + " " + r.underlying(named)
	return append([]string{head}, r.members(name, named)...)
}

// underlying describes the underlying type of t: "struct" or "interface"
// (whose members get lines of their own), noting unexported fields or
// methods, or the type itself ("uint32", "func(*options)").
func (r renderer) underlying(t *types.Named) string {
	switch u := t.Underlying().(type) {
	case *types.Struct:
		for i := range u.NumFields() {
			if !u.Field(i).Exported() {
				return "struct (has unexported fields)"
			}
		}
		return "struct"
	case *types.Interface:
		if !u.IsMethodSet() { // a constraint: its type set is its API
			return r.typ(u)
		}
		for i := range u.NumMethods() {
			if !u.Method(i).Exported() {
				return "interface (has unexported methods)"
			}
		}
		return "interface"
	default:
		return r.typ(u)
	}
}

// members renders the exported fields and methods of t under the name name.
func (r renderer) members(name string, t *types.Named) []string {
	if iface, ok := t.Underlying().(*types.Interface); ok {
		var lines []string
		for i := range iface.NumMethods() {
			if m := iface.Method(i); m.Exported() {
				lines = append(lines, fmt.Sprintf("method %s.%s%s", name, m.Name(), r.signature(m.Type().(*types.Signature))))
			}
		}
		return lines
	}
	lines := r.fields(name, t)
	// The method set of *T holds every method callable on an addressable T,
	// those promoted from embedded types (exported or not) included.
	values := types.NewMethodSet(t)
	ptrs := types.NewMethodSet(types.NewPointer(t))
	for i := range ptrs.Len() {
		sel := ptrs.At(i)
		m := sel.Obj()
		if !m.Exported() {
			continue
		}
		if recordedElsewhere(t, sel.Index()) {
			continue
		}
		recv := name
		if values.Lookup(m.Pkg(), m.Name()) == nil {
			recv = "(*" + name + ")"
		}
		line := fmt.Sprintf("method %s.%s%s", recv, m.Name(), r.signature(m.Type().(*types.Signature)))
		if len(sel.Index()) > 1 {
			line += promoted
		}
		lines = append(lines, line)
	}
	return lines
}

// fields renders the exported fields of struct type t, those promoted from
// embedded structs included, each with its struct tag.
func (r renderer) fields(name string, t *types.Named) []string {
	names := map[string]bool{}
	fieldNames(t, map[*types.Named]bool{}, names)
	var lines []string
	for field := range names {
		obj, index, _ := types.LookupFieldOrMethod(t, false, r.pkg, field)
		f, ok := obj.(*types.Var)
		if !ok || !f.IsField() || recordedElsewhere(t, index) {
			continue // ambiguous, shadowed by a method, or another type's
		}
		line := fmt.Sprintf("field %s.%s %s", name, field, r.typ(f.Type()))
		if f.Embedded() {
			line += " (embedded)"
		}
		if len(index) > 1 {
			line += promoted
		}
		if tag := tagAt(t, index); tag != "" {
			line += " `" + tag + "`"
		}
		lines = append(lines, line)
	}
	return lines
}

// fieldNames collects the exported field names of t's struct and of the
// structs it embeds, at any depth.
func fieldNames(t types.Type, seen map[*types.Named]bool, out map[string]bool) {
	t = deref(t)
	if n, ok := types.Unalias(t).(*types.Named); ok {
		if seen[n] {
			return
		}
		seen[n] = true
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return
	}
	for i := range st.NumFields() {
		f := st.Field(i)
		if f.Exported() {
			out[f.Name()] = true
		}
		if f.Embedded() {
			fieldNames(f.Type(), seen, out)
		}
	}
}

// recordedElsewhere reports whether the member that index (from
// types.LookupFieldOrMethod) reaches from t is promoted through an embedded
// field of an exported type outside internal packages: that field's own line
// names the type, and the type's record, or its module's version, holds its
// members. (fakegpu.Fleet embeds go-nvml's mock.Interface and its hundreds of
// fields.) Members promoted through unexported types are t's own API.
func recordedElsewhere(t types.Type, index []int) bool {
	for _, idx := range index[:len(index)-1] {
		f := deref(t).Underlying().(*types.Struct).Field(idx)
		if n, ok := types.Unalias(deref(f.Type())).(*types.Named); ok && n.Obj().Exported() && !internal(n.Obj().Pkg()) {
			return true
		}
		t = f.Type()
	}
	return false
}

// internal reports whether pkg is an internal package, whose types no record
// holds.
func internal(pkg *types.Package) bool {
	return pkg != nil && strings.Contains("/"+pkg.Path()+"/", "/internal/")
}

// deref returns the element type of a pointer, t itself otherwise.
func deref(t types.Type) types.Type {
	if p, ok := t.(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// tagAt returns the struct tag of the field that index (from
// types.LookupFieldOrMethod) reaches from t.
func tagAt(t types.Type, index []int) string {
	for i, idx := range index {
		st := deref(t).Underlying().(*types.Struct)
		if i == len(index)-1 {
			return st.Tag(idx)
		}
		t = st.Field(idx).Type()
	}
	return ""
}

// signature renders sig as it follows a function's name: type parameters,
// parameters and results, without receiver or names.
func (r renderer) signature(sig *types.Signature) string {
	var buf bytes.Buffer
	buf.WriteString(r.typeParams(sig.TypeParams()))
	types.WriteSignature(&buf, plain(sig).(*types.Signature), r.qualify)
	return buf.String()
}

// typ renders t, without parameter names in the function types it holds.
func (r renderer) typ(t types.Type) string {
	return types.TypeString(plain(t), r.qualify)
}

// typeParams renders a type parameter list, "[K comparable, V any]", or ""
// when there is none.
func (r renderer) typeParams(list *types.TypeParamList) string {
	if list.Len() == 0 {
		return ""
	}
	parts := make([]string, list.Len())
	for i := range parts {
		tp := list.At(i)
		parts[i] = tp.Obj().Name() + " " + r.typ(tp.Constraint())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// plain returns t with the parameter and result names dropped from the
// function types it is built of (and a signature's type parameters, which
// signature renders itself): renaming a parameter changes no caller.
func plain(t types.Type) types.Type {
	switch t := t.(type) {
	case *types.Signature:
		return types.NewSignatureType(nil, nil, nil, plainTuple(t.Params()), plainTuple(t.Results()), t.Variadic())
	case *types.Pointer:
		return types.NewPointer(plain(t.Elem()))
	case *types.Slice:
		return types.NewSlice(plain(t.Elem()))
	case *types.Array:
		return types.NewArray(plain(t.Elem()), t.Len())
	case *types.Map:
		return types.NewMap(plain(t.Key()), plain(t.Elem()))
	case *types.Chan:
		return types.NewChan(t.Dir(), plain(t.Elem()))
	}
	return t
}

// plainTuple returns tuple with its variables unnamed and their types plain.
func plainTuple(tuple *types.Tuple) *types.Tuple {
	vars := make([]*types.Var, tuple.Len())
	for i := range vars {
		vars[i] = types.NewParam(0, nil, "", plain(tuple.At(i).Type()))
	}
	return types.NewTuple(vars...)
}
