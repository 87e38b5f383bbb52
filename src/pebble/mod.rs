//! Pebble's tables (github.com/cockroachdb/pebble: CockroachDB's and
//! go-ethereum's engine): the format decided from the footer, the filter
//! (RocksDB's legacy full filter over each key's `Split` prefix) read as
//! Pebble's reader reads it, checked against the table's keys and asked
//! as Pebble's `Get` asks it.
//!
//! ```no_run
//! use leveldb_filter::pebble::Table;
//! let file = leveldb_filter::format::TableFile::open("000005.sst")?;
//! let table = Table::open(&file)?;
//! println!("{} {:?}", table.format(), table.check_filter()?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod blocks;
mod check;
pub(crate) mod colblk;
mod columnar;
mod comparer;
mod filter;
mod get;
mod keys;
mod props;
mod table;
mod tombstones;

pub use comparer::Comparer;
pub use filter::{may_contain, FilterAnswer};
pub use keys::Walk;
pub use props::Props;
pub use table::{PebbleFormat, Table, FILTER_NAME};

/// Whether a table of LevelDB's or RocksDB's footer (Pebble's LevelDB and
/// RocksDBv2 formats, which go-ethereum's databases hold) is Pebble's: its
/// merger is one of Pebble's (`pebble.concatenate`, Pebble's default), or
/// its prefix extractor is named for its comparer (Pebble v1's record of
/// a comparer's `Split`), which neither LevelDB nor RocksDB writes.
pub fn is_pebbles(table: &crate::rocksdb::Table<'_>) -> bool {
    let merger = table.property("rocksdb.merge.operator");
    let comparer = table.comparator();
    merger.is_some_and(|m| m.starts_with(b"pebble."))
        || comparer.is_some_and(|c| table.property("rocksdb.prefix.extractor.name") == Some(c))
}
