// Command exports lists the exported identifiers of a package that no other
// package's non-test code uses: the ones that could be unexported.
//
//	go run ./internal/cmd/exports ./internal/client ./internal/workflow
//
// It counts the package-level types, functions, constants and variables. A
// name is used where another package names it; a type is used, too, where
// another package selects a field or a method of one of its values (a result
// it holds without naming the type), or uses a constant, a variable or a
// field of that type.
// Methods of exported types are listed apart: the standard library calls some
// through an interface without naming them (Error, Unwrap, Is, String...),
// and another package that implements an exported interface needs its
// methods, so those count as used. Struct fields are not counted. It
// type-checks from source against the export data of `go list -export`, with
// the standard library alone, and exits 1 when a package has any.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// listed is what `go list -json` says of a package.
type listed struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	Module     *struct{ Main bool }
}

// implicit are the methods the standard library calls through an interface
// it does not name to the caller: error, fmt, errors.Is/As/Unwrap, net.Error.
var implicit = []string{"Error", "String", "GoString", "Format", "Unwrap", "Is", "As", "Timeout", "Temporary", "MarshalJSON", "UnmarshalJSON"}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: exports PACKAGE...")
		os.Exit(2)
	}
	pkgs, err := list("-deps", "./...")
	if err != nil {
		fmt.Fprintln(os.Stderr, "exports:", err)
		os.Exit(2)
	}
	targets, err := list(os.Args[1:]...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exports:", err)
		os.Exit(2)
	}
	status := 0
	for _, t := range targets {
		total, names, methods, err := unused(t.ImportPath, pkgs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "exports:", err)
			os.Exit(2)
		}
		fmt.Printf("%s: %d of %d exported names, and %d methods, used by no other package's non-test code\n", t.ImportPath, len(names), total, len(methods))
		for _, n := range append(names, methods...) {
			fmt.Println("  " + n)
		}
		if len(names)+len(methods) > 0 {
			status = 1
		}
	}
	os.Exit(status)
}

// list runs `go list -export` with args: the packages, with the export data
// the type checker imports.
func list(args ...string) (map[string]*listed, error) {
	args = append([]string{"list", "-export", "-json=ImportPath,Dir,Export,GoFiles,Module"}, args...)
	cmd := exec.CommandContext(context.Background(), "go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	pkgs := map[string]*listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, err
		}
		pkgs[p.ImportPath] = &p
	}
}

// unused returns the target's exported names and methods that no other
// package of the main module names in its non-test files.
func unused(target string, pkgs map[string]*listed) (total int, names, methods []string, err error) {
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		p, ok := pkgs[path]
		if !ok || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
	own, _, err := check(fset, imp, pkgs[target])
	if err != nil {
		return 0, nil, nil, err
	}
	used := map[string]bool{}
	for _, p := range pkgs {
		if p.Module == nil || !p.Module.Main || p.ImportPath == target {
			continue
		}
		_, info, err := check(fset, imp, p)
		if err != nil {
			return 0, nil, nil, err
		}
		record(used, target, info)
	}
	total, names, methods = report(own, used)
	return total, names, methods, nil
}

// record marks in used what info's package uses of the target's exports:
// the names it names, and the types of the values it uses.
func record(used map[string]bool, target string, info *types.Info) {
	for _, obj := range info.Uses {
		if obj.Pkg() == nil || obj.Pkg().Path() != target || !obj.Exported() {
			continue
		}
		used[key(obj)] = true
		if _, ok := obj.(*types.Func); !ok {
			markType(used, target, obj.Type()) // a constant's, variable's or field's type
		}
	}
	for _, sel := range info.Selections {
		markType(used, target, sel.Recv())
	}
}

// markType marks t, or what it points to, used when the target declares it.
func markType(used map[string]bool, target string, t types.Type) {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == target && n.Obj().Exported() {
		used[n.Obj().Name()] = true
	}
}

// report counts own's exported package-level names and lists those, and
// the methods of its exported types, that used does not hold.
func report(own *types.Package, used map[string]bool) (total int, names, methods []string) {
	for _, name := range own.Scope().Names() {
		obj := own.Scope().Lookup(name)
		if !obj.Exported() {
			continue
		}
		total++
		if !used[name] {
			names = append(names, kind(obj)+" "+name)
		}
		methods = append(methods, unusedMethods(own, obj, used)...)
	}
	return total, names, methods
}

// unusedMethods returns the exported methods of an exported named type that
// no other package names and no interface calls implicitly.
func unusedMethods(own *types.Package, obj types.Object, used map[string]bool) []string {
	tn, ok := obj.(*types.TypeName)
	if !ok || tn.IsAlias() {
		return nil
	}
	named, ok := tn.Type().(*types.Named)
	if !ok {
		return nil
	}
	var out []string
	for m := range named.Methods() {
		k := obj.Name() + "." + m.Name()
		if !m.Exported() || used[k] || slices.Contains(implicit, m.Name()) || implements(own, named, m.Name()) {
			continue
		}
		if types.IsInterface(named) && used[obj.Name()] {
			continue // another package names the interface: its implementations need the method
		}
		out = append(out, "method "+k)
	}
	return out
}

// implements reports whether t, or a pointer to it, implements an interface
// of its own package that has the method: callers of the interface call it.
func implements(own *types.Package, t *types.Named, method string) bool {
	for _, name := range own.Scope().Names() {
		iface, ok := own.Scope().Lookup(name).Type().Underlying().(*types.Interface)
		if !ok || types.Identical(iface, t.Underlying()) {
			continue
		}
		if m, _, _ := types.LookupFieldOrMethod(iface, false, own, method); m == nil {
			continue
		}
		if types.Implements(t, iface) || types.Implements(types.NewPointer(t), iface) {
			return true
		}
	}
	return false
}

// key names an object as the target's scope does, and a method as Type.Method.
func key(obj types.Object) string {
	f, ok := obj.(*types.Func)
	if !ok {
		return obj.Name()
	}
	recv := f.Signature().Recv()
	if recv == nil {
		return obj.Name()
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Origin().Obj().Name() + "." + obj.Name()
	}
	return obj.Name()
}

func kind(obj types.Object) string {
	switch obj.(type) {
	case *types.TypeName:
		return "type"
	case *types.Func:
		return "func"
	case *types.Const:
		return "const"
	default:
		return "var"
	}
}

// check type-checks a package's non-test files.
func check(fset *token.FileSet, imp types.Importer, p *listed) (*types.Package, *types.Info, error) {
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
	}
	info := newInfo()
	pkg, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", p.ImportPath, err)
	}
	return pkg, info, nil
}

// newInfo asks the type checker for what record reads.
func newInfo() *types.Info {
	return &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
}
