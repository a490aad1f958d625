package parser

import (
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics and that whatever it accepts
// survives Format and a second Parse unchanged. It is seeded with the
// inputs of the golden files.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range files {
		_, cases := readGolden(f, path)
		for _, c := range cases {
			f.Add(c.input)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkRoundTrip(t, src, false)
		checkRoundTrip(t, src, true)
		SplitStatements(src)
	})
}
