//! What a `Get` meets at one table: an entry of its key (what it is, from
//! the type byte of its internal key, LevelDB's two and RocksDB's others,
//! and its sequence number), and how the table's index, filter and data
//! block answer it.

/// The kind of an entry, from its internal key's type byte (RocksDB's
/// `ValueType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntryKind {
    /// 0x1 (and 0x18, a value with a preferred sequence number).
    Value,
    /// 0x0, and 0x14 (a deletion with a timestamp, in a table).
    Deletion,
    /// 0x7: a single deletion.
    SingleDeletion,
    /// 0x2: a merge operand; a `Get` reads on to the base value.
    Merge,
    /// 0x11: a reference to a value in a blob file.
    BlobIndex,
    /// 0x16: a wide-column entity.
    Entity,
    /// Any other type byte, which no table RocksDB writes holds.
    Other(u8),
}

impl EntryKind {
    /// The kind of type byte `byte`.
    pub fn of(byte: u8) -> EntryKind {
        match byte {
            0x1 | 0x18 => EntryKind::Value,
            0x0 | 0x14 => EntryKind::Deletion,
            0x7 => EntryKind::SingleDeletion,
            0x2 => EntryKind::Merge,
            0x11 => EntryKind::BlobIndex,
            0x16 => EntryKind::Entity,
            other => EntryKind::Other(other),
        }
    }

    /// Its name in `ldbfilter`'s output.
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::Value => "value",
            EntryKind::Deletion => "deletion",
            EntryKind::SingleDeletion => "single-deletion",
            EntryKind::Merge => "merge",
            EntryKind::BlobIndex => "blob-index",
            EntryKind::Entity => "entity",
            EntryKind::Other(_) => "other",
        }
    }

    /// Whether a `Get` that meets it returns a value (a value, a blob, an
    /// entity).
    pub fn is_value(self) -> bool {
        matches!(
            self,
            EntryKind::Value | EntryKind::BlobIndex | EntryKind::Entity
        )
    }

    /// Whether a `Get` that meets it stops with NotFound.
    pub fn is_deletion(self) -> bool {
        matches!(self, EntryKind::Deletion | EntryKind::SingleDeletion)
    }
}

/// An entry of a key in a table: its kind and sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyEntry {
    /// What the entry is.
    pub kind: EntryKind,
    /// Its sequence number (0 once a compaction to the last level zeroed it).
    pub sequence: u64,
}

/// What one table gives a `Get`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableStep {
    /// The key lies outside the table's keys: its index has no block for it.
    PastLastKey,
    /// The filter rules the key out: the data block is not read.
    Absent,
    /// The data block is read: the key's entries in it, newest first
    /// (none: the filter's "may match" was a false positive).
    Read(Vec<KeyEntry>),
    /// The table orders keys by a comparator this crate does not know, and
    /// its filters may hold the key: nothing can be sought in it.
    Unordered,
    /// The table is missing or damaged: the `Get` fails here.
    Corrupt,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_bytes_name_their_entries() {
        assert!(EntryKind::of(1).is_value());
        assert!(EntryKind::of(0x11).is_value());
        assert!(EntryKind::of(0x16).is_value());
        assert!(EntryKind::of(0).is_deletion());
        assert!(EntryKind::of(7).is_deletion());
        assert!(EntryKind::of(0x14).is_deletion());
        assert_eq!(EntryKind::of(2), EntryKind::Merge);
        assert_eq!(EntryKind::of(0x42), EntryKind::Other(0x42));
    }
}
