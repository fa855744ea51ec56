package workflow

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Which backup counts reads no clock: the service's clock (the Date of an
// answer, client.AnswerTime, which a page carries as At) is read only where
// the user asked for a duration: a backup's age for reuse_within (reusable,
// ageOf), the grace before a resend (graceOver), and the trigger's start that
// this grace is measured from (trigger), and a stopped destroy's
// resume_within (answeredAt, afterStoppedDestroy, standsAt, Destroy). The client
// keeps no clock offset to read. (identify, above, pageMark and unexplained
// read none.) An answer's receipt on this machine's clock (At.Received) is
// no reading of the service's: an empty read's duration since (ranSince);
// nor is how long a cache held it (At.Stored, its Age): a read before a
// trigger from a cache's store is refused (look).
func TestOnlyDurationsReadTheServiceClock(t *testing.T) {
	t.Parallel()
	allowed := []string{"reusable", "ageOf", "graceOver", "trigger", "answeredAt", "afterStoppedDestroy", "standsAt", "Destroy"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			received := map[ast.Expr]bool{} // X.At of X.At.Received (this machine's clock) or X.At.Stored (a cache's Age)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				switch sel.Sel.Name {
				case "Received", "Stored":
					received[sel.X] = true
				case "At", "AnswerTime", "ClockOffset":
					if !received[sel] && !slices.Contains(allowed, fn.Name.Name) {
						t.Errorf("%s: %s reads %s: only %v may read the service's clock", fset.Position(sel.Pos()), fn.Name.Name, sel.Sel.Name, allowed)
					}
				}
				return true
			})
		}
	}
}
