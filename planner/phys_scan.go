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
}

func (x *Scan) lower(b *physBuilder, _ []physNode) (physNode, error) {
	src, err := b.p.Connectors.Source(x.Table, b.p.Env)
	if err != nil {
		return nil, err
	}
	var wm *exec.WatermarkSpec
	if b.p.Catalog != nil {
		wm = b.p.Catalog.watermarkSpec(x.Table)
	}
	return newScanNode(x.Table, src, wm, b.parallelism), nil
}

func newScanNode(t *connector.Table, src connector.Source, wm *exec.WatermarkSpec, parallelism int) *scanNode {
	keys := tableKeys(t)
	return &scanNode{
		physBase: physBase{tr: traits{schema: t.Schema, mode: connector.SourceChangelogMode(src),
			uniqueKeys: keys, upsertKeys: keys, parallelism: parallelism}},
		table: t, source: src, watermark: wm,
	}
}

func (p *scanNode) desc() string {
	return "TableSourceScan(table=[" + p.table.Name + "], fields=[" + fields(p.table.Schema) + "])"
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
