package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"testing"
)

// lib is the package counted; its names cover each case of the rule.
const lib = `package lib

import "context"

const Used, Unused = 1, 2

var ErrUnmatched = errUsed

var errUsed error

type Named struct{}

func (Named) Called()    {}
func (Named) NotCalled() {}
func (Named) String() string { return "" }

type Logger interface{ Log(context.Context) }

type Nop struct{}

func (Nop) Log(context.Context) {}

type Generic[T any] struct{}

func (Generic[T]) Get() {}

func Helper() {}

type Handle struct{}

func (Handle) Do() {}

func Open() Handle { return Handle{} }

type Kind int

const KindA Kind = 1
`

// user names some of lib's exports, as another package would.
const user = `package user

import "example.com/lib"

var _ = lib.Used

func f(n lib.Named, l lib.Logger, g lib.Generic[int]) {
	n.Called()
	g.Get()
	_ = l
	_ = lib.Nop{}
	lib.Open().Do()
	_ = lib.KindA
}
`

// checked serves packages already checked.
type checked map[string]*types.Package

func (m checked) Import(path string) (*types.Package, error) {
	if p, ok := m[path]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("no package %s", path)
}

func checkSource(t *testing.T, fset *token.FileSet, imp types.Importer, path, src string) (*types.Package, *types.Info) {
	t.Helper()
	f, err := parser.ParseFile(fset, path+".go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := newInfo()
	pkg, err := (&types.Config{Importer: imp}).Check(path, fset, []*ast.File{f}, info)
	if err != nil {
		t.Fatal(err)
	}
	return pkg, info
}

func TestReport(t *testing.T) {
	fset := token.NewFileSet()
	std := checked{}
	ctx, _ := checkSource(t, fset, std, "context", "package context\n\ntype Context interface{ Done() <-chan struct{} }\n")
	std["context"] = ctx
	own, _ := checkSource(t, fset, std, "example.com/lib", lib)
	_, info := checkSource(t, fset, checked{"example.com/lib": own}, "example.com/user", user)

	used := map[string]bool{}
	record(used, "example.com/lib", info)
	total, names, methods := report(own, used)

	if total != 12 {
		t.Errorf("total = %d, want 12 exported package-level names", total)
	}
	if wantNames := []string{"var ErrUnmatched", "func Helper", "const Unused"}; !slices.Equal(names, wantNames) {
		t.Errorf("names = %q, want %q", names, wantNames)
	}
	// Handle is used unnamed, through Open's result, and Kind through KindA; String is called through fmt.Stringer, Nop.Log through Logger, which user names.
	if want := []string{"method Named.NotCalled"}; !slices.Equal(methods, want) {
		t.Errorf("methods = %q, want %q", methods, want)
	}
}
