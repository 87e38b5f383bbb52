//! Tables whose index blocks hold one restart point over a great many
//! entries: one long restart interval, which a seek that scans from the
//! restart point (as RocksDB's and LevelDB's do) walks entry by entry, for
//! every key. RocksDB's are golden tables with an index, a two-level
//! index's top level and partition, or a partitioned filter's index
//! replaced (Zlib-compressed: a small file that inflates into the long
//! interval); LevelDB's are written whole. Each answers lookups as a
//! sorted table does: the keys `key{i:08}` are the separators.

use super::rocksdb::{full_entry, handle_bytes, zlib, Entry, Sst};
use leveldb_filter::format::BlockHandle;

/// A block of `entries` with one restart point, at its first: each entry
/// shares nothing (a whole key, a whole handle in every index layout);
/// without `value_lengths`, as an index of delta-encoded values.
pub fn one_interval(entries: &[Entry], value_lengths: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, value) in entries {
        full_entry(&mut out, key, value, value_lengths);
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    out
}

/// The user key `key{i:08}`, the keys' form in the golden tables.
pub fn user_key(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// `n` separators `key{i:08}` (internal keys, sequence 1, where
/// `internal`) each naming `h`.
fn separators(n: u64, internal: bool, h: BlockHandle) -> Vec<Entry> {
    (0..n)
        .map(|i| {
            let mut key = user_key(i);
            if internal {
                key.extend_from_slice(&(1u64 << 8 | 1).to_le_bytes());
            }
            (key, handle_bytes(h))
        })
        .collect()
}

/// RocksDB tables whose index blocks are each one restart interval:
/// `index-one-interval` (400,000 entries in a Zlib index),
/// `partitions-one-interval` (a two-level index whose top level and one
/// partition hold 200,000 entries each), `filter-index-one-interval` (a
/// partitioned filter's index of 200,000 entries, `kea{i:08}` but the
/// last, `kez…`, so that the table's keys all seek to the last).
pub fn rocksdb() -> Vec<(&'static str, Vec<u8>)> {
    let golden = |name: &str| {
        let path = crate::vectors::testdata().join(format!("rocksdb/{name}.sst"));
        Sst::new(&std::fs::read(path).unwrap())
    };
    let facts = |sst: &Sst| {
        let table = leveldb_filter::rocksdb::Table::open(&sst.bytes).unwrap();
        let internal = table.property_number("rocksdb.index.key.is.user.key") != Some(1);
        let delta = table.property_number("rocksdb.index.value.is.delta.encoded") == Some(1);
        (table.data_block_for(b"").unwrap().unwrap(), internal, delta)
    };
    let mut out = Vec::new();
    let mut sst = golden("legacybloom-fv3-zlib-xxhash");
    let (first, internal, delta) = facts(&sst);
    let index = one_interval(&separators(400_000, internal, first), !delta);
    sst.footer.index = sst.append(&zlib(&index), 2);
    out.push(("index-one-interval", sst.finish()));

    let mut sst = golden("fastbloom-fv5-partitioned-zstd-xxh3");
    let (first, internal, delta) = facts(&sst);
    let partition = one_interval(&separators(200_000, internal, first), !delta);
    let partition = sst.append(&zlib(&partition), 2);
    let top = one_interval(&separators(200_000, internal, partition), !delta);
    sst.footer.index = sst.append(&zlib(&top), 2);
    out.push(("partitions-one-interval", sst.finish()));

    let mut sst = golden("fastbloom-fv5-partitioned-zstd-xxh3");
    let (_, internal, delta) = facts(&sst);
    let name = b"partitionedfilter.rocksdb.BuiltinBloomFilter";
    let (stored, kind) = sst.stored(sst.meta(name));
    let first_filter = super::rocksdb::first_handle(stored, kind, delta);
    // Separators below every key of the table but the last, which is past
    // them all: each key's seek scans the whole interval.
    let mut index = separators(200_000, internal, first_filter);
    for (key, _) in &mut index {
        key[2] = b'a';
    }
    index.last_mut().unwrap().0[2] = b'z';
    let index = one_interval(&index, !delta);
    let h = sst.append(&zlib(&index), 2);
    sst.set_meta(name, handle_bytes(h));
    out.push(("filter-index-one-interval", sst.finish()));
    out
}

/// A LevelDB table of one data block (the keys `key{i:08}`, i < 1000)
/// whose index holds `n` separators `key{i:08}` in one restart interval,
/// each sharing its prefix with the one before (as LevelDB's own blocks
/// share them between restart points), all naming the data block.
pub fn leveldb(n: u64) -> Vec<u8> {
    use super::{block, keys_block, File};
    let mut file = File::default();
    let keys: Vec<Vec<u8>> = (0..1000).map(user_key).collect();
    let data = file.block(&keys_block(&keys, &vec![vec![]; keys.len()]), 0);
    let meta = file.block(&block(&[]), 0);
    let separators: Vec<Vec<u8>> = (0..n).map(user_key).collect();
    let mut entries = Vec::new();
    let mut previous: &[u8] = &[];
    for key in &separators {
        let shared = key.iter().zip(previous).take_while(|(a, b)| a == b).count();
        entries.push((shared as u32, &key[shared..], &data[..]));
        previous = key;
    }
    let index = file.block(&block(&entries), 0);
    file.finish(&meta, &index)
}
