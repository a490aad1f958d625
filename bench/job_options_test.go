package bench

import (
	"io"
	"testing"
	"time"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/session"
)

// TestJobOptionsTakeScriptSettings checks that a benchmark script's SET of
// the watermark interval, the idle timeout, the state TTL and mini-batch
// reach the job as they do under weir run (the bench ignored all but
// mini-batch, so W10's watermark interval had no effect).
func TestJobOptionsTakeScriptSettings(t *testing.T) {
	s := session.New(connector.Env{Stdout: io.Discard, Stderr: io.Discard})
	if err := s.InitScript(`SET 'pipeline.auto-watermark-interval' = '20 ms';
SET 'table.exec.source.idle-timeout' = '3 s';
SET 'table.exec.state.ttl' = '1 h';
SET 'table.exec.mini-batch.enabled' = 'false';`); err != nil {
		t.Fatal(err)
	}
	o := jobOptions(s, nil)
	if o.AutoWatermarkInterval != 20*time.Millisecond || o.SourceIdleTimeout != 3*time.Second || o.StateTTL != time.Hour || o.MiniBatch {
		t.Fatalf("options %+v: want watermark interval 20ms, idle timeout 3s, TTL 1h, no mini-batch", o)
	}
	d := jobOptions(session.New(connector.Env{Stdout: io.Discard, Stderr: io.Discard}), nil)
	if d.AutoWatermarkInterval != 0 || d.StateTTL != 0 || !d.MiniBatch {
		t.Fatalf("defaults %+v: want the runtime's watermark interval, no TTL, mini-batch on", d)
	}
}
