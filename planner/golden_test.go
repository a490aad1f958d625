package planner

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/builtin"
	"github.com/weir-sql/weir/parser"
	"github.com/weir-sql/weir/types"
	"github.com/weir-sql/weir/udf"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/")

// Fake connectors: the planner only builds sources and sinks, it never runs them.
type fakeSource struct{}

func (fakeSource) Bounded() bool { return true }
func (fakeSource) Open(int, int) (connector.SourceReader, error) {
	return nil, errors.New("fake source")
}

type fakeSink struct {
	updates     bool
	parallelism int
}

func (s fakeSink) AcceptsUpdates() bool { return s.updates }
func (s fakeSink) Parallelism() int     { return s.parallelism }
func (fakeSink) Open(int, int) (connector.SinkWriter, error) {
	return nil, errors.New("fake sink")
}

func sinkFactory(updates bool) connector.SinkFactory {
	return func(t *connector.Table, _ connector.Env) (connector.Sink, error) {
		p := 0
		if v, ok := t.Options["sink.parallelism"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("option 'sink.parallelism': bad number '%s'", v)
			}
			p = n
		}
		return fakeSink{updates: updates, parallelism: p}, nil
	}
}

// testFunctions returns the Go functions CREATE FUNCTION binds in the
// goldens: count_char(VARCHAR, VARCHAR) -> BIGINT and half(DOUBLE) -> DOUBLE.
func testFunctions() *udf.Registry {
	r := udf.NewRegistry()
	r.MustRegister("count_char", "", udf.Func2(udf.CountChar))
	r.MustRegister("com.example.Half", "", udf.Func1(func(x float64) float64 { return x / 2 }))
	return r
}

// testRegistry returns the built-in connectors, so the goldens also check
// the real option validation.
func testRegistry() *connector.Registry { return builtin.Registry() }

// runScript runs the statements of a script the way the shell would and
// returns the EXPLAIN text of its INSERTs (planned as one job), or of
// EXPLAIN statements and queries, or the first error rendered with source.
func runScript(script string) (string, *Plan) {
	stmts, err := parser.Parse(script)
	if err != nil {
		return renderErr(err, script), nil
	}
	cat := NewCatalog()
	p := &Planner{Catalog: cat, Connectors: testRegistry(), Config: map[string]string{"parallelism.default": "4"}}
	var out strings.Builder
	var inserts []*parser.Insert
	for _, st := range stmts {
		var err error
		switch s := st.(type) {
		case *parser.CreateTable:
			err = cat.CreateTable(s)
		case *parser.CreateView:
			err = cat.CreateView(s)
		case *parser.DropTable:
			err = cat.Drop(s)
		case *parser.CreateFunction:
			f, ok := testFunctions().Lookup(s.Identifier)
			if !ok {
				err = parser.Errorf(s.IDPos, "no function is registered as '%s'", s.Identifier)
				break
			}
			err = cat.CreateFunction(s, f)
		case *parser.DropFunction:
			err = cat.DropFunction(s)
		case *parser.SetStmt:
			p.Config[s.Key] = s.Value
		case *parser.Insert:
			inserts = append(inserts, s)
		case *parser.ShowCreateTable:
			var text string
			text, err = cat.ShowCreate(s.Name)
			out.WriteString(text + "\n")
		case *parser.Describe:
			var rows []DescribeRow
			rows, err = cat.DescribeTable(s.Name)
			out.WriteString(strings.Join(DescribeHeader, " | ") + "\n")
			for _, r := range rows {
				fmt.Fprintf(&out, "%s | %s | %v | %s | %s | %s\n", r.Name, r.Type, r.Null, r.Key, r.Extras, r.Watermark)
			}
		case *parser.Explain:
			var text string
			text, err = p.Explain(s)
			out.WriteString(text)
		case *parser.QueryStmt:
			var plan *Plan
			plan, err = p.PlanQuery(s, func(types.Schema, bool) (connector.Sink, error) { return fakeSink{updates: true}, nil }, "query")
			if err == nil {
				fmt.Fprintf(&out, "result schema: %s updating=%v\n", plan.Schema, plan.Updating)
				out.WriteString(plan.Explain)
			}
		default:
			err = fmt.Errorf("unexpected statement %T", st)
		}
		if err != nil {
			return renderErr(err, script), nil
		}
	}
	if len(inserts) > 0 {
		plan, err := p.PlanInserts(inserts, "test")
		if err != nil {
			return renderErr(err, script), nil
		}
		out.WriteString(plan.Explain)
		return out.String(), plan
	}
	return out.String(), nil
}

func renderErr(err error, script string) string {
	var pe *parser.Error
	if errors.As(err, &pe) {
		return "error: " + pe.WithSource(script).Error() + "\n"
	}
	return "error: " + err.Error() + "\n"
}

type goldenCase struct {
	name, script, want string
}

// parseGolden reads cases: "=== name", the script, "----", the expected output.
func parseGolden(t *testing.T, text string) []goldenCase {
	var cases []goldenCase
	for _, chunk := range strings.Split(text, "=== ")[1:] {
		name, body, _ := strings.Cut(chunk, "\n")
		script, want, ok := strings.Cut(body, "----\n")
		if !ok {
			t.Fatalf("case %q: no ---- separator", name)
		}
		cases = append(cases, goldenCase{name: name, script: strings.TrimSpace(script), want: strings.TrimRight(want, "\n")})
	}
	return cases
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cases := parseGolden(t, string(data))
			var b strings.Builder
			for _, c := range cases {
				got, _ := runScript(c.script)
				got = strings.TrimRight(got, "\n")
				if !*rewrite && got != c.want {
					t.Errorf("case %q:\n--- got\n%s\n--- want\n%s", c.name, got, c.want)
				}
				fmt.Fprintf(&b, "=== %s\n%s\n----\n%s\n\n", c.name, c.script, got)
			}
			if *rewrite {
				if err := os.WriteFile(f, []byte(strings.TrimRight(b.String(), "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
