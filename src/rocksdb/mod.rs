//! RocksDB's block-based tables, read far enough to answer for their filters
//! as RocksDB does: the footer and block trailers (shared with LevelDB's, in
//! [`format`](crate::format)), the metaindex, the properties block, full and
//! partitioned filters of each implementation (LegacyBloom, FastLocalBloom,
//! Standard128Ribbon), the index and the data blocks a `Get` reads; and
//! RocksDB's filter builders, byte for byte. Which format versions are read
//! is in the README's table.
//!
//! ```text
//! data blocks | filter (full, or partitions then their index) | index | properties | metaindex | footer
//! ```
//!
//! What a filter answers is what RocksDB's `Get` decides from it: a key
//! ruled out is absent; a filter RocksDB cannot read (an unknown marker, a
//! block whose checksum fails) rules nothing out.
//!
//! ```no_run
//! use leveldb_filter::rocksdb::Table;
//! let bytes = std::fs::read("000012.sst")?;
//! let sst = Table::open(&bytes)?;
//! println!("format_version {}", sst.footer().format_version);
//! assert!(sst.key_may_match(b"a key the table holds"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod builders;
mod check;
mod filter;
mod get;
mod keys;
pub(crate) mod local;
mod lookup;
mod partitions;
mod props;
pub(crate) mod ribbon;
mod table;
mod xxph3;

pub use crate::format::{EntryKind, KeyEntry};
pub use builders::{FastLocalBloomBuilder, LegacyBloomBuilder};
pub use check::{FilterCheck, FilterReport, Verdict};
pub use ribbon::RibbonBuilder;

pub use filter::FilterBits;
pub use xxph3::hash64;

// RocksDB's full-filter builders as `FilterPolicy`s (see `RibbonBuilder`):
// `create_filter` appends the builder's bytes, `key_may_match` reads any
// full filter as RocksDB does, the name is the one RocksDB stores.
macro_rules! full_filter_policies {
    ($($builder:ty),*) => {$(
        impl crate::FilterPolicy for $builder {
            fn name(&self) -> &str {
                "rocksdb.BuiltinBloomFilter"
            }
            fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
                dst.extend_from_slice(&self.build(keys.iter().copied()));
            }
            fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
                FilterBits::parse(filter).may_match(key)
            }
        }
    )*};
}
full_filter_policies!(FastLocalBloomBuilder, LegacyBloomBuilder, RibbonBuilder);

pub use crate::format::{ChecksumType, Footer, FooterProblem, ROCKSDB_MAGIC};

/// The magic number of format_version 0, LevelDB's.
pub const LEGACY_MAGIC: u64 = crate::format::TABLE_MAGIC;

pub use keys::KeyStats;
pub use lookup::Lookup;
pub use partitions::{Partitions, SstFilter};
pub use table::Table;
