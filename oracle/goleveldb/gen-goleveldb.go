// Writes tables with goleveldb (Debian's golang-github-syndtr-goleveldb-dev):
// one through its table writer (user keys) and a database's compacted .ldb
// (internal keys), and the keys it wrote (goleveldb-*.keys). goleveldb names its filter "leveldb.BuiltinBloomFilter" and
// hashes unsigned bytes. Keys: a deterministic LCG, bytes >= 0x80 included.
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run gen-goleveldb.go OUT_DIR
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/table"
	"github.com/syndtr/goleveldb/leveldb/util"
)

var state uint64 = 0x5eed

func next() uint64 {
	state = state*6364136223846793005 + 1442695040888963407
	return state >> 33
}

func keys(n int) [][]byte {
	seen := map[string]bool{}
	var out [][]byte
	for len(out) < n {
		k := make([]byte, 1+next()%24)
		for i := range k {
			k[i] = byte(next())
		}
		if !seen[string(k)] {
			seen[string(k)] = true
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i], out[j]) < 0 })
	return out
}

func value() []byte {
	v := make([]byte, next()%40)
	for i := range v {
		v[i] = "goleveldb"[i%9]
	}
	return v
}

// writeKeys lists keys in hex, one per line, for the probes.
func writeKeys(path string, keys [][]byte) {
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "%x\n", k)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen-goleveldb:", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen-goleveldb OUT_DIR")
		os.Exit(2)
	}
	out := os.Args[1]
	if err := os.MkdirAll(out, 0o755); err != nil {
		fail(err)
	}

	f, err := os.Create(filepath.Join(out, "goleveldb-table.ldb"))
	if err != nil {
		fail(err)
	}
	w := table.NewWriter(f, &opt.Options{Filter: filter.NewBloomFilter(10), BlockSize: 2048, Compression: opt.SnappyCompression})
	tableKeys := keys(1200)
	writeKeys(filepath.Join(out, "goleveldb-table.keys"), tableKeys)
	for _, k := range tableKeys {
		if err := w.Append(k, value()); err != nil {
			fail(err)
		}
	}
	if err := w.Close(); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}

	dir, err := os.MkdirTemp("", "gen-goleveldb")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	db, err := leveldb.OpenFile(dir, &opt.Options{Filter: filter.NewBloomFilter(10), Compression: opt.NoCompression})
	if err != nil {
		fail(err)
	}
	dbKeys := keys(2000)
	writeKeys(filepath.Join(out, "goleveldb-db.keys"), dbKeys)
	for i, k := range dbKeys {
		if err := db.Put(k, value(), nil); err != nil {
			fail(err)
		}
		if i%9 == 0 {
			if err := db.Delete(k, nil); err != nil {
				fail(err)
			}
		}
	}
	if err := db.CompactRange(util.Range{}); err != nil {
		fail(err)
	}
	if err := db.Close(); err != nil {
		fail(err)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.ldb"))
	sort.Strings(tables)
	for i, t := range tables {
		data, err := os.ReadFile(t)
		if err != nil {
			fail(err)
		}
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("goleveldb-db-%d.ldb", i)), data, 0o644); err != nil {
			fail(err)
		}
	}
}
