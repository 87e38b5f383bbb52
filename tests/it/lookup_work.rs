//! A lookup's work is bounded by the key and the blocks it reads, not by a
//! block's shape: against tables whose index blocks are one restart
//! interval of 200,000 to 400,000 entries (`crafted/intervals.rs`), which
//! a seek scanning from the restart point walks for every key, 100,000
//! lookups decode a few dozen entries each beyond each block's one walk
//! (its checkpoints made). Counted in entries decoded
//! ([`leveldb_filter::format::entries_decoded`]), not in time.

use crate::crafted::intervals;
use leveldb_filter::format::entries_decoded;
use leveldb_filter::rocksdb::Table;

/// Lookups made against each table.
const KEYS: u64 = 100_000;

/// Entries a lookup may decode per index block it seeks (the restart
/// entry, at most 16 scanned past a checkpoint, the next one), twice over
/// for a partitioned filter's seek and its look at the next entry.
const PER_BLOCK: u64 = 40;

/// The `i`th key asked: spread over the separators' range and past it.
fn key(i: u64) -> Vec<u8> {
    intervals::user_key(i * 7919 % 450_000)
}

#[test]
fn lookups_in_long_restart_intervals_decode_a_bounded_number_of_entries() {
    for (name, bytes) in intervals::rocksdb() {
        let table = Table::open(&bytes[..]).unwrap();
        // The crafted blocks' entries: each walked once to make its
        // checkpoints, once more where the open or the filter walks it.
        let once: u64 = match name {
            "index-one-interval" => 400_000,
            "partitions-one-interval" => 2 * 200_000,
            _ => 200_000,
        };
        let blocks = match name {
            "partitions-one-interval" => 2,
            _ => 1,
        };
        let start = entries_decoded();
        let mut found = 0;
        for i in 0..KEYS {
            let key = key(i);
            let block = table.data_block_for(&key).unwrap();
            found += u64::from(block.is_some());
            table.key_may_match(&key);
        }
        let decoded = entries_decoded() - start;
        let bound = 2 * once + 2 * blocks * PER_BLOCK * KEYS;
        assert!(
            decoded <= bound,
            "{name}: {decoded} entries decoded for {KEYS} keys (bound {bound})"
        );
        // The answers of a sorted index: a block up to the last separator
        // (the golden table's own, for the filter's case: at least its keys).
        let below = |last| (0..KEYS).filter(|&i| i * 7919 % 450_000 < last).count() as u64;
        match name {
            "index-one-interval" => assert_eq!(found, below(400_000), "{name}"),
            "partitions-one-interval" => assert_eq!(found, below(200_000), "{name}"),
            _ => assert!(found >= below(1_199), "{name}: {found}"),
        }
    }
}

/// The first lookup walks the index once (its checkpoints made); the next
/// ones decode a few entries each.
#[test]
fn the_first_lookup_walks_the_long_interval_once() {
    let (name, bytes) = intervals::rocksdb().swap_remove(0);
    assert_eq!(name, "index-one-interval");
    let table = Table::open(&bytes[..]).unwrap();
    let start = entries_decoded();
    table.data_block_for(&key(1)).unwrap();
    let first = entries_decoded() - start;
    assert!((400_000..=400_000 + PER_BLOCK).contains(&first), "{first}");
    for i in 2..100 {
        let start = entries_decoded();
        table.data_block_for(&key(i)).unwrap();
        let decoded = entries_decoded() - start;
        assert!(decoded <= PER_BLOCK, "key {i}: {decoded}");
    }
}

/// LevelDB's index seek scans from its restart point on past the next
/// one: against an index of one restart interval of 400,000 entries
/// (sharing prefixes, as LevelDB writes them), each lookup decodes a few
/// entries beyond the index's one walk, and answers as the sorted index
/// does and as the seek without checkpoints does.
#[test]
fn leveldb_lookups_in_a_long_restart_interval_decode_a_bounded_number_of_entries() {
    use leveldb_filter::leveldb::{entry_type, probe, KeyFormat, Probe, Table};
    let bytes = intervals::leveldb(400_000);
    let table = Table::open(&bytes[..]).unwrap();
    let data = table.index_entries().next().unwrap().unwrap().handle.offset;
    let start = entries_decoded();
    for i in 0..KEYS {
        let n = i * 7919 % 450_000;
        let found = probe(&table, None, KeyFormat::User, &intervals::user_key(n)).unwrap();
        let expected = match n < 400_000 {
            true => Probe::Block {
                offset: data,
                may_match: true,
            },
            false => Probe::PastLastKey,
        };
        assert_eq!(found, expected, "key {n}");
    }
    let decoded = entries_decoded() - start;
    let bound = 400_000 + PER_BLOCK * KEYS;
    assert!(
        decoded <= bound,
        "{decoded} entries decoded (bound {bound})"
    );
    // The data block's 1,000 keys, read for keys the index sends there.
    for n in [0, 999, 1_000, 399_999] {
        let start = entries_decoded();
        let entry = entry_type(&table, KeyFormat::User, &intervals::user_key(n)).unwrap();
        assert_eq!(entry, (n < 1_000).then_some(1), "key {n}");
        assert!(entries_decoded() - start <= PER_BLOCK + 1_000, "key {n}");
    }
    // What the seek without checkpoints finds, for a few keys (it scans
    // the interval for each).
    for n in [0, 123_456, 399_999, 400_000] {
        let target = intervals::user_key(n);
        let mut plain = table.index_block().entries();
        plain.seek(&target, <[u8]>::cmp);
        let found = probe(&table, None, KeyFormat::User, &target).unwrap();
        let offset = plain.valid().then_some(data);
        match found {
            Probe::Block { offset: at, .. } => assert_eq!(Some(at), offset, "key {n}"),
            Probe::PastLastKey => assert_eq!(None, offset, "key {n}"),
        }
        if plain.valid() {
            assert_eq!(plain.key(), &target[..], "key {n}");
        }
    }
}
