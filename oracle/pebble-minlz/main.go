// Command pebble-minlz writes test vectors of MinLZ blocks as Pebble v2.1.7
// stores them (compression type 8): inputs compressed by MinLZ itself
// (github.com/minio/minlz at the version Pebble v2.1.7 requires) at each of
// its levels and by Pebble's own block compressor, blocks made op by op for
// every form the block format has, Snappy blocks (which Pebble's MinLZ
// decoder falls back to), and damaged copies of the small ones; each is
// decoded by Pebble's own path (block.DecompressedLen, then
// block.DecompressInto), which must agree with minlz.Decode.
//
//	cd oracle/pebble-minlz && go run . ../../testdata/pebble-minlz
//
// The output is deterministic: every random choice comes from -seed (1).
//
// vectors.txt holds one block a line:
//
//	<name> <block> ok <length> <SHA-256 of the output> [<output in hex>]
//	<name> <block> error
//
// <block> is the block in hex ("-" when empty), or "@<offset>+<length>" for
// one of more than 2 KiB, whose bytes are in blocks.bin. The output is
// written in hex too where it is at most 64 bytes. A block made again under
// another name (MinLZ's levels, and Pebble's compressor, often make the
// same bytes) is written once, and then as
//
//	<name> =<name of the first>
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2/sstable/block"
	"github.com/cockroachdb/pebble/v2/sstable/block/blockkind"
	"github.com/klauspost/compress/s2"
	"github.com/minio/minlz"
)

// inline is the longest block written in vectors.txt itself.
const inline = 2048

type writer struct {
	lines strings.Builder
	bin   bytes.Buffer
	names map[string]bool
	seen  map[string]string
	count int
}

// pebbleDecode decodes a type-8 block as Pebble's block reader does, and
// checks that minlz.Decode agrees.
func pebbleDecode(b []byte) ([]byte, error) {
	n, err := block.DecompressedLen(block.MinLZCompressionIndicator, b)
	var out []byte
	if err == nil {
		out = make([]byte, n)
		err = block.DecompressInto(block.MinLZCompressionIndicator, b, out)
	}
	direct, derr := minlz.Decode(nil, b)
	if (err == nil) != (derr == nil) || (err == nil && !bytes.Equal(out, direct)) {
		panic(fmt.Sprintf("Pebble's path and minlz.Decode disagree on %x: %v, %v", b, err, derr))
	}
	return out, err
}

// add writes a block and what Pebble decodes it to; a block already
// written under another name is written as that name.
func (w *writer) add(name string, b []byte) (ok bool) {
	if w.names[name] {
		panic("two vectors named " + name)
	}
	w.names[name] = true
	if first, dup := w.seen[string(b)]; dup {
		fmt.Fprintf(&w.lines, "%s =%s\n", name, first)
		w.count++
		_, err := pebbleDecode(b)
		return err == nil
	}
	w.seen[string(b)] = name
	out, err := pebbleDecode(b)
	field := "-"
	switch {
	case len(b) > inline:
		field = fmt.Sprintf("@%d+%d", w.bin.Len(), len(b))
		w.bin.Write(b)
	case len(b) > 0:
		field = hex.EncodeToString(b)
	}
	if err != nil {
		fmt.Fprintf(&w.lines, "%s %s error\n", name, field)
	} else {
		sum := sha256.Sum256(out)
		fmt.Fprintf(&w.lines, "%s %s ok %d %x", name, field, len(out), sum)
		if len(out) <= 64 {
			fmt.Fprintf(&w.lines, " %s", hexOrDash(out))
		}
		w.lines.WriteString("\n")
	}
	w.count++
	return err == nil
}

func hexOrDash(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	return hex.EncodeToString(b)
}

// mustAdd adds a block that must decode to want.
func (w *writer) mustAdd(name string, b, want []byte) {
	out, err := pebbleDecode(b)
	if err != nil || !bytes.Equal(out, want) {
		panic(fmt.Sprintf("%s does not decode to its input: %v", name, err))
	}
	w.add(name, b)
}

// mustFail adds a block that must not decode.
func (w *writer) mustFail(name string, b []byte) {
	if _, err := pebbleDecode(b); err == nil {
		panic(name + " decodes")
	}
	w.add(name, b)
}

// Inputs.

var words = strings.Fields(`the of and to in is that it for as with was on be by at this
	from or an are not have which but had his they you were their one all we can her has
	there been if more when will would who so no block table key value level filter pebble
	compaction sstable index bloom snappy minlz offset length literal copy repeat`)

func text(r *rand.Rand, n int) []byte {
	var b []byte
	for len(b) < n {
		b = append(b, words[r.IntN(len(words))]...)
		if r.IntN(12) == 0 {
			b = append(b, '.', '\n')
		} else {
			b = append(b, ' ')
		}
	}
	return b[:n]
}

func random(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// kvBlock is data shaped like a table's: sorted keys sharing prefixes,
// each followed by a small value.
func kvBlock(r *rand.Rand, n int) []byte {
	var b []byte
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, "user/%08d/column-%02d", 1000+i*3, r.IntN(8))
		b = binary.LittleEndian.AppendUint64(b, uint64(1<<20-i)<<8|1)
		b = append(b, random(r, 4+r.IntN(12))...)
	}
	return b[:n]
}

// matches is made of copies at chosen distances (and a few literals), so
// that every offset form is needed: up to 1 KiB (copy1), up to 64 KiB
// (copy2), and past (copy3, up to 2 MiB).
func matches(r *rand.Rand, n int, far int) []byte {
	b := random(r, 64)
	for len(b) < n {
		switch {
		case r.IntN(6) == 0:
			b = append(b, random(r, 1+r.IntN(12))...)
		default:
			var dist int
			switch r.IntN(4) {
			case 0:
				dist = 1 + r.IntN(16)
			case 1:
				dist = 1 + r.IntN(1024)
			case 2:
				dist = 64 + r.IntN(65536)
			default:
				dist = 65536 + r.IntN(far)
			}
			if dist > len(b) {
				dist = len(b)
			}
			length := 4 + r.IntN(40)
			if r.IntN(20) == 0 {
				length = 64 + r.IntN(3000)
			}
			from := len(b) - dist
			for i := 0; i < length; i++ {
				b = append(b, b[from+i])
			}
		}
	}
	return b[:n]
}

func runs(r *rand.Rand, n int) []byte {
	var b []byte
	for len(b) < n {
		c := byte(r.Uint32())
		k := 1 + r.IntN(300)
		for i := 0; i < k; i++ {
			b = append(b, c)
		}
	}
	return b[:n]
}

type input struct {
	name string
	data []byte
}

func inputs(r *rand.Rand) []input {
	in := []input{
		{"empty", nil},
		{"byte", []byte{'x'}},
		{"short-15", []byte("fifteen bytes!!")},
		{"short-16", []byte("sixteen bytes!!!")},
		{"zeros-100", make([]byte, 100)},
		{"zeros-64k", make([]byte, 64<<10)},
		{"pattern2-70k", bytes.Repeat([]byte("ab"), 35<<10)},
		{"runs-20k", runs(r, 20<<10)},
		{"text-1k", text(r, 1<<10)},
		{"text-4k", text(r, 4<<10)},
		{"text-64k", text(r, 64<<10)},
		{"text-100k", text(r, 100<<10)},
		{"random-1k", random(r, 1<<10)},
		{"random-20k", random(r, 20<<10)},
		{"random-70k", random(r, 70<<10)},
		{"kv-4k", kvBlock(r, 4<<10)},
		{"kv-32k", kvBlock(r, 32<<10)},
		{"matches-near-8k", matches(r, 8<<10, 1)},
		{"matches-64k", matches(r, 64<<10, 1<<16)},
		{"matches-1m", matches(r, 1<<20, 1<<20-65536)},
	}
	// Random bytes then zeros: a literal run longer than 65,565 bytes (3
	// length bytes) inside a compressed block.
	in = append(in, input{"random-then-zeros", append(random(r, 66<<10), make([]byte, 64<<10)...)})
	// MinLZ's largest block, exactly 8 MiB: a short pattern repeated.
	in = append(in, input{"pattern-8m", bytes.Repeat([]byte("minlz-8MiB "), (8<<20)/11+1)[:8<<20]})
	return in
}

// Blocks made op by op, per the specification's tables.

// ops builds a block's ops and, beside them, the output they mean.
type ops struct {
	body []byte
	want []byte
	last int // the last copy's offset, a repeat's
	bad  bool
}

func newOps() *ops { return &ops{last: 1} }

// block is the indicator 0, the length of the output meant, and the ops.
func (o *ops) block() []byte { return o.stating(len(o.want)) }

// stating is the block with another length stated.
func (o *ops) stating(n int) []byte {
	return append(binary.AppendUvarint([]byte{0}, uint64(n)), o.body...)
}

func (o *ops) le(x, n int) {
	for i := 0; i < n; i++ {
		o.body = append(o.body, byte(x>>(8*i)))
	}
}

// copied adds n bytes copied from offset back to the output meant.
func (o *ops) copied(offset, n int) {
	o.last = offset
	if offset > len(o.want) {
		o.bad = true
		return
	}
	for i := 0; i < n; i++ {
		o.want = append(o.want, o.want[len(o.want)-offset])
	}
}

// litOrRepeat writes a literal run (or a repeat of n bytes) with the
// shortest length form, or the form force (29, 30, 31) names.
func (o *ops) litOrRepeat(repeat bool, n int, lits []byte, force int) {
	flag := 0
	if repeat {
		flag = 4
	}
	v := force
	if v == 0 {
		switch {
		case n <= 29:
			v = n - 1
		case n-30 < 1<<8:
			v = 29
		case n-30 < 1<<16:
			v = 30
		default:
			v = 31
		}
	}
	o.body = append(o.body, byte(v<<3|flag))
	if v >= 29 {
		o.le(n-30, v-28)
	}
	o.body = append(o.body, lits...)
	if repeat {
		o.copied(o.last, n)
	} else {
		o.want = append(o.want, lits...)
	}
}

func (o *ops) lit(lits []byte) { o.litOrRepeat(false, len(lits), lits, 0) }
func (o *ops) repeat(n int)    { o.litOrRepeat(true, n, nil, 0) }

// copy1 writes a copy1, its length extended where ext (or past 18).
func (o *ops) copy1(offset, n int, ext bool) {
	code := n - 4
	if ext || n > 18 {
		code = 15
	}
	o.body = append(o.body, byte(code<<2|1|(offset-1)&3<<6), byte((offset-1)>>2))
	if code == 15 {
		o.body = append(o.body, byte(n-18))
	}
	o.copied(offset, n)
}

// longCode gives a copy2's or copy3's length code and its extra bytes.
func longCode(n int) (code, extra int) {
	switch {
	case n <= 64:
		return n - 4, 0
	case n-64 < 1<<8:
		return 61, 1
	case n-64 < 1<<16:
		return 62, 2
	default:
		return 63, 3
	}
}

func (o *ops) copy2(offset, n int) {
	code, extra := longCode(n)
	o.body = append(o.body, byte(code<<2|2))
	o.le(offset-64, 2)
	o.le(n-64, extra)
	o.copied(offset, n)
}

func (o *ops) copy3(offset, n int, lits []byte) {
	code, extra := longCode(n)
	o.body = binary.LittleEndian.AppendUint32(o.body, uint32(3|4|len(lits)<<3|code<<5|(offset-65536)<<11))
	o.le(n-64, extra)
	o.body = append(o.body, lits...)
	o.want = append(o.want, lits...)
	o.copied(offset, n)
}

func (o *ops) fused2(offset, n int, lits []byte) {
	o.body = append(o.body, byte(3|(len(lits)-1)<<3|(n-4)<<5))
	o.le(offset-64, 2)
	o.body = append(o.body, lits...)
	o.want = append(o.want, lits...)
	o.copied(offset, n)
}

// prefix makes n bytes of output from few ops: 257 random bytes (a prime
// period, so that a copy from a wrong offset gives other bytes), repeated.
func (o *ops) prefix(n int) {
	period := random(rand.New(rand.NewPCG(7, 7)), 257)
	if n <= len(period) {
		o.lit(period[:n])
		return
	}
	o.lit(period)
	o.copy2(len(period), n-len(period))
}

// made adds a block that must decode to what its ops mean.
func (w *writer) made(name string, o *ops) {
	if o.bad {
		panic(name + " copies from before its start")
	}
	w.mustAdd(name, o.block(), o.want)
}

func crafted(w *writer) {
	alpha := []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/")
	w.mustAdd("op-empty", []byte{0}, nil)
	w.mustAdd("op-stored", []byte{0, 0, 'a', 'b', 'c'}, []byte("abc"))
	w.mustFail("op-stored-nothing", []byte{0, 0})
	w.mustFail("op-length-nothing", []byte{0, 5})
	w.mustFail("op-no-bytes", nil)
	// A literal run of 1, 29 (the longest short form), and each extended
	// form at its ends, and 30 in every form that can state it; each
	// followed by a repeat, as a block's ops must be fewer bytes than its
	// output.
	for _, n := range []int{1, 29, 30, 285, 286, 1000} {
		o := newOps()
		o.lit(bytes.Repeat(alpha, n/64+1)[:n])
		o.repeat(8)
		w.made(fmt.Sprintf("op-literal-%d", n), o)
	}
	for _, force := range []int{29, 30, 31} {
		o := newOps()
		o.litOrRepeat(false, 30, alpha[:30], force)
		o.repeat(8)
		w.made(fmt.Sprintf("op-literal-30-form%d", force), o)
	}
	// Literals alone: more op bytes than output, which MinLZ refuses.
	w.mustFail("op-literal-alone", []byte{0, 1, 0, 'a'})
	// A length written as a longer varint than it needs (Go's Uvarint
	// reads it); lengths that do not read.
	w.mustAdd("op-length-overlong-varint", []byte{0, 0x88, 0x80, 0x00, 2 << 3, 'x', 'y', 'z', 4<<3 | 4}, []byte("xyzzzzzz"))
	w.mustFail("op-length-33-bits", []byte{0, 0x80, 0x80, 0x80, 0x80, 0x10, 0})
	w.mustFail("op-length-unterminated", []byte{0, 0x80, 0x80})
	// MinLZ's largest block, 8 MiB, and one byte more.
	for _, n := range []int{8 << 20, 8<<20 + 1} {
		o := newOps()
		o.lit([]byte("x"))
		o.repeat(n - 1)
		if n == 8<<20 {
			w.made("op-length-8m", o)
		} else {
			w.mustFail("op-length-past-8m", o.block())
		}
	}
	// A repeat before any copy: offset 1, a run; a repeat at the start.
	{
		o := newOps()
		o.lit([]byte("x"))
		o.repeat(5)
		w.made("op-repeat-initial-offset", o)
		o = newOps()
		o.repeat(5)
		w.mustFail("op-repeat-at-start", o.stating(5))
	}
	// copy1 at offsets 1, 2 and 1024; its lengths 4 to 18 in the tag,
	// and 19 and 273 extended; 18 extended (byte 0).
	for _, offset := range []int{1, 2, 1024} {
		for _, n := range []int{4, 5, 17, 18, 19, 273} {
			o := newOps()
			o.prefix(1024)
			o.copy1(offset, n, false)
			w.made(fmt.Sprintf("op-copy1-off%d-len%d", offset, n), o)
		}
	}
	{
		o := newOps()
		o.prefix(8)
		o.copy1(8, 18, true)
		w.made("op-copy1-ext-len18", o)
	}
	// copy2 at offsets 64 (overlapping its own output), 1000 and 65599,
	// each length form at its ends.
	for _, offset := range []int{64, 1000, 65599} {
		for _, n := range []int{4, 64, 65, 319, 320, 65599, 65600, 200000} {
			o := newOps()
			o.prefix(65599)
			o.copy2(offset, n)
			w.made(fmt.Sprintf("op-copy2-off%d-len%d", offset, n), o)
		}
	}
	// Fused copy2: 1 to 4 literals, lengths 4 to 11.
	for lits := 1; lits <= 4; lits++ {
		for n := 4; n <= 11; n++ {
			o := newOps()
			o.prefix(300)
			o.fused2(64, n, []byte("WXYZ")[:lits])
			w.made(fmt.Sprintf("op-fused2-lits%d-len%d", lits, n), o)
		}
	}
	// Copy3: 0 to 3 literals, each length form, at offsets 65536 and
	// 2,162,687, the largest.
	for _, offset := range []int{65536, 2162687} {
		for lits := 0; lits <= 3; lits++ {
			for _, n := range []int{4, 65, 320, 65600} {
				o := newOps()
				o.prefix(offset)
				o.copy3(offset, n, []byte("QRS")[:lits])
				w.made(fmt.Sprintf("op-copy3-off%d-lits%d-len%d", offset, lits, n), o)
			}
		}
	}
	// A repeat after each copy form reuses its offset; a fused literal
	// then a repeat.
	{
		o := newOps()
		o.prefix(70000)
		o.copy1(3, 8, false)
		o.repeat(6)
		o.copy2(70, 8)
		o.repeat(6)
		o.fused2(100, 5, []byte("ab"))
		o.repeat(7)
		o.copy3(66000, 9, []byte("c"))
		o.repeat(300)
		w.made("op-repeat-after-copies", o)
	}
	// What must fail: copies from before the start, output past or short
	// of the stated length, literals past the input, more op bytes than
	// output.
	fail := func(name string, build func(o *ops), stated int) {
		o := newOps()
		build(o)
		if stated < 0 {
			stated = len(o.want)
		}
		w.mustFail(name, o.stating(stated))
	}
	fail("op-copy1-before-start", func(o *ops) { o.prefix(1); o.copy1(2, 4, false) }, 5)
	fail("op-copy2-before-start", func(o *ops) { o.prefix(63); o.copy2(64, 4) }, 67)
	fail("op-copy3-before-start", func(o *ops) { o.prefix(65535); o.copy3(65536, 4, nil) }, 65539)
	fail("op-fused-before-start", func(o *ops) { o.prefix(60); o.fused2(64, 4, []byte("ab")) }, 66)
	fail("op-copy-past-length", func(o *ops) { o.prefix(4); o.copy1(4, 5, false) }, 8)
	fail("op-literal-past-length", func(o *ops) { o.lit(alpha[:9]) }, 8)
	fail("op-repeat-past-length", func(o *ops) { o.prefix(4); o.repeat(9) }, 12)
	fail("op-fused-literals-past-length", func(o *ops) { o.prefix(300); o.fused2(64, 4, []byte("abcd")) }, 303)
	fail("op-short-of-length", func(o *ops) { o.prefix(10); o.copy1(10, 20, false) }, 40)
	fail("op-literal-past-input", func(o *ops) { o.litOrRepeat(false, 40, alpha[:20], 0) }, 40)
	fail("op-ops-longer-than-length", func(o *ops) { o.lit([]byte("ab")); o.body = append(o.body, 0) }, 3)
	// Each op form cut short by one byte and more.
	cuts := []struct {
		name string
		op   func(o *ops)
	}{
		{"literal-ext1", func(o *ops) { o.litOrRepeat(false, 30, nil, 29) }},
		{"literal-ext2", func(o *ops) { o.litOrRepeat(false, 30, nil, 30) }},
		{"literal-ext3", func(o *ops) { o.litOrRepeat(false, 30, nil, 31) }},
		{"repeat-ext3", func(o *ops) { o.litOrRepeat(true, 70000, nil, 31) }},
		{"copy1", func(o *ops) { o.copy1(4, 4, false) }},
		{"copy1-ext", func(o *ops) { o.copy1(4, 100, false) }},
		{"copy2", func(o *ops) { o.copy2(64, 4) }},
		{"copy2-ext1", func(o *ops) { o.copy2(64, 100) }},
		{"copy2-ext2", func(o *ops) { o.copy2(64, 1000) }},
		{"copy2-ext3", func(o *ops) { o.copy2(64, 70000) }},
		{"fused2", func(o *ops) { o.fused2(64, 4, []byte("abc")) }},
		{"copy3", func(o *ops) { o.copy3(65536, 4, nil) }},
		{"copy3-ext3-lits", func(o *ops) { o.copy3(65536, 70000, []byte("ab")) }},
	}
	for _, c := range cuts {
		o := newOps()
		o.lit(alpha)
		n := len(o.body)
		c.op(o)
		whole := o.stating(1 << 20)
		for cut := 1; cut <= len(o.body)-n; cut++ {
			w.mustFail(fmt.Sprintf("op-cut-%s-%d", c.name, cut), whole[:len(whole)-cut])
		}
	}
}

func main() {
	seed := flag.Uint64("seed", 1, "the random inputs' seed")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pebble-minlz [-seed N] OUTDIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	r := rand.New(rand.NewPCG(*seed, 0x6d696e6c7a))
	w := &writer{names: map[string]bool{}, seen: map[string]string{}}

	var small [][]byte
	for _, in := range inputs(r) {
		// Every level of MinLZ's; Pebble compresses at 1 (MinLZFastest,
		// every profile that names MinLZ) and 2 (MinLZBalanced).
		for level := minlz.LevelFastest; level <= minlz.LevelSmallest; level++ {
			b, err := minlz.Encode(nil, in.data, level)
			if err != nil {
				panic(err)
			}
			w.mustAdd(fmt.Sprintf("%s.l%d", in.name, level), b, in.data)
			if len(b) <= 256 {
				small = append(small, b)
			}
		}
		// Pebble's own block compressor, as it compresses a data block:
		// MinLZCompression, which stores the block as it is (type 0) where
		// MinLZ saves less than 12%.
		c := block.MakeCompressor(block.MinLZCompression)
		ci, b := c.Compress(nil, in.data, blockkind.SSTableData)
		c.Close()
		if ci == block.MinLZCompressionIndicator {
			w.mustAdd(in.name+".pebble", b, in.data)
		}
		// Snappy's block of the same input, under type 8: Pebble's decoder
		// reads it as Snappy.
		if len(in.data) <= 64<<10 && len(in.data) > 0 {
			w.mustAdd(in.name+".snappy", s2.EncodeSnappy(nil, in.data), in.data)
		}
	}
	crafted(w)
	for _, line := range strings.Split(w.lines.String(), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[2] == "ok" && !strings.HasPrefix(f[1], "@") && len(f[1]) <= 2*96 && f[1] != "-" {
			b, _ := hex.DecodeString(f[1])
			small = append(small, b)
		}
	}
	// Damaged copies of the small MinLZ blocks: bytes flipped, set, cut,
	// inserted (the indicator kept, so that each stays MinLZ).
	for i := 0; i < 800; i++ {
		b := append([]byte{}, small[r.IntN(len(small))]...)
		if len(b) < 2 || b[0] != 0 {
			continue
		}
		for k := 1 + r.IntN(3); k > 0; k-- {
			at := 1 + r.IntN(len(b)-1)
			switch r.IntN(4) {
			case 0:
				b[at] ^= 1 << r.IntN(8)
			case 1:
				b[at] = byte(r.Uint32())
			case 2:
				b = b[:at]
			default:
				b = append(b[:at], append([]byte{byte(r.Uint32())}, b[at:]...)...)
			}
			if len(b) < 2 {
				break
			}
		}
		w.add(fmt.Sprintf("damaged-%04d", i), b)
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vectors.txt"), []byte(w.lines.String()), 0o644); err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "blocks.bin"), w.bin.Bytes(), 0o644); err != nil {
		panic(err)
	}
	fmt.Printf("%d vectors, %d bytes of blocks.bin\n", w.count, w.bin.Len())
}
