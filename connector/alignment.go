package connector

import (
	"fmt"
	"strings"
	"time"

	"github.com/weir-sql/weir/confval"
)

// The WITH options of a source's watermark alignment (Flink's names). The
// common source runner implements them for every connector: Registry
// takes them out of the options a connector sees.
const (
	OptionAlignGroup          = "scan.watermark.alignment.group"
	OptionAlignMaxDrift       = "scan.watermark.alignment.max-drift"
	OptionAlignUpdateInterval = "scan.watermark.alignment.update-interval"
)

// DefaultAlignUpdateInterval is the default of
// 'scan.watermark.alignment.update-interval'.
const DefaultAlignUpdateInterval = time.Second

// Alignment is a table's watermark alignment: its sources pause while
// their watermark is more than MaxDrift ahead of the smallest of their
// Group (see exec.WatermarkAlignment).
type Alignment struct {
	Group          string
	MaxDrift       time.Duration
	UpdateInterval time.Duration
}

// isAlignOption reports whether key is a watermark alignment option.
func isAlignOption(key string) bool {
	return key == OptionAlignGroup || key == OptionAlignMaxDrift || key == OptionAlignUpdateInterval
}

// TableAlignment parses table t's watermark alignment options. It returns
// nil when t has none, and an error naming the option when one is
// malformed or given without 'scan.watermark.alignment.group'.
func TableAlignment(t *Table) (*Alignment, error) {
	group, hasGroup := t.Options[OptionAlignGroup]
	drift, hasDrift := t.Options[OptionAlignMaxDrift]
	upd, hasUpd := t.Options[OptionAlignUpdateInterval]
	if !hasGroup {
		for _, k := range []string{OptionAlignMaxDrift, OptionAlignUpdateInterval} {
			if _, ok := t.Options[k]; ok {
				return nil, fmt.Errorf("table %s: option '%s' needs '%s'", t.Name, k, OptionAlignGroup)
			}
		}
		return nil, nil
	}
	a := &Alignment{Group: strings.TrimSpace(group), UpdateInterval: DefaultAlignUpdateInterval}
	if a.Group == "" {
		return nil, fmt.Errorf("table %s: option '%s' must name a group", t.Name, OptionAlignGroup)
	}
	if !hasDrift {
		return nil, fmt.Errorf("table %s: option '%s' needs '%s' (a duration such as '5 s')", t.Name, OptionAlignGroup, OptionAlignMaxDrift)
	}
	d, err := confval.Duration(drift)
	if err != nil || d <= 0 {
		return nil, fmt.Errorf("table %s: option '%s': invalid value '%s': expected a positive duration such as '5 s' or '100ms'", t.Name, OptionAlignMaxDrift, drift)
	}
	a.MaxDrift = d
	if hasUpd {
		d, err := confval.Duration(upd)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("table %s: option '%s': invalid value '%s': expected a positive duration such as '1 s'", t.Name, OptionAlignUpdateInterval, upd)
		}
		a.UpdateInterval = d
	}
	return a, nil
}

// withoutAlignment returns t, or a copy of it without the watermark
// alignment options when it has any.
func withoutAlignment(t *Table) *Table {
	has := false
	for k := range t.Options {
		has = has || isAlignOption(k)
	}
	if !has {
		return t
	}
	c := *t
	c.Options = make(map[string]string, len(t.Options))
	for k, v := range t.Options {
		if !isAlignOption(k) {
			c.Options[k] = v
		}
	}
	return &c
}
