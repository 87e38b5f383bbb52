// Command pebble-colblk writes test vectors of Pebble's columnar blocks
// (sstable/colblk, Pebble v2.1.7): each block is encoded by Pebble's own
// builders and decoded again by Pebble's own decoders, and both the bytes and
// what Pebble read from them go to testdata/pebble-colblk/ for the Rust tests
// of src/pebble/colblk/.
//
//	cd oracle/pebble-colblk && go run . ../../testdata/pebble-colblk
//
// The output is deterministic: every random choice comes from fixed seeds.
//
// The vector files are line-oriented text, one block per record:
//
//	<kind> <name> [<key schema>]   kind: block, data, index, kv, keyspan
//	hex <block bytes>
//	... kind-specific lines (see each writer below) ...
//	end
//
// Byte strings are lower-case hex, "-" for an empty one.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/cockroachkvs"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/sstable/block"
	"github.com/cockroachdb/pebble/v2/sstable/colblk"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// h writes a byte string as hex, "-" when empty; one longer than 256 bytes
// (only the block bytes are written in full) as "~<length>.<CRC-32C in hex>".
func h(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	if len(b) > 256 {
		return fmt.Sprintf("~%d.%08x", len(b), crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	}
	return hex.EncodeToString(b)
}

// whole writes a block's bytes in hex.
func whole(b []byte) string {
	return hex.EncodeToString(b)
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}

func create(dir, name string) *os.File {
	f, err := os.Create(filepath.Join(dir, name))
	check(err)
	return f
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: pebble-colblk OUT_DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	check(os.MkdirAll(dir, 0o755))

	f := create(dir, "columns.txt")
	writeColumnBlocks(f)
	check(f.Close())

	f = create(dir, "data.txt")
	writeDataBlocks(f)
	check(f.Close())

	f = create(dir, "index.txt")
	writeIndexBlocks(f)
	check(f.Close())

	f = create(dir, "key_value.txt")
	writeKeyValueBlocks(f)
	check(f.Close())

	f = create(dir, "keyspan.txt")
	writeKeyspanBlocks(f, dir)
	check(f.Close())
}

// ---------------------------------------------------------------------------
// Blocks of plain columns, built with colblk.FinishBlock.
//
//	block <name>
//	hex <bytes>
//	header <version> <columns> <rows>
//	uint <col> <v0> <v1> ...          decimal
//	bytes <col> <b0> <b1> ...
//	bool <col> <bits>                 "0101...", "-" for no rows
//	prefix <col> <shared> <bundle count>
//	bundles <col> <p0> <p1> ...       bundle prefixes (without the shared one)
//	keys <col> <k0> <k1> ...          whole keys
//	end

func sharedLen(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func uintColumn(values []uint64) *colblk.UintBuilder {
	var b colblk.UintBuilder
	b.Init()
	for i, v := range values {
		b.Set(i, v)
	}
	return &b
}

func bytesColumn(values [][]byte) *colblk.RawBytesBuilder {
	var b colblk.RawBytesBuilder
	b.Init()
	for _, v := range values {
		b.Put(v)
	}
	return &b
}

// prefixColumn sorts keys (PrefixBytes needs them in order).
func prefixColumn(bundleSize int, keys [][]byte) *colblk.PrefixBytesBuilder {
	slices.SortFunc(keys, bytes.Compare)
	var b colblk.PrefixBytesBuilder
	b.Init(bundleSize)
	var prev []byte
	for i, k := range keys {
		shared := 0
		if i > 0 {
			shared = sharedLen(prev, k)
		}
		b.Put(k, shared)
		prev = k
	}
	return &b
}

func boolColumn(rows int, set func(int) bool) *colblk.BitmapBuilder {
	var b colblk.BitmapBuilder
	for i := 0; i < rows; i++ {
		if set(i) {
			b.Set(i)
		}
	}
	return &b
}

func emitColumnBlock(w io.Writer, name string, rows int, writers ...colblk.ColumnWriter) {
	data := colblk.FinishBlock(rows, writers)
	d := colblk.DecodeBlock(data, 0)
	fmt.Fprintf(w, "block %s\n", name)
	fmt.Fprintf(w, "hex %s\n", whole(data))
	fmt.Fprintf(w, "header %d %d %d\n", data[0], len(writers), d.Rows())
	for col := range writers {
		switch d.DataType(col) {
		case colblk.DataTypeUint:
			u := d.Uints(col)
			fmt.Fprintf(w, "uint %d", col)
			for r := 0; r < rows; r++ {
				fmt.Fprintf(w, " %d", u.At(r))
			}
			fmt.Fprintln(w)
		case colblk.DataTypeBytes:
			b := d.RawBytes(col)
			fmt.Fprintf(w, "bytes %d", col)
			for r := 0; r < rows; r++ {
				fmt.Fprintf(w, " %s", h(b.At(r)))
			}
			fmt.Fprintln(w)
		case colblk.DataTypeBool:
			b := d.Bitmap(col)
			var s strings.Builder
			for r := 0; r < rows; r++ {
				if b.At(r) {
					s.WriteByte('1')
				} else {
					s.WriteByte('0')
				}
			}
			if rows == 0 {
				s.WriteByte('-')
			}
			fmt.Fprintf(w, "bool %d %s\n", col, s.String())
		case colblk.DataTypePrefixBytes:
			if rows == 0 {
				// Pebble's decoder refuses an empty PrefixBytes column.
				fmt.Fprintf(w, "prefix %d - 0\nbundles %d\nkeys %d\n", col, col, col)
				continue
			}
			p := d.PrefixBytes(col)
			fmt.Fprintf(w, "prefix %d %s %d\n", col, h(p.SharedPrefix()), p.BundleCount())
			fmt.Fprintf(w, "bundles %d", col)
			for b := 0; b < p.BundleCount(); b++ {
				fmt.Fprintf(w, " %s", h(p.BundlePrefix(b)))
			}
			fmt.Fprintln(w)
			fmt.Fprintf(w, "keys %d", col)
			for r := 0; r < rows; r++ {
				fmt.Fprintf(w, " %s", h(p.At(r)))
			}
			fmt.Fprintln(w)
		default:
			panic("unknown data type")
		}
	}
	fmt.Fprintln(w, "end")
}

func seq(n int, f func(int) uint64) []uint64 {
	v := make([]uint64, n)
	for i := range v {
		v[i] = f(i)
	}
	return v
}

func randBytes(rng *rand.Rand, n int, alphabet string) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return b
}

// prefixKeys returns sorted keys that share prefixes at several depths, with
// duplicates (as a key with many versions gives in a data block).
func prefixKeys(rng *rand.Rand, n int) [][]byte {
	keys := make([][]byte, 0, n)
	for len(keys) < n {
		k := []byte("table/")
		k = append(k, randBytes(rng, 1+rng.IntN(2), "ab")...)
		k = append(k, '/')
		k = append(k, randBytes(rng, rng.IntN(6), "abcxyz")...)
		dups := 1 + rng.IntN(3)
		for j := 0; j < dups && len(keys) < n; j++ {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys
}

func writeColumnBlocks(w io.Writer) {
	const max64 = ^uint64(0)
	// Every uint encoding, after a bool column so that columns start at odd
	// offsets and the values need alignment padding.
	emitColumnBlock(w, "uint-encodings", 10,
		boolColumn(10, func(i int) bool { return i%3 == 0 }),
		uintColumn(seq(10, func(int) uint64 { return 0 })),
		uintColumn(seq(10, func(int) uint64 { return 7 })),
		uintColumn(seq(10, func(i int) uint64 { return uint64(i * 20) })),
		uintColumn(seq(10, func(i int) uint64 { return 1000 + uint64(i*20) })),
		uintColumn(seq(10, func(i int) uint64 { return uint64(i * 6000) })),
		uintColumn(seq(10, func(i int) uint64 { return 1_000_000 + uint64(i*6000) })),
		uintColumn(seq(10, func(i int) uint64 { return uint64(i) * 400_000_000 })),
		uintColumn(seq(10, func(i int) uint64 { return 1 << 40 * (1 + uint64(i)%2) })),
		uintColumn(seq(10, func(i int) uint64 { return 1<<40 + uint64(i)*400_000_000 })),
		uintColumn(seq(10, func(i int) uint64 { return max64 - uint64(i)*(1<<50) })),
		uintColumn(seq(10, func(i int) uint64 { return max64 - uint64(i) })),
	)
	// Fewer rows than UintEncodingRowThreshold: the delta base is not always
	// worth its 8 bytes.
	for _, rows := range []int{1, 2, 3, 7} {
		emitColumnBlock(w, fmt.Sprintf("uint-rows-%d", rows), rows,
			uintColumn(seq(rows, func(i int) uint64 { return 300 + uint64(i) })),
			boolColumn(rows, func(i int) bool { return i == rows-1 }),
			uintColumn(seq(rows, func(i int) uint64 { return 70_000 + uint64(i) })),
			uintColumn(seq(rows, func(i int) uint64 { return 1<<33 + uint64(i) })),
			uintColumn(seq(rows, func(i int) uint64 { return uint64(i) })),
		)
	}
	emitColumnBlock(w, "empty-columns", 0,
		uintColumn(nil), bytesColumn(nil), boolColumn(0, nil), prefixColumn(16, nil))

	emitColumnBlock(w, "bytes", 6,
		bytesColumn([][]byte{[]byte("apple"), nil, []byte("b"), bytes.Repeat([]byte("c"), 300), nil, []byte("done")}),
		bytesColumn([][]byte{nil, nil, nil, nil, nil, nil}),
		bytesColumn([][]byte{[]byte("x"), []byte("yy"), []byte("zzz"), []byte("0"), []byte("1"), []byte("2")}),
	)
	emitColumnBlock(w, "bytes-wide-offsets", 3,
		boolColumn(3, func(i int) bool { return i == 1 }),
		bytesColumn([][]byte{[]byte("first"), bytes.Repeat([]byte{0xab}, 65_600), []byte("last")}),
	)

	rng := rand.New(rand.NewPCG(1, 2))
	keys := prefixKeys(rng, 40)
	for _, bundle := range []int{1, 2, 4, 16, 64} {
		emitColumnBlock(w, fmt.Sprintf("prefix-bundle-%d", bundle), len(keys),
			prefixColumn(bundle, slices.Clone(keys)))
	}
	emitColumnBlock(w, "prefix-one-row", 1, prefixColumn(16, [][]byte{[]byte("only")}))
	emitColumnBlock(w, "prefix-duplicates", 20,
		prefixColumn(4, slices.Repeat([][]byte{[]byte("same")}, 20)))
	emitColumnBlock(w, "prefix-empty-keys", 3,
		prefixColumn(2, [][]byte{nil, nil, []byte("a")}))
	emitColumnBlock(w, "prefix-nothing-shared", 9,
		prefixColumn(4, [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d"), []byte("e"),
			[]byte("f"), []byte("g"), []byte("h"), []byte("i")}))
	long := make([][]byte, 30)
	for i := range long {
		long[i] = append(bytes.Repeat([]byte{'k'}, 5), randBytes(rng, 20+rng.IntN(30), "0123456789")...)
	}
	emitColumnBlock(w, "prefix-wide-offsets", len(long),
		prefixColumn(8, long),
		uintColumn(seq(len(long), func(i int) uint64 { return uint64(i) })))

	for _, rows := range []int{1, 63, 64, 65, 130, 4097} {
		emitColumnBlock(w, fmt.Sprintf("bool-rows-%d", rows), rows,
			boolColumn(rows, func(int) bool { return false }),
			boolColumn(rows, func(i int) bool { return i == rows-1 }),
			boolColumn(rows, func(i int) bool { return i%2 == 1 }),
			boolColumn(rows, func(i int) bool { return i%700 == 5 }),
			boolColumn(rows, func(int) bool { return true }),
		)
	}

	// Mixed random blocks.
	for n := 0; n < 12; n++ {
		rows := 1 + rng.IntN(300)
		cols := 1 + rng.IntN(6)
		var writers []colblk.ColumnWriter
		for c := 0; c < cols; c++ {
			switch rng.IntN(4) {
			case 0:
				span := []uint64{1, 300, 70_000, 1 << 34, ^uint64(0)}[rng.IntN(5)]
				base := []uint64{0, 5, 1 << 20, 1 << 40}[rng.IntN(4)]
				writers = append(writers, uintColumn(seq(rows, func(int) uint64 {
					if span == ^uint64(0) {
						return rng.Uint64()
					}
					return base + rng.Uint64N(span)
				})))
			case 1:
				vals := make([][]byte, rows)
				for i := range vals {
					vals[i] = randBytes(rng, rng.IntN(12), "abcdef")
				}
				writers = append(writers, bytesColumn(vals))
			case 2:
				density := rng.IntN(100)
				writers = append(writers, boolColumn(rows, func(int) bool { return rng.IntN(100) < density }))
			case 3:
				writers = append(writers, prefixColumn(1<<rng.IntN(6), prefixKeys(rng, rows)))
			}
		}
		emitColumnBlock(w, fmt.Sprintf("random-%d", n), rows, writers...)
	}
}

// ---------------------------------------------------------------------------
// Data blocks, built with colblk.DataBlockEncoder under a key schema.
//
//	data <name> <key schema name>
//	hex <bytes>
//	maxkeylen <n>
//	schemaheader <bytes>
//	row <user key> <prefix> <trailer> <value> <external 0|1> <obsolete 0|1> <prefix changed 0|1>
//	end
//
// The user key is the key Pebble's KeySeeker materializes, the prefix its
// Split by the comparer the block was written with (the filter's key).

type kv struct {
	key      []byte
	seq      uint64
	kind     pebble.InternalKeyKind
	value    []byte
	external int // 0 in place, 1 value block handle, 2 blob handle
	obsolete bool
}

var kinds = []pebble.InternalKeyKind{
	pebble.InternalKeyKindSet, pebble.InternalKeyKindDelete, pebble.InternalKeyKindMerge,
	pebble.InternalKeyKindSingleDelete, pebble.InternalKeyKindSetWithDelete,
	pebble.InternalKeyKindDeleteSized,
}

// orderKVs sorts by user key, then by sequence number descending, and marks
// the versions below the newest of a user key obsolete (as Pebble's writer
// does, a MERGE aside).
func orderKVs(cmp pebble.Compare, kvs []kv) {
	sort.SliceStable(kvs, func(i, j int) bool {
		if c := cmp(kvs[i].key, kvs[j].key); c != 0 {
			return c < 0
		}
		return kvs[i].seq > kvs[j].seq
	})
	for i := 1; i < len(kvs); i++ {
		if cmp(kvs[i].key, kvs[i-1].key) == 0 && kvs[i-1].kind != pebble.InternalKeyKindMerge {
			kvs[i].obsolete = true
		}
	}
}

func emitDataBlock(w io.Writer, name string, schema *colblk.KeySchema, comparer *pebble.Comparer, kvs []kv) {
	var enc colblk.DataBlockEncoder
	enc.Init(schema)
	for _, e := range kvs {
		ik := pebble.MakeInternalKey(e.key, pebble.SeqNum(e.seq), e.kind)
		kcmp := enc.KeyWriter.ComparePrev(ik.UserKey)
		vp := block.InPlaceValuePrefix(kcmp.PrefixEqual())
		switch e.external {
		case 1:
			vp = block.ValueBlockHandlePrefix(kcmp.PrefixEqual(), 3)
		case 2:
			vp = block.BlobValueHandlePrefix(kcmp.PrefixEqual(), 5)
		}
		enc.Add(ik, e.value, vp, kcmp, e.obsolete)
	}
	finished, _ := enc.Finish(enc.Rows(), enc.Size())
	data := slices.Clone(finished)

	// Decode with Pebble's decoder and key seeker. The clone of a Go slice is
	// 8-byte aligned, as the decoder requires.
	var dec colblk.DataBlockDecoder
	dec.Init(schema, data)
	var meta colblk.KeySeekerMetadata
	schema.InitKeySeekerMetadata(&meta, &dec)
	seeker := schema.KeySeeker(&meta)
	maxKeyLen := binary.LittleEndian.Uint32(data[schema.HeaderSize:])
	var keyIter colblk.PrefixBytesIter
	keyIter.Init(int(maxKeyLen), nil)
	bd := dec.BlockDecoder()
	nk := len(schema.ColumnTypes)
	trailers := bd.Uints(nk + 0)
	values := bd.RawBytes(nk + 2)
	external := bd.Bitmap(nk + 3)
	obsolete := bd.Bitmap(nk + 4)
	changed := dec.PrefixChanged()

	fmt.Fprintf(w, "data %s %s\n", name, schema.Name)
	fmt.Fprintf(w, "hex %s\n", whole(data))
	fmt.Fprintf(w, "maxkeylen %d\n", maxKeyLen)
	fmt.Fprintf(w, "schemaheader %s\n", h(dec.KeySchemaHeader()))
	b01 := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	for r := 0; r < bd.Rows(); r++ {
		key := seeker.MaterializeUserKey(&keyIter, r-1, r)
		prefix := key[:comparer.Split(key)]
		fmt.Fprintf(w, "row %s %s %d %s %d %d %d\n", h(key), h(prefix), trailers.At(r),
			h(values.At(r)), b01(external.At(r)), b01(obsolete.At(r)), b01(changed.At(r)))
	}
	fmt.Fprintln(w, "end")
}

func randomKVs(rng *rand.Rand, n int, key func() []byte) []kv {
	kvs := make([]kv, 0, n)
	seqs := rng.Perm(n * 4)
	for len(kvs) < n {
		k := key()
		versions := 1 + rng.IntN(3)
		for j := 0; j < versions && len(kvs) < n; j++ {
			e := kv{
				key:   k,
				seq:   uint64(seqs[len(kvs)]) + 1,
				kind:  kinds[rng.IntN(len(kinds))],
				value: randBytes(rng, rng.IntN(20), "vwxyz"),
			}
			if e.kind == pebble.InternalKeyKindSet && rng.IntN(4) == 0 {
				e.external = 1 + rng.IntN(2)
			}
			kvs = append(kvs, e)
		}
	}
	return kvs
}

// crdbKey is a CockroachDB engine key: an MVCC key (wall time, logical time,
// sometimes the old synthetic byte), a lock-table key (a 17-byte version), or
// a bare key.
func crdbKey(rng *rand.Rand, roachKeys [][]byte) []byte {
	roach := roachKeys[rng.IntN(len(roachKeys))]
	switch rng.IntN(8) {
	case 0:
		return cockroachkvs.EncodeKey(nil, roach, nil)
	case 1:
		version := randBytes(rng, 17, "\x00\x01\x02\xfe\xff")
		version[0] = 0x02
		return cockroachkvs.EncodeKey(nil, roach, version)
	case 2:
		version := make([]byte, 13)
		binary.BigEndian.PutUint64(version, 1_700_000_000_000_000_000+rng.Uint64N(1<<30))
		binary.BigEndian.PutUint32(version[8:], 1+rng.Uint32N(5))
		version[12] = 1 // the synthetic bit, dropped when the key is read back
		return cockroachkvs.EncodeKey(nil, roach, version)
	case 3, 4:
		return cockroachkvs.EncodeMVCCKey(nil, roach, 1_700_000_000_000_000_000+rng.Uint64N(1<<30), 1+rng.Uint32N(5))
	default:
		return cockroachkvs.EncodeMVCCKey(nil, roach, 1_700_000_000_000_000_000+rng.Uint64N(1<<30), 0)
	}
}

func roachKeys(rng *rand.Rand, n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		k := []byte{0xf2, 0x89} // a table and index prefix
		k = append(k, randBytes(rng, 1+rng.IntN(10), "\x00\x01abcdef\x12\x88")...)
		keys[i] = k
	}
	return keys
}

func writeDataBlocks(w io.Writer) {
	rng := rand.New(rand.NewPCG(3, 4))
	defaultSchema := colblk.DefaultKeySchema(pebble.DefaultComparer, 16)
	crdbDefault := colblk.DefaultKeySchema(&cockroachkvs.Comparer, 4)
	crdb := &cockroachkvs.KeySchema

	// A hand-made block: each kind, duplicates, both kinds of external value.
	simple := []kv{
		{key: []byte("apple"), seq: 9, kind: pebble.InternalKeyKindSet, value: []byte("red")},
		{key: []byte("apple"), seq: 4, kind: pebble.InternalKeyKindDelete},
		{key: []byte("apricot"), seq: 7, kind: pebble.InternalKeyKindSet, value: []byte("handle-bytes"), external: 1},
		{key: []byte("banana"), seq: 3, kind: pebble.InternalKeyKindMerge, value: []byte("m1")},
		{key: []byte("banana"), seq: 2, kind: pebble.InternalKeyKindMerge, value: []byte("m2")},
		{key: []byte("blueberry"), seq: 8, kind: pebble.InternalKeyKindSet, value: []byte("blob"), external: 2},
		{key: []byte("cherry"), seq: 1, kind: pebble.InternalKeyKindSingleDelete},
		{key: []byte("cherry\x00\xff"), seq: 6, kind: pebble.InternalKeyKindDeleteSized, value: []byte{0x05}},
	}
	orderKVs(pebble.DefaultComparer.Compare, simple)
	emitDataBlock(w, "default-simple", &defaultSchema, pebble.DefaultComparer, simple)

	one := []kv{{key: []byte("k"), seq: 1, kind: pebble.InternalKeyKindSet, value: []byte("v")}}
	emitDataBlock(w, "default-one-row", &defaultSchema, pebble.DefaultComparer, one)

	for n, rows := range []int{30, 300} {
		kvs := randomKVs(rng, rows, func() []byte {
			return append([]byte("user/"), randBytes(rng, 1+rng.IntN(8), "abcdefgh")...)
		})
		orderKVs(pebble.DefaultComparer.Compare, kvs)
		emitDataBlock(w, fmt.Sprintf("default-random-%d", n), &defaultSchema, pebble.DefaultComparer, kvs)
	}

	// DefaultKeySchema under CockroachDB's comparer: a suffix column that is
	// not empty.
	roach := roachKeys(rng, 12)
	kvs := randomKVs(rng, 60, func() []byte { return crdbKey(rng, roach) })
	orderKVs(cockroachkvs.Comparer.Compare, kvs)
	emitDataBlock(w, "default-crdb-comparer", &crdbDefault, &cockroachkvs.Comparer, kvs)

	// crdb1.
	crdbOne := []kv{{key: cockroachkvs.EncodeMVCCKey(nil, []byte("a"), 5, 0), seq: 1,
		kind: pebble.InternalKeyKindSet, value: []byte("v")}}
	emitDataBlock(w, "crdb-one-row", crdb, &cockroachkvs.Comparer, crdbOne)
	for n, rows := range []int{20, 80, 250} {
		roach := roachKeys(rng, 1+rows/4)
		kvs := randomKVs(rng, rows, func() []byte { return crdbKey(rng, roach) })
		orderKVs(cockroachkvs.Comparer.Compare, kvs)
		emitDataBlock(w, fmt.Sprintf("crdb-random-%d", n), crdb, &cockroachkvs.Comparer, kvs)
	}
	// Only MVCC keys, only bare keys, only lock-table keys.
	for n, pick := range []int{3, 0, 1} {
		roach := roachKeys(rng, 10)
		kvs := randomKVs(rng, 25, func() []byte {
			for {
				k := crdbKey(rng, roach)
				_, version, _ := cockroachkvs.DecodeEngineKey(k)
				switch {
				case pick == 3 && (len(version) == 8 || len(version) == 12),
					pick == 0 && len(version) == 0,
					pick == 1 && len(version) == 17:
					return k
				}
			}
		})
		orderKVs(cockroachkvs.Comparer.Compare, kvs)
		emitDataBlock(w, fmt.Sprintf("crdb-suffixes-%d", n), crdb, &cockroachkvs.Comparer, kvs)
	}
}

// ---------------------------------------------------------------------------
// Index blocks, built with colblk.IndexBlockWriter.
//
//	index <name>
//	hex <bytes>
//	row <separator> <offset> <length> <block properties>
//	end

func emitIndexBlock(w io.Writer, name string, entries []struct {
	sep    []byte
	handle block.Handle
	props  []byte
}) {
	var iw colblk.IndexBlockWriter
	iw.Init()
	for _, e := range entries {
		iw.AddBlockHandle(e.sep, e.handle, e.props)
	}
	data := slices.Clone(iw.Finish(iw.Rows()))

	var dec colblk.IndexBlockDecoder
	dec.Init(data)
	var it colblk.IndexIter
	it.InitWithDecoder(pebble.DefaultComparer, &dec, block.IterTransforms{})
	fmt.Fprintf(w, "index %s\n", name)
	fmt.Fprintf(w, "hex %s\n", whole(data))
	for ok := it.First(); ok; ok = it.Next() {
		bh, err := it.BlockHandleWithProperties()
		check(err)
		fmt.Fprintf(w, "row %s %d %d %s\n", h(it.Separator()), bh.Offset, bh.Length, h(bh.Props))
	}
	fmt.Fprintln(w, "end")
}

func writeIndexBlocks(w io.Writer) {
	rng := rand.New(rand.NewPCG(5, 6))
	type entry = struct {
		sep    []byte
		handle block.Handle
		props  []byte
	}
	emitIndexBlock(w, "empty", nil)
	for n, cfg := range []struct {
		rows  int
		start uint64
		size  uint64
		props bool
	}{
		{1, 0, 4000, false},
		{5, 0, 4000, true},
		{40, 0, 33_000, true},
		{200, 1 << 33, 70_000, false}, // past 4 GiB: 8-byte offsets
		{12, 0, 300, false},           // a top-level index: handles of index blocks
	} {
		var entries []entry
		off := cfg.start
		for i := 0; i < cfg.rows; i++ {
			size := 1 + rng.Uint64N(cfg.size)
			var props []byte
			if cfg.props {
				props = randBytes(rng, rng.IntN(10), "\x00\x01\x05\x80\xff")
			}
			entries = append(entries, entry{
				sep:    fmt.Appendf(nil, "sep/%05d%s", i*7, randBytes(rng, rng.IntN(4), "xyz")),
				handle: block.Handle{Offset: off, Length: size},
				props:  props,
			})
			off += size + block.TrailerLen
		}
		emitIndexBlock(w, fmt.Sprintf("index-%d", n), entries)
	}
}

// ---------------------------------------------------------------------------
// Key-value blocks (a Pebblev6+ metaindex, a Pebblev7 properties block).
//
//	kv <name>
//	hex <bytes>
//	row <key> <value>
//	end

func emitKeyValueBlock(w io.Writer, name string, keys []string, values [][]byte) {
	var kw colblk.KeyValueBlockWriter
	kw.Init()
	for i, k := range keys {
		kw.AddKV([]byte(k), values[i])
	}
	data := slices.Clone(kw.Finish(kw.Rows()))
	var dec colblk.KeyValueBlockDecoder
	dec.Init(data)
	fmt.Fprintf(w, "kv %s\n", name)
	fmt.Fprintf(w, "hex %s\n", whole(data))
	for k, v := range dec.All() {
		fmt.Fprintf(w, "row %s %s\n", h(k), h(v))
	}
	fmt.Fprintln(w, "end")
}

func writeKeyValueBlocks(w io.Writer) {
	handle := func(off, size uint64) []byte {
		buf := make([]byte, 20)
		n := block.Handle{Offset: off, Length: size}.EncodeVarints(buf)
		return buf[:n]
	}
	emitKeyValueBlock(w, "metaindex",
		[]string{"fullfilter.rocksdb.BuiltinBloomFilter", "pebble.range_key", "rocksdb.properties", "rocksdb.range_del2"},
		[][]byte{handle(4096, 1024), handle(9000, 70), handle(9075, 800), handle(5125, 3875)})
	rng := rand.New(rand.NewPCG(7, 8))
	var keys []string
	var values [][]byte
	for i := 0; i < 40; i++ {
		keys = append(keys, fmt.Sprintf("pebble.prop.%02d", i))
		values = append(values, randBytes(rng, rng.IntN(30), "0123456789abcdef\x00\xff"))
	}
	keys = append(keys, "rocksdb.comparator", "pebble.colblk.schema")
	values = append(values, []byte("leveldb.BytewiseComparator"), []byte("DefaultKeySchema(leveldb.BytewiseComparator,16)"))
	emitKeyValueBlock(w, "properties", keys, values)
	emitKeyValueBlock(w, "empty", nil, nil)
	emitKeyValueBlock(w, "empty-value", []string{"k"}, [][]byte{nil})
}

// ---------------------------------------------------------------------------
// Keyspan blocks (range deletions, range keys): taken from a Pebblev5 table
// written by sstable.Writer (which fragments the spans), and read back by
// sstable.ReadAll.
//
//	keyspan <name>
//	hex <bytes>
//	span <start> <end>
//	key <trailer> <suffix> <value>
//	end

func writeKeyspanBlocks(w io.Writer, dir string) {
	path := filepath.Join(dir, "keyspans.sst")
	f, err := vfs.Default.Create(path, vfs.WriteCategoryUnspecified)
	check(err)
	tw := sstable.NewWriter(objstorageprovider.NewFileWritable(f), sstable.WriterOptions{
		TableFormat: sstable.TableFormatPebblev5,
		Compression: sstable.NoCompression,
	})
	check(tw.Set([]byte("a"), []byte("point")))
	for _, r := range [][2]string{{"b", "c"}, {"c", "e"}, {"e", "k"}, {"m", "n"}, {"p", "zz"}} {
		check(tw.DeleteRange([]byte(r[0]), []byte(r[1])))
	}
	check(tw.RangeKeySet([]byte("b"), []byte("g"), []byte("@5"), []byte("v5")))
	check(tw.RangeKeySet([]byte("b"), []byte("g"), []byte("@3"), []byte("v3")))
	check(tw.RangeKeyUnset([]byte("c"), []byte("d"), []byte("@4")))
	check(tw.RangeKeyDelete([]byte("x"), []byte("y")))
	check(tw.Close())

	rf, err := vfs.Default.Open(path)
	check(err)
	readable, err := sstable.NewSimpleReadable(rf)
	check(err)
	r, err := sstable.NewReader(context.Background(), readable, sstable.ReaderOptions{})
	check(err)
	layout, err := r.Layout()
	check(err)
	check(r.Close())
	file, err := os.ReadFile(path)
	check(err)
	rf, err = vfs.Default.Open(path)
	check(err)
	readable, err = sstable.NewSimpleReadable(rf)
	check(err)
	_, rangeDels, rangeKeys, err := sstable.ReadAll(readable, sstable.ReaderOptions{}, nil)
	check(err)
	check(os.Remove(path))

	emit := func(name string, bh block.Handle, spans []spanView) {
		fmt.Fprintf(w, "keyspan %s\n", name)
		fmt.Fprintf(w, "hex %s\n", whole(file[bh.Offset:bh.Offset+bh.Length]))
		for _, s := range spans {
			fmt.Fprintf(w, "span %s %s\n", h(s.start), h(s.end))
			for _, k := range s.keys {
				fmt.Fprintf(w, "key %d %s %s\n", k.trailer, h(k.suffix), h(k.value))
			}
		}
		fmt.Fprintln(w, "end")
	}
	var dels, keys []spanView
	for _, s := range rangeDels {
		v := spanView{start: s.Start, end: s.End}
		for _, k := range s.Keys {
			v.keys = append(v.keys, keyView{uint64(k.Trailer), k.Suffix, k.Value})
		}
		dels = append(dels, v)
	}
	for _, s := range rangeKeys {
		v := spanView{start: s.Start, end: s.End}
		for _, k := range s.Keys {
			v.keys = append(v.keys, keyView{uint64(k.Trailer), k.Suffix, k.Value})
		}
		keys = append(keys, v)
	}
	emit("range-deletions", layout.RangeDel, dels)
	emit("range-keys", layout.RangeKey, keys)
}

type keyView struct {
	trailer       uint64
	suffix, value []byte
}

type spanView struct {
	start, end []byte
	keys       []keyView
}
