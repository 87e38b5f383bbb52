// Mode `db`: a small Pebble database written the way go-ethereum configures
// Pebble, with Pebble's own answers: live.txt (its live tables) and gets.txt
// (found or not, and the change of Metrics().Filter.Hits across each Get).
package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The databases' sizes: small memtables and tables so that a few rounds of
// writes give flushes and compactions over several levels.
const (
	dbMemTableSize   = 256 << 10 // more than a round writes: only explicit flushes
	dbTargetFileSize = 16 << 10
	dbLBaseMaxBytes  = 32 << 10
	dbKeySpace       = 4000 // ids of phase 1
)

func dbKey(id int) []byte { return []byte(fmt.Sprintf("user:%08d", id)) }

func dbValue(r *rand.Rand) []byte {
	v := make([]byte, 40+r.IntN(80))
	for i := range v {
		v[i] = byte(' ' + r.IntN(95))
	}
	return v
}

// liveTable is one line of live.txt.
type liveTable struct {
	level            int
	num              uint64
	size             uint64
	smallest         []byte
	largest          []byte
	smallSeq, bigSeq uint64
	virtual          bool
	backing          uint64
}

func (t liveTable) String() string {
	s := fmt.Sprintf("%d %d %d %x %x %d %d", t.level, t.num, t.size, t.smallest, t.largest, t.smallSeq, t.bigSeq)
	if t.virtual {
		s += fmt.Sprintf(" virtual %d", t.backing)
	}
	return s
}

// dbDriver is one Pebble version's DB, behind closures.
type dbDriver struct {
	set        func(k, v []byte) error
	del        func(k []byte) error
	delRange   func(a, b []byte) error
	flush      func() error
	get        func(k []byte) (bool, error)
	filterHits func() int64
	busy       func() bool // a flush or compaction is running
	sstables   func() ([]liveTable, error)
	close      func() error
	// ingestAndExcise ingests a table of keys (all in [start, end)) after
	// excising [start, end); nil where not supported.
	ingestAndExcise func(tmpDir string, keys, values [][]byte, start, end []byte) error
	describe        func() string
}

// dbModel is what the database should hold, to check Pebble's answers.
type dbModel struct {
	live       map[string]bool
	written    map[string]int // times written
	deleted    map[string]bool
	rangeDel   map[string]bool
	excised    map[string]bool
	walOnly    map[string]bool
	everKeys   [][]byte
	everSeen   map[string]bool
	rangeDels  [][2][]byte
	exciseSpan [2][]byte
}

func newModel() *dbModel {
	return &dbModel{live: map[string]bool{}, written: map[string]int{}, deleted: map[string]bool{},
		rangeDel: map[string]bool{}, excised: map[string]bool{}, walOnly: map[string]bool{}, everSeen: map[string]bool{}}
}

func (m *dbModel) noteKey(k []byte) {
	if !m.everSeen[string(k)] {
		m.everSeen[string(k)] = true
		m.everKeys = append(m.everKeys, k)
	}
}

func (m *dbModel) set(d *dbDriver, k, v []byte) error {
	m.noteKey(k)
	m.live[string(k)] = true
	m.written[string(k)]++
	delete(m.deleted, string(k))
	delete(m.rangeDel, string(k))
	delete(m.excised, string(k))
	return d.set(k, v)
}

func (m *dbModel) del(d *dbDriver, k []byte) error {
	m.noteKey(k)
	if m.live[string(k)] {
		m.deleted[string(k)] = true
	}
	delete(m.live, string(k))
	return d.del(k)
}

func (m *dbModel) delRange(d *dbDriver, a, b []byte) error {
	for _, k := range m.everKeys {
		if bytes.Compare(k, a) >= 0 && bytes.Compare(k, b) < 0 && m.live[string(k)] {
			delete(m.live, string(k))
			m.rangeDel[string(k)] = true
		}
	}
	m.rangeDels = append(m.rangeDels, [2][]byte{a, b})
	return d.delRange(a, b)
}

type dbPlan struct {
	version string // "v1", "v1-newest", "v2"
	seed    uint64
	out     string
}

func runDB(version string, seed uint64, out string) error {
	switch version {
	case "v1", "v1-newest", "v2":
	default:
		return fmt.Errorf("--version: v1, v1-newest or v2, not %q", version)
	}
	dir := filepath.Join(out, "db")
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists: remove it first", dir)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	open := func(autoCompactions, readOnly bool, d string) (*dbDriver, error) {
		if version == "v2" {
			return openV2(d, autoCompactions, readOnly)
		}
		return openV1(d, version == "v1-newest", autoCompactions, readOnly)
	}
	r := rand.New(rand.NewPCG(seed, 0xdb))
	m := newModel()

	// Phase 1: automatic compactions on; rounds of writes, overwrites and
	// deletions, each round flushed, two DeleteRanges.
	d, err := open(true, false, dir)
	if err != nil {
		return err
	}
	for round := 0; round < 6; round++ {
		for i := 0; i < 700; i++ {
			if err := m.set(d, dbKey(r.IntN(dbKeySpace)), dbValue(r)); err != nil {
				return err
			}
		}
		for i := 0; i < 70; i++ {
			if err := m.del(d, dbKey(r.IntN(dbKeySpace))); err != nil {
				return err
			}
		}
		if round == 2 || round == 4 {
			a := r.IntN(dbKeySpace - 200)
			if err := m.delRange(d, dbKey(a), dbKey(a+100+r.IntN(100))); err != nil {
				return err
			}
		}
		if err := d.flush(); err != nil {
			return err
		}
		// Let the compactions finish before the next round (for
		// runs that repeat).
		for quiet := 0; quiet < 5; {
			time.Sleep(20 * time.Millisecond)
			if d.busy() {
				quiet = 0
			} else {
				quiet++
			}
		}
	}
	if err := d.close(); err != nil {
		return err
	}

	// Phase 2: automatic compactions off; three rounds, each flushed to a
	// level-0 table.
	d, err = open(false, false, dir)
	if err != nil {
		return err
	}
	for round := 0; round < 3; round++ {
		for i := 0; i < 250; i++ {
			id := r.IntN(dbKeySpace + 500)
			if err := m.set(d, dbKey(id), dbValue(r)); err != nil {
				return err
			}
		}
		for i := 0; i < 25; i++ {
			if err := m.del(d, dbKey(r.IntN(dbKeySpace))); err != nil {
				return err
			}
		}
		if err := d.flush(); err != nil {
			return err
		}
	}
	walKeys := 0
	if version == "v2" {
		// A virtual table: excise a span from the middle of the biggest
		// table below level 0 and ingest a table into it.
		tables, err := d.sstables()
		if err != nil {
			return err
		}
		var big *liveTable
		for i := range tables {
			if tables[i].level > 0 && (big == nil || tables[i].size > big.size) {
				big = &tables[i]
			}
		}
		if big == nil {
			return fmt.Errorf("no table below level 0 to excise from")
		}
		var inside [][]byte
		for _, k := range m.everKeys {
			if bytes.Compare(k, big.smallest) > 0 && bytes.Compare(k, big.largest) < 0 {
				inside = append(inside, k)
			}
		}
		slices.SortFunc(inside, bytes.Compare)
		if len(inside) < 40 {
			return fmt.Errorf("too few keys inside table %d", big.num)
		}
		mid := len(inside) / 2
		start := inside[mid-10]
		end := inside[mid+10]
		for _, k := range m.everKeys {
			if bytes.Compare(k, start) >= 0 && bytes.Compare(k, end) < 0 && m.live[string(k)] {
				delete(m.live, string(k))
				m.excised[string(k)] = true
			}
		}
		m.exciseSpan = [2][]byte{start, end}
		// The ingested keys: every other key of the span plus new ones
		// between them.
		var keys, values [][]byte
		for _, k := range inside[mid-10 : mid+10] {
			if r.IntN(2) == 0 {
				keys = append(keys, k)
			}
			if r.IntN(2) == 0 {
				keys = append(keys, append(slices.Clone(k), '5'))
			}
		}
		for _, k := range keys {
			values = append(values, dbValue(r))
			m.noteKey(k)
			m.live[string(k)] = true
			m.written[string(k)]++
			delete(m.excised, string(k))
			delete(m.deleted, string(k))
			delete(m.rangeDel, string(k))
		}
		if err := d.ingestAndExcise(out, keys, values, start, end); err != nil {
			return err
		}
		// Writes left in the WAL: not flushed, and Close does not flush.
		for i := 0; i < 60; i++ {
			id := dbKeySpace + 500 + r.IntN(100)
			if r.IntN(2) == 0 {
				id = r.IntN(dbKeySpace)
			}
			k := dbKey(id)
			if !m.everSeen[string(k)] {
				m.walOnly[string(k)] = true
			}
			if err := m.set(d, k, dbValue(r)); err != nil {
				return err
			}
			walKeys++
		}
		for i := 0; i < 10; i++ {
			if err := m.del(d, dbKey(r.IntN(dbKeySpace))); err != nil {
				return err
			}
			walKeys++
		}
	}

	tables, err := d.sstables()
	if err != nil {
		return err
	}
	probes := dbProbes(r, m, tables)
	var gets bytes.Buffer
	found := map[string]bool{}
	for _, k := range probes {
		before := d.filterHits()
		ok, err := d.get(k)
		if err != nil {
			return fmt.Errorf("get %x: %w", k, err)
		}
		useful := d.filterHits() - before
		if ok != m.live[string(k)] {
			return fmt.Errorf("get %x: Pebble says found=%v, the model %v", k, ok, m.live[string(k)])
		}
		found[string(k)] = ok
		word := "notfound"
		if ok {
			word = "found"
		}
		fmt.Fprintf(&gets, "%x %s %d\n", k, word, useful)
	}
	tables2, err := d.sstables()
	if err != nil {
		return err
	}
	if !slices.EqualFunc(tables, tables2, func(a, b liveTable) bool { return a.String() == b.String() }) {
		return fmt.Errorf("the live tables changed during the gets")
	}
	var live bytes.Buffer
	for _, t := range tables {
		fmt.Fprintln(&live, t)
	}
	desc := d.describe()
	if err := d.close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "live.txt"), live.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "gets.txt"), gets.Bytes(), 0o644); err != nil {
		return err
	}

	// Reopen a copy, read-only (the WAL replayed into a memtable, not
	// flushed): the same tables and the same answers.
	tmp, err := os.MkdirTemp("", "pebble-oracle-reopen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := exec.Command("cp", "-a", dir, filepath.Join(tmp, "db")).Run(); err != nil {
		return fmt.Errorf("copying the db: %w", err)
	}
	d, err = open(false, true, filepath.Join(tmp, "db"))
	if err != nil {
		return fmt.Errorf("reopen: %w", err)
	}
	tables3, err := d.sstables()
	if err != nil {
		return err
	}
	if !slices.EqualFunc(tables, tables3, func(a, b liveTable) bool { return a.String() == b.String() }) {
		return fmt.Errorf("reopened, the live tables differ")
	}
	for _, k := range probes {
		ok, err := d.get(k)
		if err != nil {
			return err
		}
		if ok != found[string(k)] {
			return fmt.Errorf("reopened, get %x says %v", k, ok)
		}
	}
	if err := d.close(); err != nil {
		return err
	}

	perLevel := map[int]int{}
	virtual := 0
	for _, t := range tables {
		perLevel[t.level]++
		if t.virtual {
			virtual++
		}
	}
	var lv []string
	for l := 0; l < 7; l++ {
		if perLevel[l] > 0 {
			lv = append(lv, fmt.Sprintf("L%d %d", l, perLevel[l]))
		}
	}
	fmt.Printf("%s: %s; %d tables (%s), %d virtual, %d writes left in the WAL, %d gets\n",
		out, desc, len(tables), strings.Join(lv, ", "), virtual, walKeys, len(probes))
	return nil
}

// dbProbes picks about 300 keys: present, overwritten, deleted,
// range-deleted, excised, WAL-only, never written inside the key range,
// near misses, and keys just before and after every table.
func dbProbes(r *rand.Rand, m *dbModel, tables []liveTable) [][]byte {
	seen := map[string]bool{}
	var out [][]byte
	add := func(k []byte) {
		if !seen[string(k)] {
			seen[string(k)] = true
			out = append(out, k)
		}
	}
	pick := func(pred func(k []byte) bool, n int) {
		var c [][]byte
		for _, k := range m.everKeys {
			if pred(k) {
				c = append(c, k)
			}
		}
		r.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
		for i := 0; i < n && i < len(c); i++ {
			add(c[i])
		}
	}
	pick(func(k []byte) bool { return m.live[string(k)] && m.written[string(k)] == 1 }, 50)
	pick(func(k []byte) bool { return m.live[string(k)] && m.written[string(k)] > 1 }, 40)
	pick(func(k []byte) bool { return m.deleted[string(k)] }, 40)
	pick(func(k []byte) bool { return m.rangeDel[string(k)] }, 25)
	pick(func(k []byte) bool { return m.excised[string(k)] }, 10)
	pick(func(k []byte) bool { return m.walOnly[string(k)] }, 10)
	for i := 0; i < 60; i++ { // never written, inside the key range
		k := dbKey(r.IntN(dbKeySpace + 500))
		if !m.everSeen[string(k)] {
			add(k)
		}
	}
	for i := 0; i < 50; i++ { // near misses
		k := m.everKeys[r.IntN(len(m.everKeys))]
		if i%2 == 0 {
			add(append(slices.Clone(k), byte('0'+r.IntN(10))))
		} else {
			add(slices.Clone(k[:len(k)-1]))
		}
	}
	for _, t := range tables { // just before and after every table
		if n := len(t.smallest); n > 0 && t.smallest[n-1] > 0 {
			b := slices.Clone(t.smallest)
			b[n-1]--
			add(append(b, 0xff))
		}
		add(append(slices.Clone(t.largest), 0))
	}
	for _, s := range []string{"", "\x01", "USER:00000001", "a", "user:", "user:1", "user:99999999", "zzz", "\xff\xfe"} {
		add([]byte(s))
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}
