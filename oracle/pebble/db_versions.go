// Pebble v1.1.5 and v2.1.7 databases behind dbDriver.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	pebble1 "github.com/cockroachdb/pebble"
	bloom1 "github.com/cockroachdb/pebble/bloom"
	pebble2 "github.com/cockroachdb/pebble/v2"
	bloom2 "github.com/cockroachdb/pebble/v2/bloom"
	objp2 "github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	sst2 "github.com/cockroachdb/pebble/v2/sstable"
	vfs2 "github.com/cockroachdb/pebble/v2/vfs"
)

// quietLogger drops Pebble's informational messages.
type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{}) {}
func (quietLogger) Errorf(f string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "pebble: "+f+"\n", a...)
}
func (quietLogger) Fatalf(f string, a ...interface{}) { panic(fmt.Sprintf(f, a...)) }

// openV1 opens a v1.1.5 database with go-ethereum's options (bloom 10 on
// every level; default 4 KiB blocks, Snappy, bytewise comparer), small
// sizes, at FormatMostCompatible (go-ethereum's: it never sets one) or
// FormatNewest.
func openV1(dir string, newest, auto, readOnly bool) (*dbDriver, error) {
	opts := &pebble1.Options{
		MemTableSize:                dbMemTableSize,
		LBaseMaxBytes:               dbLBaseMaxBytes,
		DisableAutomaticCompactions: !auto,
		ReadOnly:                    readOnly,
		Logger:                      quietLogger{},
	}
	if newest {
		opts.FormatMajorVersion = pebble1.FormatNewest
	}
	opts.Levels = make([]pebble1.LevelOptions, 7)
	for i := range opts.Levels {
		opts.Levels[i] = pebble1.LevelOptions{
			BlockSize:      4096,
			IndexBlockSize: 4096,
			Compression:    pebble1.SnappyCompression,
			FilterPolicy:   bloom1.FilterPolicy(10),
			FilterType:     pebble1.TableFilter,
			TargetFileSize: dbTargetFileSize,
		}
	}
	opts.Experimental.ReadSamplingMultiplier = -1 // as go-ethereum
	db, err := pebble1.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return &dbDriver{
		set:      func(k, v []byte) error { return db.Set(k, v, pebble1.NoSync) },
		del:      func(k []byte) error { return db.Delete(k, pebble1.NoSync) },
		delRange: func(a, b []byte) error { return db.DeleteRange(a, b, pebble1.NoSync) },
		flush:    db.Flush,
		get: func(k []byte) (bool, error) {
			_, closer, err := db.Get(k)
			if errors.Is(err, pebble1.ErrNotFound) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			return true, closer.Close()
		},
		filterHits: func() int64 { return db.Metrics().Filter.Hits },
		busy: func() bool {
			m := db.Metrics()
			return m.Compact.NumInProgress > 0 || m.Flush.NumInProgress > 0
		},
		sstables: func() ([]liveTable, error) {
			levels, err := db.SSTables()
			if err != nil {
				return nil, err
			}
			var out []liveTable
			for l, ts := range levels {
				for _, t := range ts {
					out = append(out, liveTable{
						level: l, num: uint64(t.FileNum), size: t.Size,
						smallest: t.Smallest.UserKey, largest: t.Largest.UserKey,
						smallSeq: t.SmallestSeqNum, bigSeq: t.LargestSeqNum,
						virtual: t.Virtual, backing: uint64(t.BackingSSTNum),
					})
				}
			}
			return out, nil
		},
		close: db.Close,
		describe: func() string {
			return fmt.Sprintf("Pebble %s, format major version %d (%s), tables %s", v1Version,
				db.FormatMajorVersion(), db.FormatMajorVersion(), formatNames[db.FormatMajorVersion().MaxTableFormat()])
		},
	}, nil
}

// openV2 opens a v2.1.7 database: go-ethereum's options as for v1, at
// FormatNewest.
func openV2(dir string, auto, readOnly bool) (*dbDriver, error) {
	opts := &pebble2.Options{
		FormatMajorVersion:          pebble2.FormatNewest,
		MemTableSize:                dbMemTableSize,
		LBaseMaxBytes:               dbLBaseMaxBytes,
		DisableAutomaticCompactions: !auto,
		ReadOnly:                    readOnly,
		Logger:                      quietLogger{},
	}
	for i := range opts.Levels {
		opts.Levels[i] = pebble2.LevelOptions{
			BlockSize:      4096,
			IndexBlockSize: 4096,
			Compression:    func() *sst2.CompressionProfile { return sst2.SnappyCompression },
			FilterPolicy:   bloom2.FilterPolicy(10),
			FilterType:     pebble2.TableFilter,
		}
		opts.TargetFileSizes[i] = dbTargetFileSize
	}
	opts.Experimental.ReadSamplingMultiplier = -1
	db, err := pebble2.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	return &dbDriver{
		set:      func(k, v []byte) error { return db.Set(k, v, pebble2.NoSync) },
		del:      func(k []byte) error { return db.Delete(k, pebble2.NoSync) },
		delRange: func(a, b []byte) error { return db.DeleteRange(a, b, pebble2.NoSync) },
		flush:    db.Flush,
		get: func(k []byte) (bool, error) {
			_, closer, err := db.Get(k)
			if errors.Is(err, pebble2.ErrNotFound) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			return true, closer.Close()
		},
		filterHits: func() int64 { return db.Metrics().Filter.Hits },
		busy: func() bool {
			m := db.Metrics()
			return m.Compact.NumInProgress > 0 || m.Flush.NumInProgress > 0
		},
		sstables: func() ([]liveTable, error) {
			levels, err := db.SSTables()
			if err != nil {
				return nil, err
			}
			var out []liveTable
			for l, ts := range levels {
				for _, t := range ts {
					out = append(out, liveTable{
						level: l, num: uint64(t.FileNum), size: t.Size,
						smallest: t.Smallest.UserKey, largest: t.Largest.UserKey,
						smallSeq: uint64(t.SmallestSeqNum), bigSeq: uint64(t.LargestSeqNum),
						virtual: t.Virtual, backing: uint64(t.BackingSSTNum),
					})
				}
			}
			return out, nil
		},
		close: db.Close,
		ingestAndExcise: func(tmpDir string, keys, values [][]byte, start, end []byte) error {
			path := filepath.Join(tmpDir, "ingest.sst")
			f, err := vfs2.Default.Create(path, vfs2.WriteCategoryUnspecified)
			if err != nil {
				return err
			}
			w := sst2.NewWriter(objp2.NewFileWritable(f), sst2.WriterOptions{
				TableFormat:  db.TableFormat(),
				BlockSize:    4096,
				Compression:  sst2.SnappyCompression,
				FilterPolicy: bloom2.FilterPolicy(10),
			})
			for i, k := range keys {
				if err := w.Set(k, values[i]); err != nil {
					return err
				}
			}
			if err := w.Close(); err != nil {
				return err
			}
			defer os.Remove(path)
			// The memtable holds nothing in the span (everything is
			// flushed), so no flush is forced.
			_, err = db.IngestAndExcise(ctx, []string{path}, nil, nil, pebble2.KeyRange{Start: start, End: end})
			return err
		},
		describe: func() string {
			return fmt.Sprintf("Pebble %s, format major version %d (%s), tables %s", v2Version,
				db.FormatMajorVersion(), db.FormatMajorVersion(), formatNames[db.TableFormat()])
		},
	}, nil
}
