//! The block-based table format the LevelDB family shares: the footer and
//! the magic numbers that tell the engines apart, block handles, the 5-byte
//! block trailer and its checksums, which block is which, how a block is
//! stored and uncompressed, where a table's bytes come from (memory, or a
//! file read by block), blocks read within stated bounds (LevelDB's block
//! reader, and the cursor with RocksDB's seek, which later formats of the
//! family keep), internal keys and key orders, what a `Get` meets at one
//! table, the keys a false-positive rate is measured on, and what can be
//! wrong. [`leveldb`](crate::leveldb) and [`rocksdb`](crate::rocksdb) build
//! on it; it builds on nothing of theirs.

use std::fmt;

mod block;
mod checkpoints;
mod checksum;
mod codecs;
mod cursor;
mod entry;
mod error;
mod footer;
mod internal_key;
mod minlz;
mod neighbours;
mod order;
mod source;

pub use error::{Corruption, Error, Field, FooterProblem, Limit};
// RocksDB's compressed blocks alone (the `codecs` feature) need `too_large` here.
#[cfg(feature = "codecs")]
pub(crate) use block::too_large;
pub(crate) use block::{
    kept_block, snappy, stored_block, uncompressed_limit, unmask, BlockCheckpoints,
};
pub use block::{Block, BlockIter, Entry, KEY_EXPANSION, MAX_SNAPPY_EXPANSION};
pub use checksum::ChecksumType;
pub(crate) use checksum::{checked_block, read_block};
pub(crate) use codecs::uncompress;
pub(crate) use cursor::{for_each_internal_key, for_each_user_key, Checkpoints, Cursor, Layout};
pub use entry::{EntryKind, KeyEntry, TableStep};
pub(crate) use footer::{find_meta, MAGICS};
pub use footer::{Footer, LEVELDB_FOOTER_LEN, MAX_FOOTER_LEN, ROCKSDB_FOOTER_LEN};
pub use footer::{PEBBLE_MAGIC, ROCKSDB_MAGIC, TABLE_MAGIC};
pub(crate) use internal_key::{seek_tag, user_key_if};
pub use internal_key::{user_key, MAX_SEQUENCE};
// The MinLZ decoder is public for the fuzz target alone: not the crate's API.
#[doc(hidden)]
pub use minlz::decode as minlz_decode;
pub(crate) use minlz::minlz_block;
pub use neighbours::MeasuredFpr;
pub(crate) use neighbours::Neighbours;
pub use order::KeyOrder;
pub(crate) use order::{without_timestamp, KNOWN_COMPARATORS};
pub use source::{Source, TableFile};

/// Length of the trailer after each block: compression type and masked CRC-32C.
pub const BLOCK_TRAILER_LEN: u64 = 5;

/// Where a block lies in the file: its contents, without the 5-byte trailer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockHandle {
    /// Offset of the block in the file.
    pub offset: u64,
    /// Length of the block's contents (the trailer follows).
    pub size: u64,
}

impl BlockHandle {
    /// Decodes two varint64s from the front of `input`, and returns what follows.
    pub fn decode(input: &[u8]) -> Option<(BlockHandle, &[u8])> {
        let (offset, rest) = varint64(input)?;
        let (size, rest) = varint64(rest)?;
        Some((BlockHandle { offset, size }, rest))
    }
}

impl fmt::Display for BlockHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "offset {} size {}", self.offset, self.size)
    }
}

/// Which block of a table, for errors and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BlockKind {
    /// A data block: the table's keys and values.
    Data,
    /// The index block: one entry per data block.
    Index,
    /// The metaindex block: names the filter block.
    Metaindex,
    /// The filter block (or a partition of a partitioned filter).
    Filter,
    /// A RocksDB table's properties block.
    Properties,
    /// A RocksDB partitioned filter's index of partitions.
    FilterIndex,
    /// A RocksDB table's compression dictionary.
    Dictionary,
    /// A RocksDB table's range tombstones (`rocksdb.range_del`).
    RangeDeletion,
}

impl fmt::Display for BlockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BlockKind::Data => "data block",
            BlockKind::Index => "index block",
            BlockKind::Metaindex => "metaindex block",
            BlockKind::Filter => "filter block",
            BlockKind::Properties => "properties block",
            BlockKind::FilterIndex => "filter partition index",
            BlockKind::Dictionary => "compression dictionary",
            BlockKind::RangeDeletion => "range deletion block",
        })
    }
}

/// A block's compression type, from its trailer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Compression {
    /// Type 0: stored as is.
    None,
    /// Type 1: Snappy.
    Snappy,
    /// RocksDB's type 2: raw deflate.
    Zlib,
    /// RocksDB's type 3: a bzip2 stream.
    Bzip2,
    /// RocksDB's types 4 and 5: an LZ4 block (LZ4 and LZ4HC).
    Lz4,
    /// RocksDB's types 7 and 0x40: a Zstandard frame.
    Zstd,
    /// Pebble's type 8 (Pebblev6 and later): a MinLZ block.
    MinLz,
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "none",
            Compression::Snappy => "snappy",
            Compression::Zlib => "zlib",
            Compression::Bzip2 => "bzip2",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
            Compression::MinLz => "minlz",
        })
    }
}

pub(crate) fn varint32(input: &[u8]) -> Option<(u32, &[u8])> {
    let (value, rest) = varint(input, 5)?;
    Some((value as u32, rest))
}

pub(crate) fn varint64(input: &[u8]) -> Option<(u64, &[u8])> {
    varint(input, 10)
}

/// LevelDB's varint decoding: 7 bits a byte, little end first, at most
/// `max_len` bytes; bits past the width are dropped as LevelDB drops them.
fn varint(input: &[u8], max_len: usize) -> Option<(u64, &[u8])> {
    let mut value = 0u64;
    for (i, &byte) in input.iter().take(max_len).enumerate() {
        value |= u64::from(byte & 0x7f).wrapping_shl(7 * i as u32);
        if byte & 0x80 == 0 {
            return Some((value, &input[i + 1..]));
        }
    }
    None
}

thread_local! {
    /// Entries this thread's cursors have decoded.
    static DECODED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one entry decoded by a block cursor.
pub(crate) fn count_decoded() {
    DECODED.with(|n| n.set(n.get().wrapping_add(1)));
}

/// How many block entries the lookups and walks of the calling thread have
/// decoded so far (RocksDB's, Pebble's row blocks' and LevelDB's cursors):
/// a measure of a lookup's work that does not depend on the machine, which
/// `tests/it/lookup_work.rs` bounds per key.
pub fn entries_decoded() -> u64 {
    DECODED.with(std::cell::Cell::get)
}
