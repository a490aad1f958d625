// Package layers_test enforces DESIGN.md's one-way layers: each package may
// import only the module's packages below it.
package layers_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/weir-sql/weir/"

// allowed maps a package (path below the module) to the module packages it
// may import; a package not listed may import nothing of the module.
// Subpackages inherit their parent's rule unless listed themselves.
var allowed = map[string][]string{
	"types":                   {},
	"confval":                 {},
	"parser":                  {},
	"expr":                    {"types"},
	"aggfunc":                 {"types", "confval"},
	"udf":                     {"types", "expr"},
	"internal/cputime":        {},
	"internal/filelock":       {},
	"internal/minheap":        {},
	"internal/sysmem":         {},
	"internal/testseed":       {},
	"statestore":              {"types", "internal/cputime"},
	"state":                   {"types", "statestore", "internal/minheap"},
	"checkpoint":              {"types"},
	"connector":               {"types", "connector", "confval", "internal/filelock"},
	"exec":                    {"types", "aggfunc", "expr", "connector", "statestore", "state", "checkpoint", "exec", "internal/cputime", "internal/minheap", "internal/sysmem"},
	"planner":                 {"types", "parser", "aggfunc", "expr", "exec", "connector", "confval"},
	"session":                 {"types", "parser", "aggfunc", "expr", "exec", "connector", "planner", "checkpoint", "statestore", "confval", "internal/filelock", "udf"},
	"repl":                    {"types", "parser", "exec", "connector", "planner", "session"},
	"bench":                   {"types", "parser", "exec", "connector", "planner", "session", "checkpoint", "statestore", "bench", "internal/cputime", "udf"},
	"cmd/weir":                {"types", "parser", "exec", "connector", "planner", "session", "checkpoint", "repl", "bench", "udf"},
	"internal/layers":         {},
	"connector/connectortest": {"types", "connector"},
}

func rule(pkg string) ([]string, bool) {
	for p := pkg; p != "." && p != ""; p = filepath.Dir(p) {
		if r, ok := allowed[p]; ok {
			return r, true
		}
	}
	return nil, false
}

func permitted(imp string, rules []string) bool {
	for _, r := range rules {
		if imp == r || strings.HasPrefix(imp, r+"/") {
			return true
		}
	}
	return false
}

func TestLayers(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rules, ok := rule(filepath.ToSlash(rel))
		if !ok {
			t.Errorf("%s: package %s has no layer rule (add it to allowed)", path, rel)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, module) {
				continue
			}
			checked++
			if inner := strings.TrimPrefix(p, module); !permitted(inner, rules) {
				t.Errorf("%s imports %s: %s may not depend on it (DESIGN.md: dependencies point down)", path, p, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d imports checked: the walk missed the module", checked)
	}
}
