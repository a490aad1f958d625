package sysmem

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTotalIn(t *testing.T) {
	const meminfo = "MemTotal:       24576000 kB\nMemFree:         1000 kB\n"
	cases := []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"nothing", nil, 0},
		{"meminfo", map[string]string{"proc/meminfo": meminfo}, 24576000 << 10},
		{"cgroup v2 below", map[string]string{"proc/meminfo": meminfo, "sys/fs/cgroup/memory.max": "4294967296\n"}, 4 << 30},
		{"cgroup v2 max", map[string]string{"proc/meminfo": meminfo, "sys/fs/cgroup/memory.max": "max\n"}, 24576000 << 10},
		{"cgroup v2 above", map[string]string{"proc/meminfo": meminfo, "sys/fs/cgroup/memory.max": "107374182400\n"}, 24576000 << 10},
		{"cgroup v1 unlimited", map[string]string{"proc/meminfo": meminfo, "sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 24576000 << 10},
		{"cgroup v1 below", map[string]string{"proc/meminfo": meminfo, "sys/fs/cgroup/memory/memory.limit_in_bytes": "2147483648"}, 2 << 30},
		{"cgroup only", map[string]string{"sys/fs/cgroup/memory.max": "1073741824"}, 1 << 30},
		{"bad meminfo", map[string]string{"proc/meminfo": "MemTotal: lots\n"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for name, text := range c.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := totalIn(root); got != c.want {
				t.Errorf("totalIn = %d, want %d", got, c.want)
			}
		})
	}
}

// TestTotalHere checks that this machine's memory is found: the tests run
// on Linux, where /proc/meminfo exists.
func TestTotalHere(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo")
	}
	if got := Total(); got < 64<<20 {
		t.Errorf("Total() = %d, want at least 64 MiB", got)
	}
}
