package statestore

import "testing"

// TestDefaultBlockCache: Pebble's block cache is 64 MiB unless set, large
// enough for the filter and index blocks of a subtask's state at 10M
// Nexmark events (8 MiB made every lookup of a new key read them again).
func TestDefaultBlockCache(t *testing.T) {
	po := Options{}.withDefaults().pebbleOptions(newStoreLogger(t.TempDir()))
	if po.CacheSize != 64<<20 {
		t.Errorf("block cache %d bytes, want %d", po.CacheSize, 64<<20)
	}
	po = Options{BlockCacheBytes: 1 << 20}.withDefaults().pebbleOptions(newStoreLogger(t.TempDir()))
	if po.CacheSize != 1<<20 {
		t.Errorf("block cache %d bytes when set to 1 MiB", po.CacheSize)
	}
}
