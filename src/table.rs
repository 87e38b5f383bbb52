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
//!     AnyTable::Pebble(table) => println!("Pebble, {}", table.format()),
//! }
//! assert_eq!(TableFormat::of(&file)?.engine().name(), "rocksdb");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::db::Engine;
use crate::format::{Footer, Source, MAGICS, PEBBLE_MAGIC, ROCKSDB_MAGIC, TABLE_MAGIC};
use crate::{leveldb, pebble, rocksdb, Error};

/// Which engine's table a file is, decided from its footer.
///
/// Exhaustive on purpose: a new format is a compile error at every place
/// that dispatches on the format, until each handles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    /// LevelDB's table: LevelDB's magic, where RocksDB's reader does not
    /// find a full or partitioned filter (a LevelDB filter, none, or a
    /// file it does not open: such a file is then judged as LevelDB's).
    LevelDb,
    /// A RocksDB block-based table, with its footer's format_version: 0
    /// for LevelDB's magic over a metaindex that names a RocksDB full or
    /// partitioned filter (RocksDB's legacy footer).
    RocksDb {
        /// The footer's format_version.
        format_version: u32,
    },
    /// A table Pebble wrote: its own magic (Pebblev1 to Pebblev7), or
    /// LevelDB's or RocksDB's (format_version 2) where the properties say
    /// Pebble ([`pebble::is_pebbles`]).
    Pebble {
        /// Which of Pebble's table formats.
        format: pebble::PebbleFormat,
    },
}

impl TableFormat {
    /// The format of a table file, from its footer (and, behind LevelDB's
    /// magic, the filter its metaindex names). A file whose footer does not
    /// read is an error: too short, an unknown magic, a format_version or
    /// checksum type not read here, blocks named past the file's end.
    pub fn of<'a>(file: impl Into<Source<'a>>) -> Result<TableFormat, Error> {
        Ok(sniff(file.into())?.0)
    }

    /// The engine whose table it is.
    pub fn engine(self) -> Engine {
        match self {
            TableFormat::LevelDb => Engine::LevelDb,
            TableFormat::RocksDb { .. } => Engine::RocksDb,
            TableFormat::Pebble { .. } => Engine::Pebble,
        }
    }
}

/// The format of `file`, and behind LevelDB's magic (or RocksDB's of
/// format_version 2) the RocksDB table opened to tell (so that it is not
/// opened twice). Either is Pebble's where its properties say so; LevelDB's
/// magic is RocksDB's where RocksDB's reader opens the file and finds a
/// full or partitioned filter named in its metaindex; else (a LevelDB
/// filter, none, or a file RocksDB's reader does not open) LevelDB's.
fn sniff(file: Source<'_>) -> Result<(TableFormat, Option<rocksdb::Table<'_>>), Error> {
    let footer = Footer::read_last(file)?;
    Ok(match footer.magic {
        ROCKSDB_MAGIC if footer.format_version == 2 => match rocksdb::Table::open(file) {
            Ok(table) if pebble::is_pebbles(&table) => {
                let format = pebble::PebbleFormat::RocksDbV2;
                (TableFormat::Pebble { format }, None)
            }
            Ok(table) => (TableFormat::RocksDb { format_version: 2 }, Some(table)),
            Err(_) => (TableFormat::RocksDb { format_version: 2 }, None),
        },
        ROCKSDB_MAGIC => {
            let format_version = footer.format_version;
            (TableFormat::RocksDb { format_version }, None)
        }
        PEBBLE_MAGIC => {
            let format = pebble::PebbleFormat::Pebble(footer.format_version);
            (TableFormat::Pebble { format }, None)
        }
        TABLE_MAGIC => match rocksdb::Table::open(file) {
            Ok(table) if pebble::is_pebbles(&table) => {
                let format = pebble::PebbleFormat::LevelDb;
                (TableFormat::Pebble { format }, None)
            }
            Ok(table) if table.names_full_filter() => {
                (TableFormat::RocksDb { format_version: 0 }, Some(table))
            }
            _ => (TableFormat::LevelDb, None),
        },
        found => {
            return Err(Error::BadMagic {
                found,
                expected: MAGICS,
            })
        }
    })
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
    /// [`TableFormat::Pebble`].
    Pebble(pebble::Table<'a>),
}

impl<'a> AnyTable<'a> {
    /// Opens `file` with the reader of its [`TableFormat`], which checks
    /// what it reads ([`leveldb::Table::open`], [`rocksdb::Table::open`]).
    pub fn open(file: impl Into<Source<'a>>) -> Result<AnyTable<'a>, Error> {
        AnyTable::open_with(file.into(), leveldb::Table::open)
    }

    /// Opens `file` as its engine opens a table for reads: LevelDB's reader
    /// leniently ([`leveldb::Table::open_for_lookups`]: a filter that does
    /// not read is no filter), RocksDB's as [`AnyTable::open`].
    pub fn open_for_lookups(file: impl Into<Source<'a>>) -> Result<AnyTable<'a>, Error> {
        AnyTable::open_with(file.into(), leveldb::Table::open_for_lookups)
    }

    fn open_with(
        file: Source<'a>,
        leveldb: fn(Source<'a>) -> Result<leveldb::Table<'a>, Error>,
    ) -> Result<AnyTable<'a>, Error> {
        Ok(match sniff(file)? {
            (_, Some(table)) => AnyTable::RocksDb(table),
            (TableFormat::LevelDb, None) => AnyTable::LevelDb(leveldb(file)?),
            (TableFormat::RocksDb { .. }, None) => AnyTable::RocksDb(rocksdb::Table::open(file)?),
            (TableFormat::Pebble { .. }, None) => AnyTable::Pebble(pebble::Table::open(file)?),
        })
    }

    /// The bytes the open table holds beyond its file's kept blocks
    /// ([`TableFile::kept_bytes`](crate::format::TableFile::kept_bytes)):
    /// blocks read and kept uncompressed, index partitions.
    pub fn held_bytes(&self) -> u64 {
        match self {
            AnyTable::LevelDb(table) => table.held_bytes(),
            AnyTable::RocksDb(table) => table.held_bytes(),
            AnyTable::Pebble(table) => table.held_bytes(),
        }
    }

    /// The table's format.
    pub fn format(&self) -> TableFormat {
        match self {
            AnyTable::LevelDb(_) => TableFormat::LevelDb,
            AnyTable::RocksDb(table) => TableFormat::RocksDb {
                format_version: table.footer().format_version,
            },
            AnyTable::Pebble(table) => TableFormat::Pebble {
                format: table.format(),
            },
        }
    }
}
