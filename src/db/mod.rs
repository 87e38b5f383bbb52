//! A database directory's live tables, as LevelDB and RocksDB find them:
//! `CURRENT` names the MANIFEST, a log of version edits; replaying the
//! edits gives each column family's tables, their levels and key ranges.
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

mod get;
mod log;
mod wal;

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

pub use crate::format::KeyOrder;
use crate::format::{user_key, MAX_SEQUENCE};
use crate::format::{varint32, varint64};

pub use crate::format::TableStep;
pub use get::{GetWalk, Outcome};
pub use log::RecordProblem;
pub use wal::{
    for_each_batch_entry, BatchEntry, BatchItem, Marker, Memtable, MemtableAnswer, WalProblem,
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

    /// The table's file names, in the order the engine's table cache
    /// tries them: LevelDB's `.ldb`, then the older `.sst`; RocksDB's
    /// `.sst`, then `.ldb`.
    pub fn file_names(&self, engine: Engine) -> [String; 2] {
        let (ldb, sst) = (
            format!("{:06}.ldb", self.number),
            format!("{:06}.sst", self.number),
        );
        match engine {
            Engine::RocksDb => [sst, ldb],
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
}

impl Engine {
    /// The engine's name, as the command line writes it.
    pub fn name(self) -> &'static str {
        match self {
            Engine::LevelDb => "leveldb",
            Engine::RocksDb => "rocksdb",
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

    /// The engine that wrote the MANIFEST (RocksDB where an edit holds a
    /// tag only RocksDB writes), which decides where a `Get` looks.
    pub fn engine(&self) -> Engine {
        self.engine
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
    /// LevelDB's previous log.
    pub fn replays_log(&self, number: u64) -> bool {
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
    /// `FilePicker`): level 0's tables whose key range holds the key,
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
    let header = format!("[CFOptions \"{family}\"]");
    let mut inside = false;
    for line in options.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == header;
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

/// What is wrong with a MANIFEST or with the `CURRENT` file naming it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ManifestError {
    /// `CURRENT` does not name a MANIFEST.
    Current(CurrentProblem),
    /// A log record (at this offset) is damaged.
    Record {
        /// Offset of the physical record in the file.
        offset: u64,
        /// What is wrong.
        what: RecordProblem,
    },
    /// A version edit does not decode.
    Edit {
        /// Offset of its record's first fragment.
        offset: u64,
        /// What is wrong.
        what: EditProblem,
    },
    /// No edit gives a field without which neither engine opens the
    /// database (an empty or cut-short MANIFEST).
    Missing {
        /// The field: the log number, next file number or last sequence.
        field: &'static str,
    },
    /// The database orders keys by a comparator this crate does not know.
    UnknownComparator {
        /// Its name.
        name: String,
    },
}

/// What is wrong with a `CURRENT` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CurrentProblem {
    /// It does not end with a newline (a write cut short).
    NoNewline,
    /// Its line is not `MANIFEST-` and a number.
    NotAManifestName,
}

/// What is wrong with a version edit.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EditProblem {
    /// A field runs past the end of the edit.
    Truncated {
        /// The field (RocksDB's name for it).
        field: &'static str,
    },
    /// A tag neither engine writes, without RocksDB's "safe to ignore" bit.
    UnknownTag {
        /// The tag.
        tag: u32,
    },
    /// A custom field RocksDB marks as not safe to ignore, and unknown.
    UnknownRequiredField {
        /// The field's tag.
        tag: u32,
    },
    /// A level past the engine's: LevelDB's 7, or [`MAX_LEVELS`].
    LevelOutOfRange {
        /// The level.
        level: u32,
        /// The number of levels.
        limit: u32,
    },
    /// A blob file added by a second edit (RocksDB: "already added").
    BlobFileAddedTwice {
        /// The blob file's number.
        number: u64,
    },
    /// Garbage of a blob file no edit added (RocksDB: "not found").
    BlobFileUnknown {
        /// The blob file's number.
        number: u64,
    },
    /// More garbage than a blob file was written with.
    BlobGarbageOverflow {
        /// The blob file's number.
        number: u64,
    },
    /// An internal key shorter than its 8-byte tag.
    ShortKey {
        /// Its length.
        len: usize,
    },
    /// An edit outside RocksDB's atomic group while the group is open.
    OutsideAtomicGroup,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManifestError::Current(CurrentProblem::NoNewline) => {
                write!(f, "CURRENT does not end with a newline (a write cut short)")
            }
            ManifestError::Current(CurrentProblem::NotAManifestName) => {
                write!(f, "CURRENT does not name a MANIFEST (expected `MANIFEST-` and a number)")
            }
            ManifestError::Record { offset, what } => write!(f, "log record at offset {offset}: {what}"),
            ManifestError::Edit { offset, what } => {
                write!(f, "version edit in the record at offset {offset}: {what}")
            }
            ManifestError::Missing { field } => write!(
                f,
                "no edit gives the {field}, without which LevelDB and RocksDB do not open the database (an empty or cut-short MANIFEST)"
            ),
            ManifestError::UnknownComparator { name } => write!(
                f,
                "keys are ordered by comparator {name:?}, whose order only its own code knows (known: {})",
                crate::format::KNOWN_COMPARATORS
            ),
        }
    }
}

impl fmt::Display for EditProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditProblem::Truncated { field } => write!(f, "{field} runs past the end of the edit"),
            EditProblem::UnknownTag { tag } => write!(f, "unknown tag {tag}"),
            EditProblem::UnknownRequiredField { tag } => {
                write!(
                    f,
                    "unknown custom field {tag}, which RocksDB marks as not safe to ignore"
                )
            }
            EditProblem::LevelOutOfRange { level, limit } => {
                write!(f, "level {level}, expected below {limit}")
            }
            EditProblem::OutsideAtomicGroup => {
                write!(f, "an edit outside the atomic group still open")
            }
            EditProblem::BlobFileAddedTwice { number } => {
                write!(f, "blob file {number} is added a second time")
            }
            EditProblem::BlobFileUnknown { number } => {
                write!(f, "garbage of blob file {number}, which no edit added")
            }
            EditProblem::BlobGarbageOverflow { number } => {
                write!(
                    f,
                    "more garbage in blob file {number} than it was written with"
                )
            }
            EditProblem::ShortKey { len } => {
                write!(
                    f,
                    "an internal key of {len} bytes, expected at least its 8-byte tag"
                )
            }
        }
    }
}

impl std::error::Error for ManifestError {}

/// One version edit: the parts that change the live tables.
#[derive(Default)]
struct Edit {
    comparator: Option<String>,
    column_family: u32,
    add_family: Option<String>,
    drop_family: bool,
    deleted: Vec<(u32, u64)>,
    added: Vec<LiveTable>,
    /// Blob file records: the file's number, whether it is an addition
    /// (else garbage), and the blobs' count and bytes.
    blobs: Vec<(u64, bool, (u64, u64))>,
    /// The column family's log number: its writes in older logs are in
    /// its tables.
    log_number: Option<u64>,
    /// LevelDB's previous log number, a log still replayed.
    prev_log_number: Option<u64>,
    /// RocksDB's atomic groups: the edits still to come in this one's group.
    remaining_in_group: Option<u32>,
    /// Whether it gives the log number, next file number, last sequence.
    given: [bool; 3],
    /// Whether it holds a tag only RocksDB writes.
    rocksdb: bool,
}

/// The bytes of an edit, read field by field.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn v32(&mut self, field: &'static str) -> Result<u32, EditProblem> {
        let (v, rest) = varint32(self.0).ok_or(EditProblem::Truncated { field })?;
        self.0 = rest;
        Ok(v)
    }
    fn v64(&mut self, field: &'static str) -> Result<u64, EditProblem> {
        let (v, rest) = varint64(self.0).ok_or(EditProblem::Truncated { field })?;
        self.0 = rest;
        Ok(v)
    }
    fn bytes(&mut self, field: &'static str) -> Result<&'a [u8], EditProblem> {
        let len = self.v32(field)? as usize;
        if len > self.0.len() {
            return Err(EditProblem::Truncated { field });
        }
        let (bytes, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(bytes)
    }
    fn level(&mut self) -> Result<u32, EditProblem> {
        let level = self.v32("level")?;
        match level < MAX_LEVELS {
            true => Ok(level),
            false => Err(EditProblem::LevelOutOfRange {
                level,
                limit: MAX_LEVELS,
            }),
        }
    }
    fn key(&mut self, field: &'static str) -> Result<Vec<u8>, EditProblem> {
        let key = self.bytes(field)?;
        match key.len() >= 8 {
            true => Ok(key.to_vec()),
            false => Err(EditProblem::ShortKey { len: key.len() }),
        }
    }
    /// RocksDB's custom fields (of a new file, a blob file): tag and
    /// length-prefixed value pairs up to the terminating tag `end` (1 for a
    /// new file, 0 for a blob file's records); `each` takes the ones it
    /// knows and says whether it did.
    fn custom(
        &mut self,
        field: &'static str,
        end: u32,
        mut each: impl FnMut(u32, &[u8]) -> Result<bool, EditProblem>,
    ) -> Result<(), EditProblem> {
        loop {
            let tag = self.v32(field)?;
            if tag == end {
                return Ok(());
            }
            let value = self.bytes(field)?;
            if !each(tag, value)? && tag & (1 << 6) != 0 {
                return Err(EditProblem::UnknownRequiredField { tag });
            }
        }
    }
}

/// RocksDB's tags past this bit are safe to ignore where unknown.
const SAFE_TO_IGNORE: u32 = 1 << 13;

impl Edit {
    /// LevelDB's and RocksDB's `VersionEdit::DecodeFrom`.
    fn decode(bytes: &[u8]) -> Result<Edit, EditProblem> {
        let mut edit = Edit::default();
        let mut input = Fields(bytes);
        while !input.0.is_empty() {
            let tag = input.v32("tag")?;
            edit.rocksdb |= tag >= 10;
            if let Some(given) = [2, 3, 4].iter().position(|&t| t == tag) {
                edit.given[given] = true;
            }
            match tag {
                1 => {
                    let name = input.bytes("comparator name")?;
                    edit.comparator = Some(String::from_utf8_lossy(name).into_owned());
                }
                2 => edit.log_number = Some(input.v64("log number")?),
                9 => edit.prev_log_number = Some(input.v64("previous log number")?),
                3 | 4 | 10 => {
                    input.v64("file or sequence number")?;
                }
                5 => {
                    input.level()?;
                    input.key("compaction cursor")?;
                }
                6 => {
                    let level = input.level()?;
                    edit.deleted.push((level, input.v64("deleted file")?));
                }
                7 | 100 | 102 | 103 => edit.added.push(new_file(tag, &mut input)?),
                200 => edit.column_family = input.v32("set column family id")?,
                201 => {
                    let name = input.bytes("column family add")?;
                    edit.add_family = Some(String::from_utf8_lossy(name).into_owned());
                }
                202 => edit.drop_family = true,
                203 => {
                    input.v32("max column family")?;
                }
                300 => edit.remaining_in_group = Some(input.v32("remaining entries")?),
                // Blob file addition, and garbage (and their deprecated
                // forms past the ignore bit): the file's number, a count of
                // blobs and their bytes, for an addition its checksum's
                // method and value, then custom fields to tag 0
                // (`BlobFileAddition::DecodeFrom`).
                400 | 401 | 8194 | 8195 => {
                    let number = input.v64("blob file number")?;
                    let counts = (input.v64("blob count")?, input.v64("blob bytes")?);
                    let addition = tag == 400 || tag == 8194;
                    if addition {
                        input.bytes("blob file checksum method")?;
                        input.bytes("blob file checksum value")?;
                    }
                    input.custom("blob file custom field", 0, |_, _| Ok(false))?;
                    edit.blobs.push((number, addition, counts));
                }
                // WAL addition: its number and tagged fields to tag 1.
                8196 => {
                    input.v64("WAL log number")?;
                    loop {
                        match input.v32("WAL addition tag")? {
                            1 => break,
                            2 => {
                                input.v64("WAL file size")?;
                            }
                            tag => return Err(EditProblem::UnknownTag { tag }),
                        }
                    }
                }
                8197 => {
                    input.v64("WAL log number")?;
                }
                tag if tag & SAFE_TO_IGNORE != 0 => {
                    input.bytes("safely ignorable tag")?;
                }
                tag => return Err(EditProblem::UnknownTag { tag }),
            }
        }
        Ok(edit)
    }
}

/// A new-file entry: LevelDB's (tag 7) and RocksDB's three later forms.
fn new_file(tag: u32, input: &mut Fields<'_>) -> Result<LiveTable, EditProblem> {
    let level = input.level()?;
    let number = input.v64("new-file number")?;
    let path_id = if tag == 102 {
        input.v32("new-file path id")?
    } else {
        0
    };
    let size = input.v64("new-file size")?;
    let smallest = input.key("new-file smallest key")?;
    let largest = input.key("new-file largest key")?;
    let mut table = LiveTable {
        column_family: 0,
        level,
        number,
        size,
        smallest,
        largest,
        seqnos: (0, 0),
        epoch_number: None,
        path_id,
        oldest_blob_file: 0,
        timestamps_persisted: true,
    };
    if tag != 7 {
        table.seqnos = (input.v64("smallest seqno")?, input.v64("largest seqno")?);
    }
    if tag == 103 {
        input.custom("new-file4 custom field", 1, |tag, value| {
            match tag {
                // kPathId: one byte.
                65 => match value {
                    [id] => table.path_id = u32::from(*id),
                    _ => return Err(EditProblem::Truncated { field: "path id" }),
                },
                // kEpochNumber: a varint64.
                13 => {
                    let (epoch, _) = varint64(value).ok_or(EditProblem::Truncated {
                        field: "epoch number",
                    })?;
                    table.epoch_number = Some(epoch);
                }
                // kUserDefinedTimestampsPersisted: one byte, 1 or not.
                16 => match value {
                    [persisted] => table.timestamps_persisted = *persisted == 1,
                    _ => {
                        return Err(EditProblem::Truncated {
                            field: "user-defined timestamps persisted",
                        })
                    }
                },
                // kOldestBlobFileNumber: a varint64.
                4 => {
                    let (number, _) = varint64(value).ok_or(EditProblem::Truncated {
                        field: "oldest blob file number",
                    })?;
                    table.oldest_blob_file = number;
                }
                // The others RocksDB knows (need-compaction, times,
                // checksums, temperature, timestamps, unique id, sizes).
                2..=17 => {}
                _ => return Ok(false),
            }
            Ok(true)
        })?;
    }
    Ok(table)
}

/// The version being built as edits are applied.
#[derive(Default)]
struct Replay {
    comparators: BTreeMap<u32, String>,
    families: BTreeMap<u32, String>,
    /// Each family's live tables, by file number: a dropped family goes
    /// at once, whatever it holds.
    live: HashMap<u32, HashMap<u64, LiveTable>>,
    /// Each family's blob files, by number, as added and since collected.
    blobs: HashMap<u32, BTreeMap<u64, BlobFile>>,
    log_numbers: BTreeMap<u32, u64>,
    prev_log_number: u64,
    group: Vec<Edit>,
    edits: usize,
    /// Whether an edit gave the log number, the next file number and the
    /// last sequence number, without which neither engine opens the
    /// database.
    seen: [bool; 3],
    rocksdb: bool,
    /// The first edit (its offset) adding a table below LevelDB's levels.
    deep: Option<(u64, u32)>,
}

impl Replay {
    fn apply(&mut self, edit: Edit, offset: u64) -> Result<(), EditProblem> {
        self.rocksdb |= edit.rocksdb;
        if let Some(level) = edit.added.iter().map(|t| t.level).find(|&l| l >= 7) {
            self.deep.get_or_insert((offset, level));
        }
        for (seen, given) in self.seen.iter_mut().zip(edit.given) {
            *seen |= given;
        }
        match edit.remaining_in_group {
            // An atomic group takes effect when its last edit is read; one
            // the log ends inside never does (RocksDB's `AtomicGroupReadBuffer`).
            Some(remaining) => {
                self.group.push(edit);
                if remaining == 0 {
                    for edit in std::mem::take(&mut self.group) {
                        self.apply_one(edit)?;
                    }
                }
            }
            // An edit of no group while a group is open: RocksDB's error.
            None if !self.group.is_empty() => return Err(EditProblem::OutsideAtomicGroup),
            None => self.apply_one(edit)?,
        }
        Ok(())
    }

    fn apply_one(&mut self, edit: Edit) -> Result<(), EditProblem> {
        self.edits += 1;
        let family = edit.column_family;
        if let Some(number) = edit.log_number {
            self.log_numbers.insert(family, number);
        }
        if let Some(number) = edit.prev_log_number {
            self.prev_log_number = number;
        }
        if let Some(name) = edit.comparator {
            self.comparators.entry(family).or_insert(name);
        }
        if let Some(name) = edit.add_family {
            self.families.insert(family, name);
        } else if edit.drop_family {
            self.families.remove(&family);
            self.live.remove(&family);
            self.blobs.remove(&family);
            self.log_numbers.remove(&family);
            return Ok(());
        }
        let live = self.live.entry(family).or_default();
        for (level, number) in edit.deleted {
            if live.get(&number).is_some_and(|t| t.level == level) {
                live.remove(&number);
            }
        }
        for mut table in edit.added {
            table.column_family = family;
            live.insert(table.number, table);
        }
        // `VersionBuilder::ApplyBlobFileAddition` and `...Garbage`.
        let blobs = self.blobs.entry(family).or_default();
        for (number, addition, counts) in edit.blobs {
            match (addition, blobs.get_mut(&number)) {
                (true, Some(_)) => return Err(EditProblem::BlobFileAddedTwice { number }),
                (true, None) => {
                    let blob = BlobFile {
                        column_family: family,
                        number,
                        total: counts,
                        garbage: (0, 0),
                    };
                    blobs.insert(number, blob);
                }
                (false, None) => return Err(EditProblem::BlobFileUnknown { number }),
                (false, Some(blob)) => {
                    let count = blob.garbage.0.checked_add(counts.0);
                    let bytes = blob.garbage.1.checked_add(counts.1);
                    match (count, bytes) {
                        (Some(c), Some(b)) if c <= blob.total.0 && b <= blob.total.1 => {
                            blob.garbage = (c, b);
                        }
                        _ => return Err(EditProblem::BlobGarbageOverflow { number }),
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Manifest, ManifestError> {
        for (seen, field) in
            self.seen
                .iter()
                .zip(["log number", "next file number", "last sequence number"])
        {
            if !*seen {
                return Err(ManifestError::Missing { field });
            }
        }
        // LevelDB has 7 levels (`config::kNumLevels`); RocksDB as many as
        // its options say.
        if let Some((offset, level)) = self.deep.filter(|_| !self.rocksdb) {
            return Err(ManifestError::Edit {
                offset,
                what: EditProblem::LevelOutOfRange { level, limit: 7 },
            });
        }
        self.families
            .entry(0)
            .or_insert_with(|| "default".to_string());
        let mut tables = Vec::new();
        for (&family, live) in &mut self.live {
            let order = key_order(self.comparators.get(&family).map(String::as_str))
                .unwrap_or(KeyOrder::Bytewise);
            // RocksDB orders level 0 by epoch only where every table of
            // the family has one (`PromoteEpochNumberRequirementIfNeeded`).
            let epochs = live.values().all(|t| t.epoch_number.is_some_and(|e| e > 0));
            let mut family_tables: Vec<LiveTable> = live.drain().map(|(_, t)| t).collect();
            if !epochs {
                family_tables.iter_mut().for_each(|t| t.epoch_number = None);
            }
            family_tables.sort_by(|a, b| {
                a.level.cmp(&b.level).then_with(|| match a.level {
                    0 => a.newest_first(b),
                    _ => order
                        .compare(a.smallest_user_key(), b.smallest_user_key())
                        .then(a.number.cmp(&b.number)),
                })
            });
            tables.extend(family_tables);
        }
        tables.sort_by_key(|t| t.column_family);
        let blob_files = live_blob_files(&tables, self.blobs);
        Ok(Manifest {
            comparators: self.comparators,
            column_families: self.families,
            tables,
            blob_files,
            log_numbers: self.log_numbers,
            prev_log_number: self.prev_log_number,
            edits: self.edits,
            truncated_tail: false,
            engine: match self.rocksdb {
                true => Engine::RocksDb,
                false => Engine::LevelDb,
            },
        })
    }
}

/// The blob files a version holds (`VersionBuilder::SaveBlobFilesTo`):
/// from the oldest one a live table links to (the oldest its blob indexes
/// name) on, less those no table links to whose blobs are all garbage.
fn live_blob_files(
    tables: &[LiveTable],
    blobs: HashMap<u32, BTreeMap<u64, BlobFile>>,
) -> Vec<BlobFile> {
    let mut out = Vec::new();
    let mut families: Vec<_> = blobs.into_iter().collect();
    families.sort_by_key(|(family, _)| *family);
    for (family, files) in families {
        let linked: std::collections::BTreeSet<u64> = tables
            .iter()
            .filter(|t| t.column_family == family && files.contains_key(&t.oldest_blob_file))
            .map(|t| t.oldest_blob_file)
            .collect();
        let Some(&oldest) = linked.first() else {
            continue;
        };
        out.extend(files.into_values().filter(|b| {
            b.number >= oldest && (linked.contains(&b.number) || b.garbage.0 < b.total.0)
        }));
    }
    out
}

#[cfg(test)]
mod tests;
