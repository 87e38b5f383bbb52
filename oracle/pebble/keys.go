// Comparers and seeded key sets, shared by the Pebble v1 and v2 writers.
//
// Each comparer is described here once, by plain functions (Compare, Split,
// suffix comparisons); v1.go and v2.go wrap them into the base.Comparer of
// their Pebble version. The rules are copied from Pebble v2.1.7:
//   - cockroach_comparator: cockroachkvs/cockroachkvs.go (Compare, Split,
//     normalizeEngineSuffixForCompare, Separator, Successor);
//   - pebble.internal.testkeys: internal/testkeys/testkeys.go (compare, split,
//     compareTimestamps; the "_synthetic" suffix is never generated here);
//   - oracle.reverse-suffix: this oracle's own comparer, unknown to the Rust
//     side (its tables must be reported NOT CHECKED).
package main

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
)

type cmpKind int

const (
	cmpBytewise cmpKind = iota
	cmpCockroach
	cmpTestkeys
	cmpUnknown
	numCmpKinds
)

// Comparer names as recorded in a table's rocksdb.comparator property.
var cmpNames = [numCmpKinds]string{
	"leveldb.BytewiseComparator",
	"cockroach_comparator",
	"pebble.internal.testkeys",
	"oracle.reverse-suffix",
}

// Short names, used in file names.
var cmpShort = [numCmpKinds]string{"bytewise", "crdb", "testkeys", "unknown"}

// ---------------------------------------------------------------------------
// cockroach_comparator (copied from v2.1.7 cockroachkvs, invariants checks
// left out).

func crdbSplit(key []byte) int {
	if len(key) == 0 {
		return 0
	}
	return len(key) - int(key[len(key)-1])
}

var zeroLogical [4]byte

func crdbNormalizeSuffix(a []byte) []byte {
	a = a[:len(a)-1]
	switch len(a) {
	case 13:
		a = a[:12]
		fallthrough
	case 12:
		if bytes.Equal(a[8:], zeroLogical[:]) {
			a = a[:8]
		}
	}
	return a
}

func crdbCompare(a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return cmp.Compare(len(a), len(b))
	}
	aSuffixLen := int(a[len(a)-1])
	aSuffixStart := len(a) - aSuffixLen
	bSuffixLen := int(b[len(b)-1])
	bSuffixStart := len(b) - bSuffixLen
	if c := bytes.Compare(a[:aSuffixStart], b[:bSuffixStart]); c != 0 {
		return c
	}
	if aSuffixLen == 0 || bSuffixLen == 0 {
		return cmp.Compare(aSuffixLen, bSuffixLen)
	}
	return bytes.Compare(crdbNormalizeSuffix(b[bSuffixStart:]), crdbNormalizeSuffix(a[aSuffixStart:]))
}

func crdbComparePointSuffixes(a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return cmp.Compare(len(a), len(b))
	}
	return bytes.Compare(crdbNormalizeSuffix(b), crdbNormalizeSuffix(a))
}

func crdbCompareRangeSuffixes(a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return cmp.Compare(len(a), len(b))
	}
	return bytes.Compare(b[:len(b)-1], a[:len(a)-1])
}

func crdbKeyPart(engineKey []byte) ([]byte, bool) {
	if len(engineKey) == 0 {
		return nil, false
	}
	versionLen := int(engineKey[len(engineKey)-1])
	keyPartEnd := len(engineKey) - 1 - versionLen
	if keyPartEnd < 0 || engineKey[keyPartEnd] != 0x00 {
		return nil, false
	}
	return engineKey[:keyPartEnd], true
}

// crdbEncode builds an engine key: roachKey, 0x00 sentinel, then for a
// timestamp its 8-byte wall time (and 4-byte logical part when logical != 0)
// and the version length + 1.
func crdbEncode(roachKey []byte, wall uint64, logical uint32) []byte {
	k := append(slices.Clone(roachKey), 0)
	switch {
	case wall == 0 && logical == 0:
	case logical == 0:
		k = binary.BigEndian.AppendUint64(k, wall)
		k = append(k, 9)
	default:
		k = binary.BigEndian.AppendUint64(k, wall)
		k = binary.BigEndian.AppendUint32(k, logical)
		k = append(k, 13)
	}
	return k
}

func crdbSuffix(wall uint64, logical uint32) []byte {
	k := crdbEncode(nil, wall, logical)
	return k[1:]
}

// ---------------------------------------------------------------------------
// pebble.internal.testkeys (copied from v2.1.7 internal/testkeys).

func testkeysSplit(a []byte) int {
	if i := bytes.LastIndexByte(a, '@'); i >= 0 {
		return i
	}
	return len(a)
}

func testkeysCompareTimestamps(a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return cmp.Compare(len(a), len(b))
	}
	if a[0] != '@' || b[0] != '@' {
		panic(fmt.Sprintf("invalid suffixes %q %q", a, b))
	}
	ai, err := strconv.ParseUint(string(a[1:]), 10, 64)
	if err != nil {
		panic(fmt.Sprintf("invalid test mvcc timestamp %q", a))
	}
	bi, err := strconv.ParseUint(string(b[1:]), 10, 64)
	if err != nil {
		panic(fmt.Sprintf("invalid test mvcc timestamp %q", b))
	}
	return cmp.Compare(bi, ai)
}

func testkeysCompare(a, b []byte) int {
	ai, bi := testkeysSplit(a), testkeysSplit(b)
	if v := bytes.Compare(a[:ai], b[:bi]); v != 0 {
		return v
	}
	return testkeysCompareTimestamps(a[ai:], b[bi:])
}

// ---------------------------------------------------------------------------
// oracle.reverse-suffix: prefix = the key up to its last '/', suffix = the
// '/' and what follows; prefixes compare bytewise, then the empty suffix
// first, then suffixes in reverse bytewise order.

func unknownSplit(a []byte) int {
	if i := bytes.LastIndexByte(a, '/'); i >= 0 {
		return i
	}
	return len(a)
}

func unknownCompareSuffixes(a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return cmp.Compare(len(a), len(b))
	}
	return bytes.Compare(b, a)
}

func unknownCompare(a, b []byte) int {
	ai, bi := unknownSplit(a), unknownSplit(b)
	if v := bytes.Compare(a[:ai], b[:bi]); v != 0 {
		return v
	}
	return unknownCompareSuffixes(a[ai:], b[bi:])
}

// ---------------------------------------------------------------------------

// cmpFuncs are a comparer's rules as plain functions.
type cmpFuncs struct {
	kind    cmpKind
	name    string
	compare func(a, b []byte) int
	split   func(a []byte) int // the filter key is k[:split(k)]
	// pointSuffixes and rangeSuffixes compare suffixes (v2's
	// ComparePointSuffixes and CompareRangeSuffixes).
	pointSuffixes func(a, b []byte) int
	rangeSuffixes func(a, b []byte) int
}

func funcsOf(k cmpKind) cmpFuncs {
	f := cmpFuncs{kind: k, name: cmpNames[k]}
	switch k {
	case cmpBytewise:
		f.compare = bytes.Compare
		f.split = func(a []byte) int { return len(a) }
		f.pointSuffixes = bytes.Compare
		f.rangeSuffixes = bytes.Compare
	case cmpCockroach:
		f.compare = crdbCompare
		f.split = crdbSplit
		f.pointSuffixes = crdbComparePointSuffixes
		f.rangeSuffixes = crdbCompareRangeSuffixes
	case cmpTestkeys:
		f.compare = testkeysCompare
		f.split = testkeysSplit
		f.pointSuffixes = testkeysCompareTimestamps
		f.rangeSuffixes = testkeysCompareTimestamps
	case cmpUnknown:
		f.compare = unknownCompare
		f.split = unknownSplit
		f.pointSuffixes = unknownCompareSuffixes
		f.rangeSuffixes = unknownCompareSuffixes
	}
	return f
}

// separatorOnPrefixes is testkeys' Separator, generalised to any comparer
// whose prefixes order bytewise: the bytewise separator of the two prefixes,
// or a itself.
func separatorOnPrefixes(split func([]byte) int, bytewiseSep func(dst, a, b []byte) []byte) func(dst, a, b []byte) []byte {
	return func(dst, a, b []byte) []byte {
		ai := split(a)
		if ai == len(a) {
			return append(dst, a...)
		}
		bi := split(b)
		if bi == len(b) {
			return append(dst, a...)
		}
		if bytes.Equal(a[:ai], b[:bi]) {
			return append(dst, a...)
		}
		n := len(dst)
		dst = bytewiseSep(dst, a[:ai], b[:bi])
		if bytes.Equal(a[:ai], dst[n:]) {
			return append(dst[:n], a...)
		}
		return dst
	}
}

func successorOnPrefixes(split func([]byte) int, bytewiseSucc func(dst, a []byte) []byte) func(dst, a []byte) []byte {
	return func(dst, a []byte) []byte {
		ai := split(a)
		if ai == len(a) {
			return append(dst, a...)
		}
		n := len(dst)
		dst = bytewiseSucc(dst, a[:ai])
		if bytes.Equal(a[:ai], dst[n:]) {
			return append(dst[:n], a...)
		}
		return dst
	}
}

// crdbSeparator and crdbSuccessor are cockroachkvs' (v2.1.7).
func crdbSeparator(bytewiseSep func(dst, a, b []byte) []byte) func(dst, a, b []byte) []byte {
	return func(dst, a, b []byte) []byte {
		if len(a) == 0 || len(b) == 0 {
			panic("cannot separate empty keys")
		}
		aKey, ok := crdbKeyPart(a)
		if !ok {
			return append(dst, a...)
		}
		bKey, ok := crdbKeyPart(b)
		if !ok {
			return append(dst, a...)
		}
		if bytes.Equal(aKey, bKey) || len(aKey) == 0 || len(bKey) == 0 {
			return append(dst, a...)
		}
		n := len(dst)
		dst = bytewiseSep(dst, aKey, bKey)
		if bytes.Equal(aKey, dst[n:]) {
			return append(dst[:n], a...)
		}
		return append(dst, 0)
	}
}

func crdbSuccessor(bytewiseSucc func(dst, a []byte) []byte) func(dst, a []byte) []byte {
	return func(dst, a []byte) []byte {
		if len(a) == 0 {
			return append(dst, 0x00)
		}
		aKey, ok := crdbKeyPart(a)
		if !ok {
			return append(dst, a...)
		}
		n := len(dst)
		dst = bytewiseSucc(dst, aKey)
		if bytes.Equal(aKey, dst[n:]) {
			return append(dst[:n], a...)
		}
		return append(dst, 0)
	}
}

// ---------------------------------------------------------------------------
// Key sets.

// Point key kinds (the same values in both versions).
const (
	kindDelete       = 0
	kindSet          = 1
	kindMerge        = 2
	kindSingleDelete = 7
	kindRangeDelete  = 15
	kindSetWithDel   = 18
	kindRangeKeyDel  = 19
	kindRangeKeyUns  = 20
	kindRangeKeySet  = 21
	kindDeleteSized  = 23
)

type point struct {
	key   []byte
	seq   uint64
	kind  uint8
	value []byte
}

type rangeDel struct {
	start, end []byte
	seq        uint64
}

type rangeKey struct {
	start, end []byte
	seq        uint64
	kind       uint8
	suffix     []byte
	value      []byte
}

// tableKeys is what one table holds, in the order it is added.
type tableKeys struct {
	cf        cmpFuncs
	points    []point    // internal-key order
	rangeDels []rangeDel // by start, disjoint
	rangeKeys []rangeKey // by start, disjoint
	probes    [][]byte   // comparer order, distinct
	written   map[string]bool
}

type keyGen struct {
	r  *rand.Rand
	cf cmpFuncs
	// stems shared by many keys so that keys have common prefixes.
	stems [][]byte
	// minPrefix is the shortest prefix: 1 for Pebble v2's tables (see
	// keyOpts.nonEmpty) and for CockroachDB keys, else 0.
	minPrefix int
}

// randByte picks from a mix of lowercase letters, digits, bytes >= 0x80
// (the filter hash sign-extends tail bytes) and any byte, never one of
// forbidden.
func (g *keyGen) randByte(forbidden byte, hasForbidden bool) byte {
	for {
		var b byte
		switch x := g.r.IntN(10); {
		case x < 4:
			b = 'a' + byte(g.r.IntN(26))
		case x < 6:
			b = '0' + byte(g.r.IntN(10))
		case x < 8:
			b = 0x80 + byte(g.r.IntN(128))
		default:
			b = byte(g.r.IntN(256))
		}
		if !hasForbidden || b != forbidden {
			return b
		}
	}
}

// randBytes returns n bytes: often a stem followed by random bytes.
func (g *keyGen) randBytes(n int, forbidden byte, hasForbidden bool) []byte {
	out := make([]byte, 0, n)
	if n > 0 && g.r.IntN(3) > 0 {
		stem := g.stems[g.r.IntN(len(g.stems))]
		if len(stem) > n {
			stem = stem[:n]
		}
		ok := true
		if hasForbidden && bytes.IndexByte(stem, forbidden) >= 0 {
			ok = false
		}
		if ok {
			out = append(out, stem...)
		}
	}
	for len(out) < n {
		out = append(out, g.randByte(forbidden, hasForbidden))
	}
	return out
}

func newKeyGen(r *rand.Rand, cf cmpFuncs) *keyGen {
	g := &keyGen{r: r, cf: cf}
	for i := 0; i < 6; i++ {
		n := 2 + r.IntN(12)
		s := make([]byte, 0, n)
		for len(s) < n {
			b := 'a' + byte(r.IntN(26))
			if r.IntN(5) == 0 {
				b = 0x80 + byte(r.IntN(128))
			}
			s = append(s, b)
		}
		if r.IntN(2) == 0 {
			s = append(s, ':')
		}
		g.stems = append(g.stems, s)
	}
	return g
}

// prefixLen picks a prefix length; lengths up to max, biased to short ones.
func (g *keyGen) prefixLen(max int) int {
	n := g.r.IntN(max + 1)
	if g.r.IntN(3) == 0 {
		n = g.r.IntN(9)
	}
	return maxInt(n, g.minPrefix)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// newPrefix returns a fresh prefix (filter key material without suffix
// decoration) for the comparer.
func (g *keyGen) newPrefix(n int) []byte {
	switch g.cf.kind {
	case cmpTestkeys:
		return g.randBytes(n, '@', true)
	case cmpUnknown:
		return g.randBytes(n, '/', true)
	default:
		return g.randBytes(n, 0, false)
	}
}

// version describes a key's suffix in a comparer-neutral way.
type version struct {
	present bool
	wall    uint64
	logical uint32
	raw     []byte // cmpUnknown's suffix bytes (after '/')
}

func (g *keyGen) randVersion() version {
	v := version{present: true}
	switch g.cf.kind {
	case cmpCockroach:
		v.wall = 1 + g.r.Uint64N(1<<50)
		if g.r.IntN(3) == 0 {
			v.logical = 1 + g.r.Uint32N(1000)
		}
	case cmpTestkeys:
		v.wall = 1 + g.r.Uint64N(1_000_000)
	case cmpUnknown:
		n := g.r.IntN(8)
		v.raw = g.randBytes(n, '/', true)
	}
	return v
}

// makeKey joins a prefix and a version into a user key.
func (g *keyGen) makeKey(prefix []byte, v version) []byte {
	switch g.cf.kind {
	case cmpCockroach:
		if !v.present {
			return crdbEncode(prefix, 0, 0)
		}
		return crdbEncode(prefix, v.wall, v.logical)
	case cmpTestkeys:
		k := slices.Clone(prefix)
		if v.present {
			k = append(k, '@')
			k = strconv.AppendUint(k, v.wall, 10)
		}
		return k
	case cmpUnknown:
		k := slices.Clone(prefix)
		if v.present {
			k = append(k, '/')
			k = append(k, v.raw...)
		}
		return k
	default:
		return slices.Clone(prefix)
	}
}

// filterPrefixMaterial splits a user key back into (prefix material,
// version): for cockroach keys the roachKey (without sentinel).
func (g *keyGen) parts(k []byte) ([]byte, version) {
	switch g.cf.kind {
	case cmpCockroach:
		rk, ok := crdbKeyPart(k)
		if !ok {
			panic("bad cockroach key")
		}
		verLen := int(k[len(k)-1])
		v := version{}
		if verLen > 0 {
			ver := k[len(k)-verLen : len(k)-1]
			v.present = true
			v.wall = binary.BigEndian.Uint64(ver)
			if len(ver) >= 12 {
				v.logical = binary.BigEndian.Uint32(ver[8:])
			}
		}
		return rk, v
	case cmpTestkeys:
		i := testkeysSplit(k)
		if i == len(k) {
			return k, version{}
		}
		w, _ := strconv.ParseUint(string(k[i+1:]), 10, 64)
		return k[:i], version{present: true, wall: w}
	case cmpUnknown:
		i := unknownSplit(k)
		if i == len(k) {
			return k, version{}
		}
		return k[:i], version{present: true, raw: k[i+1:]}
	default:
		return k, version{}
	}
}

// maxPrefixLen keeps keys within 64 bytes.
func (g *keyGen) maxPrefixLen() int {
	switch g.cf.kind {
	case cmpCockroach:
		return 64 - 14
	case cmpTestkeys:
		return 64 - 8
	case cmpUnknown:
		return 64 - 9
	default:
		return 64
	}
}

// userKeys returns about n distinct user keys in comparer order. For the
// bytewise comparer the first 65 have the lengths 0..64; for the others
// each prefix comes with 1 to 4 versions (sometimes one without version).
func (g *keyGen) userKeys(n int) [][]byte {
	seen := map[string]bool{}
	var keys [][]byte
	add := func(k []byte) {
		if !seen[string(k)] {
			seen[string(k)] = true
			keys = append(keys, k)
		}
	}
	max := g.maxPrefixLen()
	if g.cf.kind == cmpBytewise {
		for l := g.minPrefix; l <= 64 && n >= 65 && len(keys) < n; l++ {
			add(g.newPrefix(l))
		}
		for len(keys) < n {
			add(g.newPrefix(g.prefixLen(max)))
		}
	} else {
		for len(keys) < n {
			p := g.newPrefix(g.prefixLen(max))
			nv := 1
			if g.r.IntN(2) == 0 {
				nv = 1 + g.r.IntN(4)
			}
			if g.r.IntN(4) == 0 {
				add(g.makeKey(p, version{}))
			}
			for i := 0; i < nv; i++ {
				add(g.makeKey(p, g.randVersion()))
			}
		}
	}
	slices.SortFunc(keys, g.cf.compare)
	return keys
}

// unwrittenProbes returns keys the table does not hold: fresh keys, near
// misses of written keys (a byte changed, added or cut; preferring keys
// inside range-deleted spans), and keys sharing a written key's prefix
// with another (or no) suffix.
func (g *keyGen) unwrittenProbes(written [][]byte, inSpans [][]byte, n int, isWritten map[string]bool) [][]byte {
	var out [][]byte
	seen := map[string]bool{}
	add := func(k []byte) {
		if !isWritten[string(k)] && !seen[string(k)] {
			seen[string(k)] = true
			out = append(out, k)
		}
	}
	max := g.maxPrefixLen()
	mutate := func(p []byte) []byte {
		p = slices.Clone(p)
		switch x := g.r.IntN(4); {
		case x == 0 && len(p) > 0:
			i := g.r.IntN(len(p))
			p[i] ^= byte(1 + g.r.IntN(255))
		case x == 1 && len(p) > g.minPrefix:
			p = p[:len(p)-1]
		default:
			if len(p) < max {
				p = append(p, g.randByte(0, false))
			} else {
				p[len(p)-1]++
			}
		}
		// Keep the prefix valid for the comparer.
		for i := range p {
			if (g.cf.kind == cmpTestkeys && p[i] == '@') || (g.cf.kind == cmpUnknown && p[i] == '/') {
				p[i] = 'x'
			}
		}
		return p
	}
	for tries := 0; len(out) < n && tries < 20*n+100; tries++ {
		switch x := g.r.IntN(10); {
		case x < 3: // fresh
			p := g.newPrefix(g.prefixLen(max))
			v := version{}
			if g.cf.kind != cmpBytewise && g.r.IntN(3) > 0 {
				v = g.randVersion()
			}
			add(g.makeKey(p, v))
		case x < 7 && len(written) > 0: // near miss
			src := written
			if len(inSpans) > 0 && g.r.IntN(2) == 0 {
				src = inSpans
			}
			p, v := g.parts(src[g.r.IntN(len(src))])
			add(g.makeKey(mutate(p), v))
		case len(written) > 0: // same prefix, other suffix
			p, _ := g.parts(written[g.r.IntN(len(written))])
			if g.cf.kind == cmpBytewise {
				add(g.makeKey(mutate(p), version{}))
			} else if g.r.IntN(4) == 0 {
				add(g.makeKey(p, version{}))
			} else {
				add(g.makeKey(p, g.randVersion()))
			}
		}
	}
	return out
}

// keyOpts describes what a table may hold.
type keyOpts struct {
	userKeys    int  // distinct point user keys (0: none)
	deleteSized bool // DELSIZED allowed (Pebblev4+)
	rangeKeys   bool // range keys allowed (Pebblev2+)
	rangeDels   bool
	largeValues bool // some values of a few KiB
	// nonEmpty: no empty prefixes (nor keys). Pebble v2 asserts keys
	// passed to Separator are not empty (its DefaultComparer panics on
	// one) and its columnar PrefixBytes columns hold non-empty prefixes.
	nonEmpty bool
}

func randValue(r *rand.Rand, large bool) []byte {
	var n int
	switch x := r.IntN(100); {
	case x < 60:
		n = r.IntN(17)
	case x < 97 || !large:
		n = 17 + r.IntN(100)
	default:
		n = 1000 + r.IntN(2000)
	}
	v := make([]byte, n)
	// Compressible, but not trivially so.
	word := []byte(fmt.Sprintf("val%04x-", r.IntN(1<<16)))
	for i := range v {
		v[i] = word[i%len(word)]
		if r.IntN(16) == 0 {
			v[i] = byte(r.IntN(256))
		}
	}
	return v
}

// makeTableKeys builds a table's keys, spans and probes.
func makeTableKeys(r *rand.Rand, cf cmpFuncs, o keyOpts) *tableKeys {
	g := newKeyGen(r, cf)
	if o.nonEmpty || cf.kind == cmpCockroach {
		g.minPrefix = 1
	}
	t := &tableKeys{cf: cf, written: map[string]bool{}}
	var uks [][]byte
	if o.userKeys > 0 {
		uks = g.userKeys(o.userKeys)
	}
	for _, uk := range uks {
		t.written[string(uk)] = true
		n := 1
		if x := r.IntN(100); x < 12 {
			n = 2
		} else if x < 18 {
			n = 3 + r.IntN(2)
		}
		seqs := map[uint64]bool{}
		for len(seqs) < n {
			var s uint64
			if r.IntN(10) == 0 {
				s = r.Uint64N(10)
			} else {
				s = r.Uint64N(1 << 40)
			}
			seqs[s] = true
		}
		ss := make([]uint64, 0, n)
		for s := range seqs {
			ss = append(ss, s)
		}
		slices.Sort(ss)
		slices.Reverse(ss)
		for _, s := range ss {
			p := point{key: uk, seq: s}
			switch x := r.IntN(100); {
			case x < 50:
				p.kind = kindSet
			case x < 62:
				p.kind = kindDelete
			case x < 70:
				p.kind = kindSingleDelete
			case x < 80:
				p.kind = kindMerge
			case x < 90:
				p.kind = kindSetWithDel
			default:
				p.kind = kindSet
				if o.deleteSized {
					p.kind = kindDeleteSized
				}
			}
			switch p.kind {
			case kindSet, kindMerge, kindSetWithDel:
				p.value = randValue(r, o.largeValues)
			case kindDeleteSized:
				p.value = binary.AppendUvarint(nil, uint64(r.IntN(5000)))
			}
			t.points = append(t.points, p)
		}
	}
	// Range deletions between written keys (or between fresh keys when
	// there are no points), disjoint.
	bounds := uks
	if len(bounds) < 8 {
		bounds = g.userKeys(24)
	}
	var inSpans [][]byte
	if o.rangeDels {
		nd := 1 + r.IntN(3)
		step := len(bounds) / nd
		for i := 0; i < nd && step >= 3; i++ {
			lo := i*step + r.IntN(step/3+1)
			hi := lo + 1 + r.IntN(step/2)
			if hi >= (i+1)*step {
				hi = (i+1)*step - 1
			}
			if hi <= lo || cf.compare(bounds[lo], bounds[hi]) >= 0 {
				continue
			}
			t.rangeDels = append(t.rangeDels, rangeDel{start: bounds[lo], end: bounds[hi], seq: r.Uint64N(1 << 40)})
			if o.userKeys > 0 {
				inSpans = append(inSpans, uks[lo:hi]...)
			}
		}
	}
	if o.rangeKeys {
		// Range key bounds are prefixes (Split(k) == len(k)), as a DB
		// requires.
		var prefixes [][]byte
		for _, k := range bounds {
			p, _ := g.parts(k)
			pk := g.makeKey(p, version{})
			if len(prefixes) == 0 || cf.compare(prefixes[len(prefixes)-1], pk) < 0 {
				prefixes = append(prefixes, pk)
			}
		}
		nk := 1 + r.IntN(3)
		step := len(prefixes) / nk
		for i := 0; i < nk && step >= 2; i++ {
			lo := i*step + r.IntN(step/2+1)
			hi := lo + 1 + r.IntN(step/2+1)
			if hi >= (i+1)*step {
				hi = (i+1)*step - 1
			}
			if hi <= lo {
				continue
			}
			rk := rangeKey{start: prefixes[lo], end: prefixes[hi], seq: r.Uint64N(1 << 40)}
			switch r.IntN(3) {
			case 0:
				rk.kind = kindRangeKeySet
				rk.suffix = g.rangeKeySuffix()
				rk.value = randValue(r, false)
			case 1:
				rk.kind = kindRangeKeyUns
				rk.suffix = g.rangeKeySuffix()
			default:
				rk.kind = kindRangeKeyDel
			}
			t.rangeKeys = append(t.rangeKeys, rk)
		}
	}
	// Probes.
	probes := slices.Clone(uks)
	nUnwritten := len(uks)
	if nUnwritten < 40 {
		nUnwritten = 40
	}
	probes = append(probes, g.unwrittenProbes(uks, inSpans, nUnwritten, t.written)...)
	slices.SortFunc(probes, cf.compare)
	probes = slices.CompactFunc(probes, func(a, b []byte) bool { return cf.compare(a, b) == 0 })
	t.probes = probes
	return t
}

func (g *keyGen) rangeKeySuffix() []byte {
	switch g.cf.kind {
	case cmpCockroach:
		v := g.randVersion()
		return crdbSuffix(v.wall, v.logical)
	case cmpTestkeys:
		return []byte("@" + strconv.FormatUint(1+g.r.Uint64N(1_000_000), 10))
	case cmpUnknown:
		return append([]byte{'/'}, g.randBytes(1+g.r.IntN(6), '/', true)...)
	default:
		return []byte("@" + strconv.Itoa(1+g.r.IntN(100)))
	}
}
