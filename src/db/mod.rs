//! A database directory's live tables, as LevelDB, RocksDB and Pebble find
//! them: `CURRENT` (or Pebble's marker files, [`locate_manifest`]) names
//! the MANIFEST, a log of version edits; replaying the edits gives each
//! column family's tables, their levels and key ranges.
//!
//! [`Manifest::parse`] reads a MANIFEST's bytes within their bounds and
//! fails on the first damaged record or edit, as both engines' `DB::Open`
//! does; a record cut short at the end of the file (a write the process did
//! not finish) ends the log, as in both engines. [`Manifest::get_order`]
//! gives the tables a `Get` of a user key consults, in the order it
//! consults them.
//!
//! ```
//! use leveldb_filter::db::current_manifest;
//!
//! assert_eq!(current_manifest(b"MANIFEST-000012\n").unwrap(), "MANIFEST-000012");
//! assert!(current_manifest(b"../../etc/passwd\n").is_err());
//! ```

mod edit;
mod error;
mod get;
mod locate;
mod log;
mod pebble;
mod replay;
mod wal;

use std::cmp::Ordering;
use std::collections::BTreeMap;

pub use crate::format::KeyOrder;
use crate::format::{user_key, MAX_SEQUENCE};

pub use crate::format::TableStep;
use edit::Edit;
pub use error::{CurrentProblem, EditProblem, ManifestError};
pub use get::{GetWalk, Outcome};
pub use locate::{
    locate_manifest, options_engine, DirNames, LiveManifest, LocateError, LocateProblem,
    ManifestPointer, MAX_CURRENT,
};
pub use log::RecordProblem;
pub use pebble::{pebble_step_without_filter, PebbleGet};
use replay::Replay;
pub use wal::{
    for_each_batch_entry, for_each_pebble_batch_entry, BatchEntry, BatchItem, Marker, Memtable,
    MemtableAnswer, WalProblem,
};

/// The most levels a MANIFEST may name (RocksDB's `num_levels` is an
/// option; a level past this is damage, not a configuration).
pub const MAX_LEVELS: u32 = 64;

/// The MANIFEST a `CURRENT` file names: its one line, `MANIFEST-` and a
/// decimal number, with the newline both engines write.
pub fn current_manifest(current: &[u8]) -> Result<&str, ManifestError> {
    let line = current
        .strip_suffix(b"\n")
        .ok_or(ManifestError::Current(CurrentProblem::NoNewline))?;
    let digits = line
        .strip_prefix(b"MANIFEST-")
        .filter(|d| !d.is_empty() && d.len() <= 20 && d.iter().all(u8::is_ascii_digit))
        .ok_or(ManifestError::Current(CurrentProblem::NotAManifestName))?;
    debug_assert!(!digits.is_empty());
    // ASCII throughout, checked above.
    std::str::from_utf8(line).map_err(|_| ManifestError::Current(CurrentProblem::NotAManifestName))
}

/// A table the MANIFEST holds live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveTable {
    /// The column family's id (0, `default`, in LevelDB).
    pub column_family: u32,
    /// The level, 0 and up.
    pub level: u32,
    /// The file number: the table is `NNNNNN.ldb` or `NNNNNN.sst`.
    pub number: u64,
    /// The file's size as written.
    pub size: u64,
    /// The smallest internal key (user key and an 8-byte tag).
    pub smallest: Vec<u8>,
    /// The largest internal key.
    pub largest: Vec<u8>,
    /// RocksDB's smallest and largest sequence numbers (0 in LevelDB).
    pub seqnos: (u64, u64),
    /// RocksDB's epoch number (7.10 and later), which orders level 0.
    pub epoch_number: Option<u64>,
    /// RocksDB's `db_paths` index: the table is in the database's
    /// directory only where it is 0.
    pub path_id: u32,
    /// The oldest blob file the table's blob indexes refer to (RocksDB's
    /// integrated BlobDB; 0 for none), which keeps that blob file and
    /// every later one live.
    pub oldest_blob_file: u64,
    /// Whether its keys (and `smallest` and `largest`) keep their
    /// user-defined timestamps: RocksDB's `persist_user_defined_timestamps
    /// = false` strips them (the new-file field 16 says 0).
    pub timestamps_persisted: bool,
    /// What Pebble records of the table beyond LevelDB's and RocksDB's
    /// fields: `None` for most tables (kept apart, boxed, so that a table
    /// of LevelDB's or RocksDB's is no larger for it).
    pub pebble: Option<Box<PebbleTable>>,
}

/// What Pebble records of a table beyond LevelDB's and RocksDB's fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PebbleTable {
    /// A virtual table's backing table, whose file holds its keys, the
    /// table being the part of that file within its bounds; `None` for a
    /// table of its own file.
    pub backing: Option<Backing>,
    /// Where its point keys lie: a table with range keys records its
    /// point keys' bounds apart (a `Get` reads point keys alone).
    pub point_keys: PointKeys,
    /// Its synthetic prefix (v2): what every key of the backing file gains
    /// in front (empty: none).
    pub synthetic_prefix: Vec<u8>,
    /// Its synthetic suffix (v2): what replaces every key's suffix under
    /// the comparer's `Split` (empty: none).
    pub synthetic_suffix: Vec<u8>,
}

/// The backing table of Pebble's virtual table: the file its keys are in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backing {
    /// The backing table's file number: the file is `NNNNNN.sst`.
    pub number: u64,
    /// The file's size, as the edit that created the backing recorded it.
    pub size: u64,
}

/// Where a table's point keys lie, within its bounds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PointKeys {
    /// The table's bounds are its point keys' (every table without range
    /// keys).
    #[default]
    Bounds,
    /// Between these internal keys: Pebble's table with range keys too,
    /// whose bounds may be its range keys'.
    Within {
        /// The smallest point key (an internal key).
        smallest: Vec<u8>,
        /// The largest point key (an internal key).
        largest: Vec<u8>,
    },
    /// Nowhere: a Pebble table of range keys alone.
    None,
}

/// A live blob file of Pebble's value separation (v2.1): values the
/// tables' blob handles point into, `NNNNNN.blob`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PebbleBlobFile {
    /// The id the tables' references name.
    pub id: u64,
    /// The file number of the physical file holding it.
    pub number: u64,
    /// The file's size.
    pub size: u64,
    /// The size of the values in it.
    pub value_size: u64,
}

/// A live blob file of RocksDB's integrated BlobDB (`enable_blob_files`):
/// values a table's blob indexes point into, `NNNNNN.blob`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobFile {
    /// The column family's id.
    pub column_family: u32,
    /// The file number.
    pub number: u64,
    /// How many blobs, and their bytes, the file was written with.
    pub total: (u64, u64),
    /// How many of them, and their bytes, compactions have since dropped.
    pub garbage: (u64, u64),
}

impl LiveTable {
    /// The smallest user key.
    pub fn smallest_user_key(&self) -> &[u8] {
        user_key(&self.smallest)
    }

    /// The largest user key.
    pub fn largest_user_key(&self) -> &[u8] {
        user_key(&self.largest)
    }

    /// Pebble's virtual table's backing table (`None`: a table of its own
    /// file).
    pub fn backing(&self) -> Option<Backing> {
        self.pebble.as_ref().and_then(|p| p.backing)
    }

    /// The number of the file holding the table's keys: its own, or its
    /// backing table's (Pebble's virtual table).
    pub fn file_number(&self) -> u64 {
        self.backing().map_or(self.number, |b| b.number)
    }

    /// The size of that file: the table's, or its backing table's.
    pub fn file_size(&self) -> u64 {
        self.backing().map_or(self.size, |b| b.size)
    }

    /// The point keys' bounds (internal keys); `None` where the table
    /// holds range keys alone.
    pub fn point_bounds(&self) -> Option<(&[u8], &[u8])> {
        match self.pebble.as_ref().map(|p| &p.point_keys) {
            None | Some(PointKeys::Bounds) => Some((&self.smallest, &self.largest)),
            Some(PointKeys::Within { smallest, largest }) => Some((smallest, largest)),
            Some(PointKeys::None) => None,
        }
    }

    /// Pebble's synthetic prefix and suffix (empty: none).
    pub fn synthetic(&self) -> (&[u8], &[u8]) {
        match &self.pebble {
            Some(p) => (&p.synthetic_prefix, &p.synthetic_suffix),
            None => (&[], &[]),
        }
    }

    /// The table's file names, in the order the engine's table cache
    /// tries them: LevelDB's `.ldb`, then the older `.sst`; RocksDB's
    /// `.sst`, then `.ldb` (Pebble's, `.sst`, is tried first). A virtual
    /// table's are its backing table's.
    pub fn file_names(&self, engine: Engine) -> [String; 2] {
        let number = self.file_number();
        let (ldb, sst) = (format!("{number:06}.ldb"), format!("{number:06}.sst"));
        match engine {
            Engine::RocksDb | Engine::Pebble => [sst, ldb],
            Engine::LevelDb => [ldb, sst],
        }
    }

    /// RocksDB's `NewestFirstByEpochNumber` for level 0, which is LevelDB's
    /// newest-first by file number where there are no epochs or sequences.
    fn newest_first(&self, other: &Self) -> Ordering {
        (
            other.epoch_number,
            other.seqnos.1,
            other.seqnos.0,
            other.number,
        )
            .cmp(&(self.epoch_number, self.seqnos.1, self.seqnos.0, self.number))
    }
}

/// A MANIFEST replayed: the comparator, the column families, and the live
/// tables of each.
#[derive(Clone, Debug, Default)]
pub struct Manifest {
    /// Each column family's comparator, where its edits name one.
    comparators: BTreeMap<u32, String>,
    column_families: BTreeMap<u32, String>,
    tables: Vec<LiveTable>,
    blob_files: Vec<BlobFile>,
    log_numbers: BTreeMap<u32, u64>,
    prev_log_number: u64,
    edits: usize,
    truncated_tail: bool,
    engine: Engine,
    /// The first tag Pebble's decoder refuses, and its edit's offset.
    not_pebble: Option<(u64, u32)>,
    /// The first edit adding a table below level 6, and the level.
    deep: Option<(u64, u32)>,
    pebble_blob_files: Vec<PebbleBlobFile>,
    /// The Pebble release whose `Get` the order follows.
    pebble_get: PebbleGet,
}

/// Which engine wrote a database: where its `Get` looks and how its
/// recovery reads, in the few places the two differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// LevelDB (and goleveldb): no version edit holds a tag only RocksDB
    /// writes.
    #[default]
    LevelDb,
    /// RocksDB: an edit holds a tag only RocksDB writes.
    RocksDb,
    /// Pebble: its tables carry Pebble's magic, or its MANIFEST a tag only
    /// Pebble writes, or (see [`Manifest::in_directory`]) its directory
    /// Pebble's marker files or OPTIONS.
    Pebble,
}

impl Engine {
    /// The engine's name, as the command line writes it.
    pub fn name(self) -> &'static str {
        match self {
            Engine::LevelDb => "leveldb",
            Engine::RocksDb => "rocksdb",
            Engine::Pebble => "pebble",
        }
    }
}

impl Manifest {
    /// Replays the MANIFEST's version edits. Work and memory are bounded by
    /// the bytes given: each table a MANIFEST holds was written in it.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, ManifestError> {
        let mut replay = Replay::default();
        let mut records = log::Records::new(bytes, 0);
        for record in &mut records {
            let (offset, record) =
                record.map_err(|(offset, what)| ManifestError::Record { offset, what })?;
            let edit =
                Edit::decode(&record).map_err(|what| ManifestError::Edit { offset, what })?;
            replay
                .apply(edit, offset)
                .map_err(|what| ManifestError::Edit { offset, what })?;
        }
        let mut manifest = replay.finish()?;
        manifest.truncated_tail = records.truncated_tail();
        Ok(manifest)
    }

    /// The comparator of column family `column_family` (LevelDB's one is
    /// 0), as its edits name it (`None` if they name none).
    pub fn comparator(&self, column_family: u32) -> Option<&str> {
        self.comparators.get(&column_family).map(String::as_str)
    }

    /// The key order of a column family's comparator; `Err` with its name
    /// for one this crate does not order keys by. A family whose edits
    /// name no comparator is bytewise, the engines' default.
    pub fn key_order(&self, column_family: u32) -> Result<KeyOrder, ManifestError> {
        key_order(self.comparator(column_family))
    }

    /// The engine that wrote the MANIFEST, which decides where a `Get`
    /// looks: Pebble where an edit holds a tag or new-file field only
    /// Pebble writes (104 to 108; fields 66 to 69), else RocksDB where
    /// one holds a tag LevelDB does not write (10 and up), else LevelDB.
    /// Pebble at its most compatible format writes none of its own: its
    /// directory tells it ([`Manifest::in_directory`]).
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Pebble's live blob files (v2.1's value separation), by id.
    pub fn pebble_blob_files(&self) -> &[PebbleBlobFile] {
        &self.pebble_blob_files
    }

    /// The column families by id (LevelDB's one is `0`, `default`).
    pub fn column_families(&self) -> &BTreeMap<u32, String> {
        &self.column_families
    }

    /// The id of the column family named `name`.
    pub fn column_family(&self, name: &str) -> Option<u32> {
        self.column_families
            .iter()
            .find_map(|(&id, n)| (n == name).then_some(id))
    }

    /// The live tables: by column family, then level; level 0 newest
    /// first, the other levels by smallest key.
    pub fn tables(&self) -> &[LiveTable] {
        &self.tables
    }

    /// The log number of column family `column_family`: its writes in
    /// logs numbered below it are in its tables (0 where no edit gave one).
    pub fn log_number(&self, column_family: u32) -> u64 {
        self.log_numbers.get(&column_family).copied().unwrap_or(0)
    }

    /// Whether recovery replays the write-ahead log numbered `number`:
    /// one at or past some live column family's log number (RocksDB), or
    /// LevelDB's previous log; Pebble's at or past its log number alone
    /// (`MinUnflushedLogNum`).
    pub fn replays_log(&self, number: u64) -> bool {
        if self.engine == Engine::Pebble {
            return number >= self.log_number(0);
        }
        let oldest = self
            .column_families
            .keys()
            .map(|&family| self.log_number(family))
            .min()
            .unwrap_or(0);
        number >= oldest || (self.prev_log_number != 0 && number == self.prev_log_number)
    }

    /// The live blob files, by column family and number.
    pub fn blob_files(&self) -> &[BlobFile] {
        &self.blob_files
    }

    /// How many version edits were applied.
    pub fn edits(&self) -> usize {
        self.edits
    }

    /// Whether the log ended in a record cut short, which both engines
    /// ignore (the write that made it did not finish).
    pub fn truncated_tail(&self) -> bool {
        self.truncated_tail
    }

    /// Whether RocksDB's `Get` skips the filter of `table` where its column
    /// family has `optimize_filters_for_hits` (`Version::IsFilterSkipped`):
    /// a table of the family's last non-empty level, and at level 0 only
    /// the last (oldest) of the level's tables.
    pub fn filter_skipped_for_hits(&self, table: &LiveTable) -> bool {
        let mut family = self
            .tables
            .iter()
            .filter(|t| t.column_family == table.column_family);
        let last_level = family.clone().map(|t| t.level).max();
        let last_of_level_0 = family.rfind(|t| t.level == 0);
        Some(table.level) == last_level
            && (table.level > 0 || last_of_level_0.is_some_and(|t| t.number == table.number))
    }

    /// The tables a `Get` of `key` in column family `column_family`
    /// consults, in its order (LevelDB's `Version::Get`, RocksDB's
    /// `FilePicker`, Pebble's `getIter`): level 0's tables whose key range holds the key,
    /// newest first, then at each deeper level the one table whose range
    /// holds it (levels past 0 do not overlap). RocksDB also reads on at
    /// the same level while a table ends at the key itself (one user key's
    /// entries can span tables), and consults every level-0 table where
    /// they are the family's only tables and at most 3.
    pub fn get_order(
        &self,
        column_family: u32,
        key: &[u8],
    ) -> Result<Vec<&LiveTable>, ManifestError> {
        let family_order = self.key_order(column_family)?;
        // A table's bound against the key looked up, timestamps left out,
        // as RocksDB's `FilePicker` compares them.
        let vs = |t: &LiveTable, bound: &[u8]| {
            let order = t.order(family_order);
            order.compare_without_timestamp(order.strip(bound), key)
        };
        let holds = |t: &&LiveTable| {
            vs(t, t.smallest_user_key()) != Ordering::Greater
                && vs(t, t.largest_user_key()) != Ordering::Less
        };
        let family: Vec<&LiveTable> = self
            .tables
            .iter()
            .filter(|t| t.column_family == column_family)
            .collect();
        if self.engine == Engine::Pebble {
            return Ok(self.pebble_get_order(&family, family_order, key));
        }
        let level_0 = family.iter().take_while(|t| t.level == 0).count();
        let unchecked = self.engine == Engine::RocksDb && level_0 == family.len() && level_0 <= 3;
        let mut found: Vec<&LiveTable> = family[..level_0]
            .iter()
            .copied()
            .filter(|t| unchecked || holds(t))
            .collect();
        let mut rest = &family[level_0..];
        while let Some(first) = rest.first() {
            let level = rest.iter().take_while(|t| t.level == first.level).count();
            let (tables, deeper) = rest.split_at(level);
            rest = deeper;
            let at = tables.partition_point(|t| !t.ends_at_or_after(t.order(family_order), key));
            for table in &tables[at..] {
                if vs(table, table.smallest_user_key()) == Ordering::Greater {
                    break;
                }
                found.push(table);
                let spans = vs(table, table.largest_user_key()) == Ordering::Equal;
                if !(self.engine == Engine::RocksDb && spans) {
                    break;
                }
            }
        }
        Ok(found)
    }
}

fn key_order(comparator: Option<&str>) -> Result<KeyOrder, ManifestError> {
    match comparator {
        None => Ok(KeyOrder::Bytewise),
        Some(name) => KeyOrder::of(name).ok_or_else(|| ManifestError::UnknownComparator {
            name: name.to_string(),
        }),
    }
}

/// The value of option `name` of column family `family` in the text of a
/// RocksDB OPTIONS file (`OPTIONS-NNNNNN`): the line `name=value` in the
/// section `[CFOptions "family"]`.
///
/// ```
/// use leveldb_filter::db::column_family_option;
/// let text = "[CFOptions \"default\"]\n  optimize_filters_for_hits=true\n";
/// assert_eq!(column_family_option(text, "default", "optimize_filters_for_hits"), Some("true"));
/// assert_eq!(column_family_option(text, "other", "optimize_filters_for_hits"), None);
/// ```
pub fn column_family_option<'t>(options: &'t str, family: &str, name: &str) -> Option<&'t str> {
    options_value(options, &format!("CFOptions \"{family}\""), name)
}

/// The value of option `name` in section `[section]` of an OPTIONS file's
/// text (RocksDB's and Pebble's share the form: `name=value` lines under
/// bracketed section names).
///
/// ```
/// use leveldb_filter::db::options_value;
/// let text = "[Options]\n  wal_dir=/wal\n[WAL Failover]\n  secondary_dir=/b\n";
/// assert_eq!(options_value(text, "Options", "wal_dir"), Some("/wal"));
/// assert_eq!(options_value(text, "WAL Failover", "secondary_dir"), Some("/b"));
/// assert_eq!(options_value(text, "Options", "secondary_dir"), None);
/// ```
pub fn options_value<'t>(options: &'t str, section: &str, name: &str) -> Option<&'t str> {
    let mut inside = false;
    for line in options.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[') {
            inside = header.strip_suffix(']') == Some(section);
        } else if inside {
            if let Some((key, value)) = line.split_once('=') {
                if key.trim() == name {
                    return Some(value.trim());
                }
            }
        }
    }
    None
}

impl LiveTable {
    /// The order of the table's stored keys under its family's: without
    /// timestamps where they were not persisted.
    fn order(&self, family: KeyOrder) -> KeyOrder {
        match self.timestamps_persisted {
            true => family,
            false => family.without_timestamps(),
        }
    }

    /// Whether a lookup of `key` (at a sequence number below the largest,
    /// and the newest timestamp) sorts before the table's largest key:
    /// LevelDB's and RocksDB's `FindFile` test at levels past 0.
    fn ends_at_or_after(&self, order: KeyOrder, key: &[u8]) -> bool {
        let largest = self.largest_user_key();
        match order.compare_without_timestamp(order.strip(largest), key) {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal if order.timestamp_size() > 0 => true,
            Ordering::Equal => self.largest_sequence() != MAX_SEQUENCE,
        }
    }

    fn largest_sequence(&self) -> u64 {
        let tag = &self.largest[self.largest.len() - 8..];
        u64::from_le_bytes(tag.try_into().unwrap_or_default()) >> 8
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_pebble;
