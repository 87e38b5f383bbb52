//! What can be wrong with a database's `CURRENT` and MANIFEST.

use std::fmt;

use super::RecordProblem;

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
    /// Pebble's virtual table whose backing table no edit created, or one
    /// removed while the table is live.
    NoBacking {
        /// The virtual table's file number.
        table: u64,
        /// The backing table's file number.
        backing: u64,
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
    /// A level past the engine's: LevelDB's 7, or [`MAX_LEVELS`](super::MAX_LEVELS).
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
    /// Pebble's bounds marker of a table without point keys that says a
    /// bound is a point key's.
    BoundsMarker {
        /// The marker byte.
        marker: u8,
    },
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
            ManifestError::NoBacking { table, backing } => write!(
                f,
                "virtual table {table} is backed by table {backing}, which no edit created or one removed (Pebble will not open the database)"
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
            EditProblem::BoundsMarker { marker } => write!(
                f,
                "bounds marker {marker:#04x} of a table without point keys names a point key bound"
            ),
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
