// Pebble v1.1.5: table writer and reader.
package main

import (
	"fmt"
	"os"

	pebble1 "github.com/cockroachdb/pebble"
	bloom1 "github.com/cockroachdb/pebble/bloom"
	objp1 "github.com/cockroachdb/pebble/objstorage/objstorageprovider"
	sst1 "github.com/cockroachdb/pebble/sstable"
	vfs1 "github.com/cockroachdb/pebble/vfs"
)

// v1Comparer wraps a comparer's rules into a v1.1.5 Comparer. The bytewise
// one is Pebble's DefaultComparer itself, which in v1.1.5 has no Split (the
// filter then holds whole keys).
func v1Comparer(k cmpKind) *sst1.Comparer {
	def := pebble1.DefaultComparer
	cf := funcsOf(k)
	c := &sst1.Comparer{
		Compare:            cf.compare,
		Equal:              func(a, b []byte) bool { return cf.compare(a, b) == 0 },
		FormatKey:          def.FormatKey,
		Split:              cf.split,
		ImmediateSuccessor: func(dst, a []byte) []byte { return append(append(dst, a...), 0) },
		Name:               cf.name,
	}
	switch k {
	case cmpBytewise:
		return def
	case cmpCockroach:
		c.AbbreviatedKey = func(key []byte) uint64 {
			rk, ok := crdbKeyPart(key)
			if !ok {
				return 0
			}
			return def.AbbreviatedKey(rk)
		}
		c.Separator = crdbSeparator(def.Separator)
		c.Successor = crdbSuccessor(def.Successor)
	default:
		c.AbbreviatedKey = func(key []byte) uint64 { return def.AbbreviatedKey(key[:cf.split(key)]) }
		c.Separator = separatorOnPrefixes(cf.split, def.Separator)
		c.Successor = successorOnPrefixes(cf.split, def.Successor)
	}
	return c
}

func v1Compression(name string) sst1.Compression {
	switch name {
	case "none":
		return sst1.NoCompression
	case "snappy":
		return sst1.SnappyCompression
	case "zstd":
		return sst1.ZstdCompression
	}
	panic("v1: no compression " + name)
}

func v1Checksum(name string) sst1.ChecksumType {
	if name == "xxhash64" {
		return sst1.ChecksumTypeXXHash64
	}
	return sst1.ChecksumTypeCRC32c
}

func v1Trailer(seq uint64, kind uint8) uint64 { return seq<<8 | uint64(kind) }

func writeV1Table(path string, spec tableSpec, tk *tableKeys) error {
	f, err := vfs1.Default.Create(path)
	if err != nil {
		return err
	}
	opts := sst1.WriterOptions{
		TableFormat: sst1.TableFormat(spec.format),
		Comparer:    v1Comparer(spec.cmp),
		Compression: v1Compression(spec.compression),
		Checksum:    v1Checksum(spec.checksum),
	}
	if spec.tiny {
		opts.BlockSize, opts.IndexBlockSize = 256, 256
	}
	if spec.bitsPerKey > 0 {
		opts.FilterPolicy = bloom1.FilterPolicy(spec.bitsPerKey)
	}
	w := sst1.NewWriter(objp1.NewFileWritable(f), opts)
	for _, p := range tk.points {
		if err := w.Add(sst1.InternalKey{UserKey: p.key, Trailer: v1Trailer(p.seq, p.kind)}, p.value); err != nil {
			return err
		}
	}
	for _, d := range tk.rangeDels {
		if err := w.Add(sst1.InternalKey{UserKey: d.start, Trailer: v1Trailer(d.seq, kindRangeDelete)}, d.end); err != nil {
			return err
		}
	}
	// v1.1.5's Writer takes range keys at sequence number 0 only (as for
	// ingestion).
	for _, k := range tk.rangeKeys {
		switch k.kind {
		case kindRangeKeySet:
			err = w.RangeKeySet(k.start, k.end, k.suffix, k.value)
		case kindRangeKeyUns:
			err = w.RangeKeyUnset(k.start, k.end, k.suffix)
		default:
			err = w.RangeKeyDelete(k.start, k.end)
		}
		if err != nil {
			return err
		}
	}
	return w.Close()
}

// probeV1Table opens the table with v1.1.5's reader and asks, for every
// probe key, what a point lookup asks: SeekPrefixGE(prefix, key) on an
// iterator that uses the filter block, prefix = key[:Split(key)] (the
// whole key without Split). The answer is read off the reader's
// FilterMetricsTracker (Hits: the filter ruled the key out) and checked
// against bloom.FilterPolicy.MayContain on the filter block's bytes.
func probeV1Table(path string, spec tableSpec, tk *tableKeys) ([]probeAnswer, tableFacts, error) {
	var facts tableFacts
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, facts, err
	}
	f, err := vfs1.Default.Open(path)
	if err != nil {
		return nil, facts, err
	}
	readable, err := sst1.NewSimpleReadable(f)
	if err != nil {
		return nil, facts, err
	}
	cmp := v1Comparer(spec.cmp)
	policy := bloom1.FilterPolicy(10) // the name is the same for any bits per key
	tracker := &sst1.FilterMetricsTracker{}
	r, err := sst1.NewReader(readable, sst1.ReaderOptions{
		Comparer: cmp,
		Filters:  map[string]sst1.FilterPolicy{policy.Name(): policy},
	}, tracker)
	if err != nil {
		return nil, facts, err
	}
	defer r.Close()
	if tf, _ := r.TableFormat(); int(tf) != spec.format {
		return nil, facts, fmt.Errorf("reader says format %s, wrote %s", tf, formatNames[spec.format])
	}
	props := r.Properties
	if props.ComparerName != cmp.Name {
		return nil, facts, fmt.Errorf("comparer property %q", props.ComparerName)
	}
	layout, err := r.Layout()
	if err != nil {
		return nil, facts, err
	}
	facts.filterPolicy = props.FilterPolicyName
	facts.filterLen = -1
	facts.twoLevel = props.IndexPartitions > 0
	facts.indexPartitions = int(props.IndexPartitions)
	facts.dataBlocks = int(props.NumDataBlocks)
	facts.valueBlocks = int(props.NumValueBlocks)
	facts.valuesInVB = int(props.NumValuesInValueBlocks)
	facts.compressionProp = props.CompressionName
	hasFilter := props.FilterPolicyName != ""
	var filterData []byte
	if hasFilter {
		h := layout.Filter
		facts.filterLen = int(h.Length)
		filterData = data[h.Offset : h.Offset+h.Length]
		if data[h.Offset+h.Length] != 0 {
			return nil, facts, fmt.Errorf("filter block compressed (type %d)", data[h.Offset+h.Length])
		}
	}
	if (spec.bitsPerKey > 0) != hasFilter {
		return nil, facts, fmt.Errorf("filter policy property %q with bits per key %d", props.FilterPolicyName, spec.bitsPerKey)
	}
	it, err := r.NewIter(nil, nil)
	if err != nil {
		return nil, facts, err
	}
	defer it.Close()
	var answers []probeAnswer
	for _, k := range tk.probes {
		prefix := k
		if cmp.Split != nil {
			prefix = k[:cmp.Split(k)]
		}
		before := tracker.Load()
		it.SeekPrefixGE(prefix, k, sst1.SeekGEFlags(0))
		if err := it.Error(); err != nil {
			return nil, facts, err
		}
		after := tracker.Load()
		var direct *bool
		if hasFilter {
			d := policy.MayContain(sst1.TableFilter, filterData, prefix)
			direct = &d
		}
		a, err := answerFor(k, tk.written[string(k)], after.Hits-before.Hits, after.Misses-before.Misses, hasFilter, direct)
		if err != nil {
			return nil, facts, err
		}
		answers = append(answers, a)
	}
	return answers, facts, nil
}
