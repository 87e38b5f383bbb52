//! Any bytes as a table file (LevelDB's, then RocksDB's, then Pebble's), with checksums
//! checked and not: every step a
//! reader takes (footer, index, metaindex, filter block, a pass over the data
//! blocks, filter verification, probes) returns or errs, never panics, and
//! never holds more than a multiple of the input's size at once.
//!
//! The multiple: a reader holds at most the index, the filter block (and a
//! rebuilt filter no larger), one data block and two keys, each no larger
//! than one uncompressed block, and Snappy expands a block at most 22 times:
//! 160 times the input and 1 MiB for everything else. (For large files the
//! README's bound, 16 times plus 64 MiB, is the tighter one; here inputs are
//! small.)
#![no_main]

use leveldb_filter::pebble;
use leveldb_filter::rocksdb;
use leveldb_filter::rocksdb::{SstFilter};
use leveldb_filter::leveldb::Table;
use leveldb_filter::BloomFilterPolicy;
use leveldb_filter::leveldb::{probe, verify_filter, KeyFormat, VerifyOptions};
use libfuzzer_sys::fuzz_target;

use leveldb_filter_testkit::peak;

#[global_allocator]
static GLOBAL: peak::Peak = peak::Peak;

fn read(data: &[u8]) {
    // Checked, unchecked, and as LevelDB opens a table for lookups (what
    // `ldbfilter probe` reads damaged tables with).
    let tables = [
        Table::open(data),
        Table::open_unchecked(data),
        Table::open_for_lookups(data),
    ];
    for table in tables {
        let Ok(table) = table else { continue };
        if let Ok(stats) = table.key_stats() {
            for bits_per_key in [None, Some(usize::MAX)] {
                let options = VerifyOptions {
                    bits_per_key,
                    ..VerifyOptions::default()
                };
                let _ = verify_filter(&table, &stats, options);
            }
        }
        let policy = BloomFilterPolicy::new(10);
        for format in [KeyFormat::User, KeyFormat::Internal] {
            for key in [&b""[..], b"a", &data[..data.len().min(12)]] {
                let _ = probe(&table, Some(&policy), format, key);
            }
        }
    }
}

/// The same bytes as a RocksDB table: open, walk the keys, check the
/// filter, probe.
fn read_rocksdb(data: &[u8]) {
    let Ok(sst) = rocksdb::Table::open(data) else { return };
    let _ = sst.property("rocksdb.num.entries");
    let _ = sst.for_each_key(|_, _| ());
    let _ = sst.check_filter();
    if let Ok(Some(SstFilter::Partitioned(partitions))) = sst.filter() {
        let _ = partitions.filters();
    }
    // Lookups seek the index and the partition index as RocksDB does, and
    // keep the index partitions they read.
    for key in [&b""[..], b"a", &data[..data.len().min(12)]] {
        let _ = sst.key_may_match(key);
        let _ = sst.data_block_for(key);
    }
}

/// The same bytes as a Pebble table (row or columnar blocks): open, walk
/// the keys, check the filter, answer lookups.
fn read_pebble(data: &[u8]) {
    let Ok(table) = pebble::Table::open(data) else { return };
    let _ = table.walk();
    let _ = table.check_filter();
    for key in [&b""[..], b"a", &data[..data.len().min(12)]] {
        let _ = table.filter_answer(key);
        let _ = table.get_step(key);
    }
}

fuzz_target!(|data: &[u8]| {
    let ((), peak) = peak::peak_during(|| read(data));
    assert!(
        peak <= 160 * data.len() + (1 << 20),
        "{peak} bytes at peak for {} bytes of input",
        data.len()
    );
    // A RocksDB block may uncompress to 1032 times its size (deflate's
    // largest ratio) and 64 KiB; the walk holds one block at a time and the
    // index; lookups keep the index partitions they read (three here); no
    // block's entries are held, only its bytes and one key.
    let ((), peak) = peak::peak_during(|| read_rocksdb(data));
    assert!(
        peak <= 2200 * data.len() + (4 << 20),
        "{peak} bytes at peak for {} bytes of input as a RocksDB table",
        data.len()
    );
    // As a RocksDB table's: blocks uncompress within the same bounds, one
    // data block and the index (or one partition) held at a time, and the
    // metaindex and properties copied.
    let ((), peak) = peak::peak_during(|| read_pebble(data));
    assert!(
        peak <= 2200 * data.len() + (4 << 20),
        "{peak} bytes at peak for {} bytes of input as a Pebble table",
        data.len()
    );
});
