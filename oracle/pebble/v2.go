// Pebble v2.1.7: table writer and reader.
package main

import (
	"context"
	"fmt"
	"os"

	pebble2 "github.com/cockroachdb/pebble/v2"
	bloom2 "github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/cockroachkvs"
	objp2 "github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/rangedel"
	"github.com/cockroachdb/pebble/v2/rangekey"
	sst2 "github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/sstable/block"
	"github.com/cockroachdb/pebble/v2/sstable/colblk"
	vfs2 "github.com/cockroachdb/pebble/v2/vfs"
)

// v2Comparer wraps a comparer's rules into a v2.1.7 Comparer: Pebble's
// DefaultComparer for the bytewise one, cockroachkvs.Comparer for
// CockroachDB's.
func v2Comparer(k cmpKind) *pebble2.Comparer {
	def := pebble2.DefaultComparer
	switch k {
	case cmpBytewise:
		return def
	case cmpCockroach:
		return &cockroachkvs.Comparer
	}
	cf := funcsOf(k)
	return &pebble2.Comparer{
		Compare:              cf.compare,
		Equal:                func(a, b []byte) bool { return cf.compare(a, b) == 0 },
		ComparePointSuffixes: cf.pointSuffixes,
		CompareRangeSuffixes: cf.rangeSuffixes,
		AbbreviatedKey:       func(key []byte) uint64 { return def.AbbreviatedKey(key[:cf.split(key)]) },
		FormatKey:            def.FormatKey,
		Separator:            separatorOnPrefixes(cf.split, def.Separator),
		Successor:            successorOnPrefixes(cf.split, def.Successor),
		ImmediateSuccessor:   func(dst, a []byte) []byte { return append(append(dst, a...), 0) },
		Split:                cf.split,
		Name:                 cf.name,
	}
}

// v2KeySchema is the key schema of columnar tables: CockroachDB's crdb1 for
// its comparer, DefaultKeySchema(comparer, 16) otherwise.
func v2KeySchema(k cmpKind) *colblk.KeySchema {
	if k == cmpCockroach {
		return &cockroachkvs.KeySchema
	}
	s := colblk.DefaultKeySchema(v2Comparer(k), 16)
	return &s
}

func v2Compression(name string) *sst2.CompressionProfile {
	switch name {
	case "none":
		return sst2.NoCompression
	case "snappy":
		return sst2.SnappyCompression
	case "zstd":
		return sst2.ZstdCompression
	case "minlz":
		return sst2.MinLZCompression
	}
	panic("v2: no compression " + name)
}

func v2Checksum(name string) block.ChecksumType {
	if name == "xxhash64" {
		return block.ChecksumTypeXXHash64
	}
	return block.ChecksumTypeCRC32c
}

func v2WriterOptions(spec tableSpec) sst2.WriterOptions {
	opts := sst2.WriterOptions{
		TableFormat: sst2.TableFormat(spec.format),
		Comparer:    v2Comparer(spec.cmp),
		Compression: v2Compression(spec.compression),
		Checksum:    v2Checksum(spec.checksum),
	}
	if spec.format >= fmtPebblev5 {
		opts.KeySchema = v2KeySchema(spec.cmp)
	}
	if spec.tiny {
		opts.BlockSize, opts.IndexBlockSize = 256, 256
	}
	if spec.bitsPerKey > 0 {
		opts.FilterPolicy = bloom2.FilterPolicy(spec.bitsPerKey)
	}
	return opts
}

func writeV2Table(path string, spec tableSpec, tk *tableKeys) error {
	f, err := vfs2.Default.Create(path, vfs2.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	w := sst2.NewRawWriter(objp2.NewFileWritable(f), v2WriterOptions(spec))
	for _, p := range tk.points {
		ik := pebble2.MakeInternalKey(p.key, pebble2.SeqNum(p.seq), pebble2.InternalKeyKind(p.kind))
		if err := w.Add(ik, p.value, false); err != nil {
			return err
		}
	}
	for _, d := range tk.rangeDels {
		span := sst2.Span{Start: d.start, End: d.end, Keys: []rangedel.Key{{
			Trailer: pebble2.MakeInternalKeyTrailer(pebble2.SeqNum(d.seq), pebble2.InternalKeyKindRangeDelete),
		}}}
		if err := w.EncodeSpan(span); err != nil {
			return err
		}
	}
	for _, k := range tk.rangeKeys {
		key := rangekey.Key{
			Trailer: pebble2.MakeInternalKeyTrailer(pebble2.SeqNum(k.seq), pebble2.InternalKeyKind(k.kind)),
			Suffix:  k.suffix,
			Value:   k.value,
		}
		if err := w.EncodeSpan(sst2.Span{Start: k.start, End: k.end, Keys: []rangekey.Key{key}}); err != nil {
			return err
		}
	}
	return w.Close()
}

// probeV2Table is probeV1Table for v2.1.7: the reader's iterator (NewIter
// uses the filter block whatever its size), SeekPrefixGE(key[:Split(key)],
// key), the answer read off the FilterMetricsTracker and checked against
// MayContain on the filter block's bytes.
func probeV2Table(path string, spec tableSpec, tk *tableKeys) ([]probeAnswer, tableFacts, error) {
	var facts tableFacts
	ctx := context.Background()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, facts, err
	}
	f, err := vfs2.Default.Open(path)
	if err != nil {
		return nil, facts, err
	}
	readable, err := sst2.NewSimpleReadable(f)
	if err != nil {
		return nil, facts, err
	}
	cmp := v2Comparer(spec.cmp)
	policy := bloom2.FilterPolicy(10)
	tracker := &sst2.FilterMetricsTracker{}
	ro := sst2.ReaderOptions{
		Comparer:             cmp,
		Filters:              map[string]sst2.FilterPolicy{policy.Name(): policy},
		FilterMetricsTracker: tracker,
		KeySchemas:           sst2.MakeKeySchemas(v2KeySchema(spec.cmp)),
	}
	r, err := sst2.NewReader(ctx, readable, ro)
	if err != nil {
		return nil, facts, err
	}
	defer r.Close()
	if tf, _ := r.TableFormat(); int(tf) != spec.format {
		return nil, facts, fmt.Errorf("reader says format %s, wrote %s", tf, formatNames[spec.format])
	}
	props, err := r.ReadPropertiesBlock(ctx, nil)
	if err != nil {
		return nil, facts, err
	}
	if props.ComparerName != cmp.Name {
		return nil, facts, fmt.Errorf("comparer property %q", props.ComparerName)
	}
	layout, err := r.Layout()
	if err != nil {
		return nil, facts, err
	}
	facts.filterPolicy = props.FilterPolicyName
	facts.filterLen = -1
	facts.keySchema = props.KeySchemaName
	facts.twoLevel = props.IndexPartitions > 0
	facts.indexPartitions = int(props.IndexPartitions)
	facts.dataBlocks = int(props.NumDataBlocks)
	facts.valueBlocks = int(props.NumValueBlocks)
	facts.valuesInVB = int(props.NumValuesInValueBlocks)
	facts.compressionProp = props.CompressionName
	hasFilter := props.FilterPolicyName != ""
	var filterData []byte
	if hasFilter {
		h, ok := layout.FilterByName("fullfilter." + policy.Name())
		if !ok {
			return nil, facts, fmt.Errorf("filter policy %q but no filter block", props.FilterPolicyName)
		}
		facts.filterLen = int(h.Length)
		filterData = data[h.Offset : h.Offset+h.Length]
		if data[h.Offset+h.Length] != 0 {
			return nil, facts, fmt.Errorf("filter block compressed (type %d)", data[h.Offset+h.Length])
		}
	} else if len(layout.Filter) != 0 {
		return nil, facts, fmt.Errorf("filter block without filter policy")
	}
	if (spec.bitsPerKey > 0) != hasFilter {
		return nil, facts, fmt.Errorf("filter policy property %q with bits per key %d", props.FilterPolicyName, spec.bitsPerKey)
	}
	it, err := r.NewIter(sst2.NoTransforms, nil, nil, sst2.AssertNoBlobHandles)
	if err != nil {
		return nil, facts, err
	}
	defer it.Close()
	var answers []probeAnswer
	for _, k := range tk.probes {
		prefix := k[:cmp.Split(k)]
		before := tracker.Load()
		it.SeekPrefixGE(prefix, k, 0)
		if err := it.Error(); err != nil {
			return nil, facts, err
		}
		after := tracker.Load()
		var direct *bool
		if hasFilter {
			d := policy.MayContain(sst2.TableFilter, filterData, prefix)
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
