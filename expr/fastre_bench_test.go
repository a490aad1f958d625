package expr

import (
	"strconv"
	"testing"
)

// BenchmarkRegexpExtractURL matches Nexmark q21's pattern against URLs
// shaped like the generator's: half without the parameter (the hot
// channels), the rest with it at the end.
func BenchmarkRegexpExtractURL(b *testing.B) {
	re, err := newFastRegexp(`(&|^)channel_id=([^&]*)`)
	if err != nil {
		b.Fatal(err)
	}
	urls := make([]string, 64)
	for i := range urls {
		u := "https://www.nexmark.com/abcde/fg_hi/jklmn/item.htm?query=1"
		if i%2 == 1 {
			u += "&channel_id=" + strconv.Itoa(1234567*i)
		}
		urls[i] = u
	}
	if _, _, ok := re.Group(urls[1], 2); !ok {
		b.Fatal("no match")
	}
	b.ResetTimer()
	n := 0
	for i := range b.N {
		if _, _, ok := re.Group(urls[i%len(urls)], 2); ok {
			n++
		}
	}
	_ = n
}
