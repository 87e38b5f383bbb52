//! Hostile tables, crafted byte by byte with valid checksums, so that every
//! number a reader takes from a file can be set: filter sizes and k bytes,
//! offset arrays, restart counts, block handles, Snappy lengths, keys that
//! expand through shared prefixes, policy names. Each one is a table LevelDB
//! would open; what it says is what a reader must not trust.

pub mod intervals;
pub mod rocksdb;

use crate::reference::filter_block;

/// The stated bound on what a table makes a reader allocate: 16 times the
/// file's size plus 64 MiB.
pub fn bound(file_len: usize) -> usize {
    16 * file_len + (64 << 20)
}

/// The crafted table called `name` (of [`all`]).
pub fn named(name: &str) -> Vec<u8> {
    all().into_iter().find(|(n, _)| *n == name).unwrap().1
}

/// Appends `v` as a varint.
pub fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A block handle's bytes.
pub fn handle(offset: u64, size: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, offset);
    varint(&mut out, size);
    out
}

/// A block of entries `(shared, unshared bytes, value)`, with restart points
/// at `restarts` (offsets) and then `num_restarts` as its count.
pub fn block_with_restarts(
    entries: &[(u32, &[u8], &[u8])],
    restarts: &[u32],
    num_restarts: u32,
) -> Vec<u8> {
    let mut block = Vec::new();
    for (shared, unshared, value) in entries {
        varint(&mut block, u64::from(*shared));
        varint(&mut block, unshared.len() as u64);
        varint(&mut block, value.len() as u64);
        block.extend_from_slice(unshared);
        block.extend_from_slice(value);
    }
    for r in restarts {
        block.extend_from_slice(&r.to_le_bytes());
    }
    block.extend_from_slice(&num_restarts.to_le_bytes());
    block
}

/// A block of entries with one restart point, at 0.
pub fn block(entries: &[(u32, &[u8], &[u8])]) -> Vec<u8> {
    block_with_restarts(entries, &[0], 1)
}

/// A block of whole keys with empty values, each its own restart point (as
/// LevelDB writes index blocks).
pub fn keys_block(keys: &[Vec<u8>], values: &[Vec<u8>]) -> Vec<u8> {
    let mut entries = Vec::new();
    let mut restarts = Vec::new();
    let mut at = 0u32;
    for (key, value) in keys.iter().zip(values) {
        restarts.push(at);
        let mut e = Vec::new();
        varint(&mut e, 0);
        varint(&mut e, key.len() as u64);
        varint(&mut e, value.len() as u64);
        at += (e.len() + key.len() + value.len()) as u32;
        entries.push((0, key.as_slice(), value.as_slice()));
    }
    block_with_restarts(&entries, &restarts, restarts.len() as u32)
}

/// A table file being written: blocks with valid trailers, then the footer.
#[derive(Default)]
pub struct File {
    pub bytes: Vec<u8>,
}

impl File {
    /// Appends `contents` with a trailer of compression `kind` and a valid
    /// CRC-32C; returns its handle's bytes.
    pub fn block(&mut self, contents: &[u8], kind: u8) -> Vec<u8> {
        let h = handle(self.bytes.len() as u64, contents.len() as u64);
        self.bytes.extend_from_slice(contents);
        self.bytes.push(kind);
        let crc = crc32c::crc32c_append(crc32c::crc32c(contents), &[kind]);
        let masked = crc.rotate_right(15).wrapping_add(0xa282ead8);
        self.bytes.extend_from_slice(&masked.to_le_bytes());
        h
    }

    /// Zero bytes up to `offset`, which no block covers.
    pub fn pad_to(&mut self, offset: usize) {
        self.bytes.resize(offset.max(self.bytes.len()), 0);
    }

    /// The footer, from two handles' bytes (each at most 20).
    pub fn finish(mut self, metaindex: &[u8], index: &[u8]) -> Vec<u8> {
        let mut footer = [metaindex, index].concat();
        footer.resize(40, 0);
        footer.extend_from_slice(&0xdb4775248b80fb57u64.to_le_bytes());
        self.bytes.extend_from_slice(&footer);
        self.bytes
    }
}

/// A table of uncompressed data blocks, each at the offset given (zeros fill
/// a gap) holding the keys given, then the filter block
/// (when given, under the metaindex key `filter.<name>`), the metaindex and
/// an index whose separators are each block's last key.
pub fn table(blocks: &[(usize, Vec<Vec<u8>>)], filter: Option<(&[u8], &[u8])>) -> Vec<u8> {
    let mut file = File::default();
    let mut index_keys = Vec::new();
    let mut handles = Vec::new();
    for (offset, keys) in blocks {
        file.pad_to(*offset);
        let empty = vec![Vec::new(); keys.len()];
        handles.push(file.block(&keys_block(keys, &empty), 0));
        index_keys.push(keys.last().cloned().unwrap_or_default());
    }
    let meta = match filter {
        Some((name, contents)) => {
            let h = file.block(contents, 0);
            let key = [&b"filter."[..], name].concat();
            block(&[(0, &key, &h)])
        }
        None => block(&[]),
    };
    let meta = file.block(&meta, 0);
    let index = file.block(&keys_block(&index_keys, &handles), 0);
    file.finish(&meta, &index)
}

/// A table of one data block stored as `contents` with compression `kind`,
/// an empty metaindex and an index entry pointing to the block.
pub fn one_block(contents: &[u8], kind: u8) -> Vec<u8> {
    let mut file = File::default();
    let data = file.block(contents, kind);
    let meta = file.block(&block(&[]), 0);
    let index = file.block(&block(&[(0, &[0xff; 8], &data)]), 0);
    file.finish(&meta, &index)
}

/// `n` distinct 8-byte keys from `from`, ascending.
pub fn keys(from: u64, n: u64) -> Vec<Vec<u8>> {
    (from..from + n).map(|i| i.to_be_bytes().to_vec()).collect()
}

/// A block whose first key is `len` bytes and whose `copies` next entries
/// each share all of it: a few bytes each in the file, `len` bytes each once
/// expanded.
pub fn key_bomb(len: usize, copies: usize, value: &[u8]) -> Vec<u8> {
    let long = vec![b'k'; len];
    let mut entries: Vec<(u32, &[u8], &[u8])> = vec![(0, &long, value)];
    entries.extend(std::iter::repeat_n((len as u32, &b""[..], value), copies));
    block(&entries)
}

/// Every crafted table, by name: what each claims is noted beside it.
pub fn all() -> Vec<(&'static str, Vec<u8>)> {
    let mut tables = Vec::new();

    // 10,000 keys in filter 0, stored empty, then one key whose filter is
    // 400 KB with k = 30: "3.2 million bits per key", which makes filter 0
    // 4 GB. (The one key goes to the filter after the last one cut, as in
    // LevelDB's builder: the first block's end, in 2 KiB units.)
    let first_end = keys_block(&keys(0, 10_000), &vec![vec![]; 10_000]).len() + 5;
    for (name, big_len) in [
        ("huge-bits-per-key", 400_000),
        ("large-bits-per-key", 10_000),
    ] {
        let big: Vec<u8> = [vec![0x55; big_len], vec![30]].concat();
        let mut filters: Vec<&[u8]> = vec![&[]; first_end >> 11];
        filters.push(&big);
        tables.push((
            name,
            table(
                &[(0, keys(0, 10_000)), (first_end, keys(20_000, 1))],
                Some((b"leveldb.BuiltinBloomFilter2", &filter_block(&filters))),
            ),
        ));
    }

    // An offset array of 250,000 empty filters for a table of one.
    let empties: Vec<&[u8]> = vec![&[]; 250_000];
    tables.push((
        "many-filters",
        table(
            &[(0, keys(0, 3))],
            Some((b"leveldb.BuiltinBloomFilter2", &filter_block(&empties))),
        ),
    ));

    // A data block of a 64 KiB key and 200,000 entries sharing all of it:
    // 13 GB of keys.
    tables.push((
        "data-key-bomb",
        one_block(&key_bomb(65_536, 200_000, b""), 0),
    ));

    // The same in the index, every entry pointing to one data block.
    let mut file = File::default();
    let data = file.block(&keys_block(&keys(0, 4), &vec![vec![]; 4]), 0);
    let meta = file.block(&block(&[]), 0);
    let index = file.block(&key_bomb(65_536, 200_000, &data), 0);
    tables.push(("index-key-bomb", file.finish(&meta, &index)));

    // And in the metaindex, before its filter entry.
    let mut file = File::default();
    let data = file.block(&keys_block(&keys(0, 4), &vec![vec![]; 4]), 0);
    let meta = file.block(&key_bomb(65_536, 200_000, b""), 0);
    let index = file.block(&block(&[(0, &[0xff; 8], &data)]), 0);
    tables.push(("metaindex-key-bomb", file.finish(&meta, &index)));

    // 16 MiB of zeros in one Snappy block of about 750 KB.
    let zeros = keys_block(&[vec![0; 16 << 20]], &[vec![]]);
    let compressed = snap::raw::Encoder::new().compress_vec(&zeros).unwrap();
    tables.push(("snappy-expands", one_block(&compressed, 1)));

    // A Snappy block whose length header claims 4 GiB.
    let mut claim = Vec::new();
    varint(&mut claim, u64::from(u32::MAX));
    claim.extend_from_slice(&[0; 64]);
    tables.push(("snappy-claims-4g", one_block(&claim, 1)));

    // A restart count of 2^32 - 1 in a data block.
    let restarts = block_with_restarts(&[(0, b"a", b"")], &[0], u32::MAX);
    tables.push(("restart-count", one_block(&restarts, 0)));

    // An index of 100,000 entries all pointing to one data block.
    let mut file = File::default();
    let data = file.block(&keys_block(&keys(0, 4), &vec![vec![]; 4]), 0);
    let meta = file.block(&block(&[]), 0);
    let index = file.block(&keys_block(&keys(0, 100_000), &vec![data; 100_000]), 0);
    tables.push(("repeated-handles", file.finish(&meta, &index)));

    // A data block handle of 2^64 - 1 bytes.
    let mut file = File::default();
    let meta = file.block(&block(&[]), 0);
    let index = file.block(&block(&[(0, &[0xff; 8], &handle(0, u64::MAX))]), 0);
    tables.push(("handle-past-end", file.finish(&meta, &index)));

    // A policy name holding a line of its own.
    let name = b"leveldb.BuiltinBloomFilter2\nFAKE: OK";
    let filter = filter_block(&[&[0x55; 10]]);
    tables.push((
        "newline-in-name",
        table(&[(0, keys(0, 3))], Some((name, &filter))),
    ));
    tables
}
