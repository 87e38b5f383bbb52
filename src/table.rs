//! Any table file, its format decided once from its footer, as Pebble's
//! `sstable.ParseTableFormat` decides it: the one place that tells the
//! engines' tables apart. A new format is a sibling module and an arm here.
//!
//! ```no_run
//! use leveldb_filter::{AnyTable, TableFormat};
//! let file = leveldb_filter::format::TableFile::open("000012.sst")?;
//! match AnyTable::open(&file)? {
//!     AnyTable::LevelDb(table) => println!("LevelDB, filter {:?}", table.filter_block().map(|f| &f.name)),
//!     AnyTable::RocksDb(table) => println!("RocksDB, format_version {}", table.footer().format_version),
//! }
//! assert_eq!(TableFormat::of(&file)?.engine(), "rocksdb");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::format::{Footer, Source, ROCKSDB_MAGIC, TABLE_MAGIC};
use crate::{leveldb, rocksdb, Error};

/// Which engine's table a file is, decided from its footer.
///
/// Exhaustive on purpose: a new format is a compile error at every place
/// that dispatches on the format, until each handles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    /// LevelDB's table: LevelDB's magic, and no RocksDB filter in its
    /// metaindex.
    LevelDb,
    /// A RocksDB block-based table, with its footer's format_version: 0
    /// for LevelDB's magic over a metaindex that names a RocksDB full or
    /// partitioned filter (RocksDB's legacy footer).
    RocksDb {
        /// The footer's format_version.
        format_version: u32,
    },
}

impl TableFormat {
    /// The format of a table file, from its footer (and, behind LevelDB's
    /// magic, the filter its metaindex names). A file whose footer does not
    /// read is an error: too short, an unknown magic, a format_version or
    /// checksum type not read here, blocks named past the file's end.
    pub fn of<'a>(file: impl Into<Source<'a>>) -> Result<TableFormat, Error> {
        let file = file.into();
        let footer = Footer::read_last(file)?;
        Ok(match footer.magic {
            ROCKSDB_MAGIC => TableFormat::RocksDb {
                format_version: footer.format_version,
            },
            TABLE_MAGIC if rocksdb::names_rocksdb_filter(file) => {
                TableFormat::RocksDb { format_version: 0 }
            }
            _ => TableFormat::LevelDb,
        })
    }

    /// The engine's name, as the command line writes it: `leveldb` or
    /// `rocksdb`.
    pub fn engine(self) -> &'static str {
        match self {
            TableFormat::LevelDb => "leveldb",
            TableFormat::RocksDb { .. } => "rocksdb",
        }
    }
}

/// A table file of any format, opened by its format's reader.
// One per open table, never moved in a loop: a box would only add an
// allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum AnyTable<'a> {
    /// [`TableFormat::LevelDb`].
    LevelDb(leveldb::Table<'a>),
    /// [`TableFormat::RocksDb`].
    RocksDb(rocksdb::Table<'a>),
}

impl<'a> AnyTable<'a> {
    /// Opens `file` with the reader of its [`TableFormat`].
    pub fn open(file: impl Into<Source<'a>>) -> Result<AnyTable<'a>, Error> {
        let file = file.into();
        Ok(match TableFormat::of(file)? {
            TableFormat::LevelDb => AnyTable::LevelDb(leveldb::Table::open(file)?),
            TableFormat::RocksDb { .. } => AnyTable::RocksDb(rocksdb::Table::open(file)?),
        })
    }

    /// Opens `file` as its engine opens a table for reads: LevelDB's reader
    /// leniently ([`leveldb::Table::open_for_lookups`]: a filter that does
    /// not read is no filter), RocksDB's as [`AnyTable::open`].
    pub fn open_for_lookups(file: impl Into<Source<'a>>) -> Result<AnyTable<'a>, Error> {
        let file = file.into();
        Ok(match TableFormat::of(file)? {
            TableFormat::LevelDb => AnyTable::LevelDb(leveldb::Table::open_for_lookups(file)?),
            TableFormat::RocksDb { .. } => AnyTable::RocksDb(rocksdb::Table::open(file)?),
        })
    }

    /// The table's format.
    pub fn format(&self) -> TableFormat {
        match self {
            AnyTable::LevelDb(_) => TableFormat::LevelDb,
            AnyTable::RocksDb(table) => TableFormat::RocksDb {
                format_version: table.footer().format_version,
            },
        }
    }
}
