package planner

import (
	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/exec"
)

// scanNode reads a table: a source vertex of the job graph. Its mode is
// its source's (insert-only unless the source says otherwise, as
// 'debezium-json' does), its unique and upsert key the table's primary key.
type scanNode struct {
	physBase
	table     *connector.Table
	source    connector.Source
	watermark *exec.WatermarkSpec // the table's WATERMARK FOR, or nil
	// rowtime and watermarkText name the rowtime column and render the
	// watermark for EXPLAIN.
	rowtime, watermarkText string
	pushed                 string // what was pushed into the source (Scan.Pushed)
}

func (x *Scan) lower(b *physBuilder, _ []physNode) (physNode, error) {
	src := x.Source
	if src == nil {
		var err error
		if src, err = b.p.Connectors.Source(x.Table, b.p.Env); err != nil {
			return nil, err
		}
	}
	scan := newScanNode(x, src, b.parallelism)
	var out physNode = scan
	if x.Computed != nil {
		// Computed columns: a projection right above the scan, chained
		// into the source task.
		c := &Calc{Input: &Scan{Table: x.Table}, Exprs: x.Computed, Names: x.Columns.Names()}
		in := scan.traits()
		out = &calcNode{
			physBase: physBase{kids: []physNode{scan}, tr: traits{schema: x.Columns, mode: in.mode,
				uniqueKeys:  projectKeys(in.uniqueKeys, c.Exprs),
				upsertKeys:  projectKeys(in.upsertKeys, c.Exprs),
				parallelism: in.parallelism}},
			calc:     c,
			computed: true,
		}
	}
	// An upsert source (upsert-kafka) is normalized into a retract
	// changelog by its primary key, as Flink plans it.
	if needsNormalize(out.traits()) && len(x.Table.PrimaryKey) > 0 {
		s := out.traits().schema
		keys := make([]int, len(x.Table.PrimaryKey))
		for i, k := range x.Table.PrimaryKey {
			keys[i] = s.Index(x.Table.Schema.Columns[k].Name)
		}
		out = newNormalize(b, out, keys)
	}
	return out, nil
}

func newScanNode(x *Scan, src connector.Source, parallelism int) *scanNode {
	keys := tableKeys(x.Table)
	return &scanNode{
		physBase: physBase{tr: traits{schema: x.Table.Schema, mode: connector.SourceChangelogMode(src),
			uniqueKeys: keys, upsertKeys: keys, parallelism: parallelism}},
		table: x.Table, source: src, watermark: x.Watermark,
		rowtime: x.Rowtime, watermarkText: x.WatermarkText, pushed: x.Pushed,
	}
}

func (p *scanNode) desc() string {
	d := "TableSourceScan(table=[" + p.table.Name
	if p.pushed != "" {
		d += ", " + p.pushed
	}
	d += "], fields=[" + fields(p.table.Schema)
	if p.watermark != nil {
		d += "], rowtime=[" + p.rowtime + "], watermark=[" + p.watermarkText
	}
	return d + "])"
}

func (p *scanNode) canon() string { return "scan " + key(p.table.Name) + " " + p.table.Schema.String() }

func (p *scanNode) updateCause() string {
	return "the source '" + p.table.Name + "' (" + connectorText(p.table) + ")"
}

func (p *scanNode) addTo(b *graphBuilder, id string, _ [][]outlet) ([]outlet, error) {
	v := &exec.Vertex{
		ID:              b.sourceID(id),
		Parallelism:     p.tr.parallelism,
		Source:          p.source,
		SourceWidth:     p.table.Schema.Len(),
		SourceName:      p.table.Name,
		SourceConnector: p.table.Options["connector"],
		Watermark:       p.watermark,
	}
	b.g.Vertices = append(b.g.Vertices, v)
	return []outlet{{vertex: len(b.g.Vertices) - 1}}, nil
}
