//go:build cgo

package main

import (
	"fmt"
	"os"
)

// With cgo, Pebble v1.1.5 compresses zstd blocks with github.com/DataDog/zstd,
// which this module gets at v1.5.7 (v2.1.7 requires it; v1.1.5 asks for
// v1.4.5). v1.5.7's Decompress sizes its output from the frame header, and
// v1.1.5's streaming encoder leaves the content size out of it, so v1.1.5
// then fails to read its own zstd blocks ("decompressed into unexpected
// buffer"). Built with CGO_ENABLED=0 both versions use
// github.com/klauspost/compress/zstd instead.
func init() {
	fmt.Fprintln(os.Stderr, "pebble-oracle: build with CGO_ENABLED=0 (see cgo_refuse.go)")
	os.Exit(2)
}
