package filesystem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-sql/weir/connector"
	"github.com/weir-sql/weir/connector/connectortest"
	"github.com/weir-sql/weir/types"
)

// TestRestoreFinishedStaysFinished restores positions taken after every
// subtask read all of its files (a finished source: a regular, semi or
// anti join downstream has dropped the other input's rows at its end,
// exec.InputEndOperator), after the folder changed. A file added (sorting
// after the others, before them, or in a subfolder) makes the restore
// fail, permanently, for at least one subtask, at the same parallelism
// (Seek) and at any other (SeekAll), and no subtask returns a row: the
// new file's rows would find the join's other side gone. Rows appended to
// a file read to its end are not read either: the restored source stays
// finished.
func TestRestoreFinishedStaysFinished(t *testing.T) {
	cols := []types.Column{{Name: "x", Type: types.Int}}
	ctx := context.Background()
	type restored struct {
		failed int // subtasks whose restore failed (ErrPermanent)
		rows   []string
	}
	// restoreAll restores positions (of a run at len(positions)) at
	// parallelism par, with Seek when it is the same, and reads on.
	restoreAll := func(t *testing.T, dir string, positions [][]byte, par int) restored {
		s, err := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
		if err != nil {
			t.Fatal(err)
		}
		var res restored
		for sub := range par {
			r, err := s.Open(sub, par)
			if err != nil {
				t.Fatal(err)
			}
			if par == len(positions) {
				err = r.Seek(positions[sub])
			} else {
				err = r.(connector.RescalableReader).SeekAll(positions)
			}
			if err != nil {
				if !errors.Is(err, connector.ErrPermanent) || !strings.Contains(err.Error(), "files were added") {
					t.Fatalf("subtask %d of %d: restore failed, but not permanently, or not saying that files were added: %v", sub, par, err)
				}
				res.failed++
				r.Close()
				continue
			}
			rows, err := connectortest.Drain(ctx, r, 1, 10, -1)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			res.rows = append(res.rows, rows...)
		}
		return res
	}
	for par := 1; par <= 3; par++ {
		for _, change := range []string{"c.csv", "0.csv", "sub/z.csv", "grow a.csv"} {
			t.Run(fmt.Sprintf("p%d %s", par, change), func(t *testing.T) {
				dir := t.TempDir()
				writeFile(t, dir, "a.csv", "1\n")
				writeFile(t, dir, "b.csv", "2\n")
				s, _ := openSource(t, cols, map[string]string{"format": "csv", "path": dir})
				var positions [][]byte
				for sub := range par {
					r, _ := s.Open(sub, par)
					if _, err := connectortest.Drain(ctx, r, 1, 10, -1); err != nil {
						t.Fatal(err)
					}
					p, _ := r.Position()
					positions = append(positions, p)
					r.Close()
				}
				if change == "grow a.csv" {
					f, err := os.OpenFile(filepath.Join(dir, "a.csv"), os.O_APPEND|os.O_WRONLY, 0)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := f.WriteString("3\n"); err != nil {
						t.Fatal(err)
					}
					if err := f.Close(); err != nil {
						t.Fatal(err)
					}
				} else {
					writeFile(t, dir, change, "3\n")
				}
				for to := 1; to <= 3; to++ {
					res := restoreAll(t, dir, positions, to)
					if len(res.rows) != 0 {
						t.Errorf("restored at parallelism %d: read %q after the end", to, res.rows)
					}
					if added := change != "grow a.csv"; added != (res.failed > 0) {
						t.Errorf("restored at parallelism %d: %d subtasks refused the restore, file added: %t", to, res.failed, added)
					}
				}
			})
		}
	}
}
