// Mode `tables`: table files written by Pebble v1.1.5 and v2.1.7, each with
// Pebble's own filter decision for every probe key, and tables.json.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

const (
	v1Version = "1.1.5"
	v2Version = "2.1.7"
)

// Table formats by name, in order; the index is Pebble's TableFormat value
// (the same in both versions: LevelDB=1, RocksDBv2=2, Pebblev1=3, ...).
var formatNames = []string{"", "LevelDB", "RocksDBv2", "Pebblev1", "Pebblev2", "Pebblev3",
	"Pebblev4", "Pebblev5", "Pebblev6", "Pebblev7"}

const (
	fmtLevelDB   = 1
	fmtRocksDBv2 = 2
	fmtPebblev1  = 3
	fmtPebblev2  = 4
	fmtPebblev3  = 5
	fmtPebblev4  = 6
	fmtPebblev5  = 7
	fmtPebblev6  = 8
	fmtPebblev7  = 9
)

const (
	levelDBMagic = "\x57\xfb\x80\x8b\x24\x75\x47\xdb"
	rocksDBMagic = "\xf7\xcf\xf4\x85\xb7\x41\xe2\x88"
	pebbleMagic  = "\xf0\x9f\xaa\xb3\xf0\x9f\xaa\xb3"
)

// expectedFooter is the footer this oracle expects for a format: magic,
// version (-1: none) and footer length.
func expectedFooter(f int) (magic string, version int, length int) {
	switch {
	case f == fmtLevelDB:
		return levelDBMagic, -1, 48
	case f == fmtRocksDBv2:
		return rocksDBMagic, 2, 53
	case f <= fmtPebblev5:
		return pebbleMagic, f - 2, 53
	case f == fmtPebblev6:
		return pebbleMagic, 6, 57
	default:
		return pebbleMagic, 7, 61
	}
}

// checkFooter checks the file ends in the expected magic and version.
func checkFooter(data []byte, f int) error {
	magic, version, length := expectedFooter(f)
	if len(data) < length {
		return fmt.Errorf("file shorter than its footer")
	}
	if got := string(data[len(data)-8:]); got != magic {
		return fmt.Errorf("magic %x, expected %x", got, magic)
	}
	if version >= 0 {
		got := binary.LittleEndian.Uint32(data[len(data)-12:])
		if int(got) != version {
			return fmt.Errorf("footer version %d, expected %d", got, version)
		}
	}
	return nil
}

// tableSpec says how to write one table.
type tableSpec struct {
	name        string
	version     string // v1Version or v2Version
	format      int    // index into formatNames
	bitsPerKey  int    // 0: no filter policy
	cmp         cmpKind
	compression string // none, snappy, zstd, minlz
	checksum    string // crc32c, xxhash64
	tiny        bool   // BlockSize and IndexBlockSize 256
	keys        keyOpts
	seed        uint64
	note        string
}

// tableResult is one entry of tables.json.
type tableResult struct {
	Name                string `json:"name"`
	PebbleVersion       string `json:"pebble_version"`
	TableFormat         string `json:"table_format"`
	FooterMagic         string `json:"footer_magic"`
	FooterVersion       *int   `json:"footer_version"`
	FooterLength        int    `json:"footer_length"`
	BitsPerKey          int    `json:"bits_per_key"`
	FilterPolicy        string `json:"filter_policy"`
	Comparer            string `json:"comparer"`
	KeySchema           string `json:"key_schema"`
	Compression         string `json:"compression"`
	Checksum            string `json:"checksum"`
	TinyBlocks          bool   `json:"tiny_blocks"`
	BlockSize           int    `json:"block_size"`
	IndexBlockSize      int    `json:"index_block_size"`
	PointKeys           int    `json:"point_keys"`
	UserKeys            int    `json:"user_keys"`
	RangeDels           int    `json:"range_dels"`
	RangeKeys           int    `json:"range_keys"`
	DataBlocks          int    `json:"data_blocks"`
	TwoLevelIndex       bool   `json:"two_level_index"`
	IndexPartitions     int    `json:"index_partitions"`
	FilterBlockLength   *int   `json:"filter_block_length"`
	ValueBlocks         int    `json:"value_blocks"`
	ValuesInValueBlocks int    `json:"values_in_value_blocks"`
	FileSize            int    `json:"file_size"`
	Probes              int    `json:"probes"`
	Written             int    `json:"written"`
	UnwrittenAbsent     int    `json:"unwritten_absent"`
	UnwrittenMayMatch   int    `json:"unwritten_may_match"`
	Note                string `json:"note,omitempty"`
}

// probeAnswer is one line of NAME.answers.
type probeAnswer struct {
	key      []byte
	written  bool
	mayMatch bool
}

// tableFacts is what a version's reader reports about a written table.
type tableFacts struct {
	filterPolicy    string
	filterLen       int // -1: no filter block
	keySchema       string
	compressionProp string
	twoLevel        bool
	indexPartitions int
	dataBlocks      int
	valueBlocks     int
	valuesInVB      int
}

func specSeed(seed uint64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64() ^ seed*0x9e3779b97f4a7c15
}

func writeTable(dir string, spec tableSpec) (tableResult, error) {
	r := rand.New(rand.NewPCG(spec.seed, 0x5eed))
	tk := makeTableKeys(r, funcsOf(spec.cmp), spec.keys)
	path := filepath.Join(dir, spec.name+".sst")
	var answers []probeAnswer
	var facts tableFacts
	var err error
	if spec.version == v1Version {
		if err = writeV1Table(path, spec, tk); err != nil {
			return tableResult{}, fmt.Errorf("%s: write: %w", spec.name, err)
		}
		answers, facts, err = probeV1Table(path, spec, tk)
	} else {
		if err = writeV2Table(path, spec, tk); err != nil {
			return tableResult{}, fmt.Errorf("%s: write: %w", spec.name, err)
		}
		answers, facts, err = probeV2Table(path, spec, tk)
	}
	if err != nil {
		return tableResult{}, fmt.Errorf("%s: probe: %w", spec.name, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return tableResult{}, err
	}
	if err := checkFooter(data, spec.format); err != nil {
		return tableResult{}, fmt.Errorf("%s: %w", spec.name, err)
	}
	res := tableResult{
		Name:                spec.name,
		PebbleVersion:       spec.version,
		TableFormat:         formatNames[spec.format],
		BitsPerKey:          spec.bitsPerKey,
		FilterPolicy:        facts.filterPolicy,
		Comparer:            cmpNames[spec.cmp],
		KeySchema:           facts.keySchema,
		Compression:         spec.compression,
		Checksum:            spec.checksum,
		TinyBlocks:          spec.tiny,
		BlockSize:           4096,
		IndexBlockSize:      4096,
		PointKeys:           len(tk.points),
		UserKeys:            len(tk.written),
		RangeDels:           len(tk.rangeDels),
		RangeKeys:           len(tk.rangeKeys),
		DataBlocks:          facts.dataBlocks,
		TwoLevelIndex:       facts.twoLevel,
		IndexPartitions:     facts.indexPartitions,
		ValueBlocks:         facts.valueBlocks,
		ValuesInValueBlocks: facts.valuesInVB,
		FileSize:            len(data),
		Probes:              len(answers),
		Note:                spec.note,
	}
	magic, version, flen := expectedFooter(spec.format)
	res.FooterMagic = hex.EncodeToString([]byte(magic))
	if version >= 0 {
		res.FooterVersion = &version
	}
	res.FooterLength = flen
	if spec.tiny {
		res.BlockSize, res.IndexBlockSize = 256, 256
	}
	if facts.filterLen >= 0 {
		l := facts.filterLen
		res.FilterBlockLength = &l
	}
	var out bytes.Buffer
	for _, a := range answers {
		w, m := "unwritten", "absent"
		if a.written {
			w = "written"
			res.Written++
		}
		if a.mayMatch {
			m = "may-match"
		}
		if a.written && !a.mayMatch {
			return tableResult{}, fmt.Errorf("%s: FALSE NEGATIVE: Pebble's filter rules out written key %x", spec.name, a.key)
		}
		if !a.written {
			if a.mayMatch {
				res.UnwrittenMayMatch++
			} else {
				res.UnwrittenAbsent++
			}
		}
		fmt.Fprintf(&out, "%x %s %s\n", a.key, w, m)
	}
	if err := os.WriteFile(filepath.Join(dir, spec.name+".answers"), out.Bytes(), 0o644); err != nil {
		return tableResult{}, err
	}
	return res, nil
}

// answerFor turns the filter metric's change across one SeekPrefixGE into
// an answer; direct is the bloom policy's MayContain on the filter block
// (nil without one), which must agree.
func answerFor(key []byte, written bool, dHits, dMisses int64, hasFilter bool, direct *bool) (probeAnswer, error) {
	a := probeAnswer{key: key, written: written}
	switch {
	case !hasFilter:
		if dHits != 0 || dMisses != 0 {
			return a, fmt.Errorf("key %x: filter metrics moved (%d, %d) for a table without filter", key, dHits, dMisses)
		}
		a.mayMatch = true
	case dHits == 1 && dMisses == 0:
		a.mayMatch = false
	case dHits == 0 && dMisses == 1:
		a.mayMatch = true
	default:
		return a, fmt.Errorf("key %x: filter metrics moved by hits %d, misses %d", key, dHits, dMisses)
	}
	if direct != nil && *direct != a.mayMatch {
		return a, fmt.Errorf("key %x: reader says may-match=%v, MayContain on the filter block says %v", key, a.mayMatch, *direct)
	}
	return a, nil
}

// ---------------------------------------------------------------------------
// Which tables to write.

type versionFormats struct {
	version string
	formats []int
}

var allVersionFormats = []versionFormats{
	{v1Version, []int{fmtLevelDB, fmtRocksDBv2, fmtPebblev1, fmtPebblev2, fmtPebblev3, fmtPebblev4}},
	{v2Version, []int{fmtLevelDB, fmtRocksDBv2, fmtPebblev1, fmtPebblev2, fmtPebblev3, fmtPebblev4, fmtPebblev5, fmtPebblev6, fmtPebblev7}},
}

func compressionsFor(version string, f int) []string {
	if version == v2Version && f >= fmtPebblev6 {
		return []string{"none", "snappy", "zstd", "minlz"}
	}
	return []string{"none", "snappy", "zstd"}
}

func vshort(version string) string {
	if version == v1Version {
		return "v1"
	}
	return "v2"
}

func specKeys(version string, f int, nKeys int, large bool) keyOpts {
	return keyOpts{
		userKeys:    nKeys,
		deleteSized: f >= fmtPebblev4,
		rangeKeys:   f >= fmtPebblev2,
		rangeDels:   true,
		largeValues: large,
		nonEmpty:    version == v2Version,
	}
}

func specName(s tableSpec) string {
	bpk := "nofilter"
	if s.bitsPerKey > 0 {
		bpk = fmt.Sprintf("bpk%d", s.bitsPerKey)
	}
	tiny := ""
	if s.tiny {
		tiny = "-tiny"
	}
	return fmt.Sprintf("%s-%s-%s-%s-%s-%s%s", vshort(s.version), strings.ToLower(formatNames[s.format]),
		cmpShort[s.cmp], bpk, s.compression, s.checksum, tiny)
}

// planTables lists the tables to write. Without all: per (version, format)
// four tables, one per comparer, with compression, checksum and tiny
// blocks rotated so that each format meets each value of each at least
// once, bits per key running over 1..20; plus special tables. With all:
// per (version, format) every bits per key 1..20, the other dimensions
// drawn from the seed.
func planTables(seed uint64, all bool) []tableSpec {
	var specs []tableSpec
	r := rand.New(rand.NewPCG(seed, 0x7ab1e5))
	bpkCounter := int(seed % 20)
	fi := 0
	for _, vf := range allVersionFormats {
		for _, f := range vf.formats {
			comps := compressionsFor(vf.version, f)
			if !all {
				for i := 0; i < 4; i++ {
					s := tableSpec{
						version:     vf.version,
						format:      f,
						bitsPerKey:  1 + (bpkCounter*7)%20,
						cmp:         cmpKind((i + fi) % int(numCmpKinds)),
						compression: comps[(i+fi)%len(comps)],
						checksum:    []string{"crc32c", "xxhash64"}[i&1],
						tiny:        ((i>>1)^i)&1 == 1,
					}
					bpkCounter++
					n := 80 + r.IntN(120)
					if s.tiny {
						n = 180 + r.IntN(100)
					}
					s.keys = specKeys(vf.version, f, n, i == fi%4)
					specs = append(specs, s)
				}
				// Make sure every compression shows up for formats with
				// more compressions than comparers (none: 4 <= 4).
			} else {
				for bpk := 1; bpk <= 20; bpk++ {
					s := tableSpec{
						version:     vf.version,
						format:      f,
						bitsPerKey:  bpk,
						cmp:         cmpKind(r.IntN(int(numCmpKinds))),
						compression: comps[r.IntN(len(comps))],
						checksum:    []string{"crc32c", "xxhash64"}[r.IntN(2)],
						tiny:        r.IntN(3) == 0,
					}
					n := 100 + r.IntN(1100)
					s.keys = specKeys(vf.version, f, n, r.IntN(3) == 0)
					specs = append(specs, s)
				}
			}
			fi++
		}
	}
	// Special tables, per version, at its newest format (and v2's newest
	// row format too).
	specials := func(version string, f int, tag string) {
		base := tableSpec{version: version, format: f, cmp: cmpBytewise, compression: "snappy", checksum: "crc32c"}
		// No point keys: only range deletions and (v2+) range keys.
		s := base
		s.bitsPerKey = 10
		s.keys = keyOpts{rangeDels: true, rangeKeys: f >= fmtPebblev2, nonEmpty: version == v2Version}
		s.name = fmt.Sprintf("%s-%s-nopoints", vshort(version), tag)
		s.note = "no point keys: range deletions and range keys only"
		specs = append(specs, s)
		// No filter policy.
		s = base
		s.cmp = cmpCockroach
		s.bitsPerKey = 0
		s.keys = specKeys(version, f, 200, false)
		s.name = fmt.Sprintf("%s-%s-nofilter", vshort(version), tag)
		s.note = "written without a filter policy"
		specs = append(specs, s)
		// A single key.
		s = base
		s.bitsPerKey = 10
		s.keys = keyOpts{userKeys: 1, nonEmpty: version == v2Version}
		s.name = fmt.Sprintf("%s-%s-singlekey", vshort(version), tag)
		s.note = "one point key"
		specs = append(specs, s)
	}
	specials(v1Version, fmtPebblev4, "pebblev4")
	specials(v1Version, fmtRocksDBv2, "rocksdbv2")
	specials(v2Version, fmtPebblev4, "pebblev4")
	specials(v2Version, fmtPebblev7, "pebblev7")
	for i := range specs {
		s := &specs[i]
		if s.format == fmtLevelDB {
			// The LevelDB footer has no checksum type: always CRC32c.
			s.checksum = "crc32c"
		}
		if s.name == "" {
			s.name = specName(*s)
		}
		s.seed = specSeed(seed, s.name)
	}
	return specs
}

func runTables(dir string, seed uint64, all bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	specs := planTables(seed, all)
	var results []tableResult
	seen := map[string]bool{}
	for _, s := range specs {
		if seen[s.name] {
			return fmt.Errorf("duplicate table name %s", s.name)
		}
		seen[s.name] = true
		res, err := writeTable(dir, s)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	js, err := json.MarshalIndent(map[string]any{
		"seed":   seed,
		"all":    all,
		"tables": results,
	}, "", "  ")
	if err != nil {
		return err
	}
	js = append(js, '\n')
	if err := os.WriteFile(filepath.Join(dir, "tables.json"), js, 0o644); err != nil {
		return err
	}
	fmt.Printf("%d tables in %s\n", len(results), dir)
	return nil
}
