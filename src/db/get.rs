//! A `Get` walked through the tables it consults, newest first, as
//! LevelDB's `Version::Get` and RocksDB's `GetContext` decide where it
//! stops and what it returns: the first value ends it found, a deletion
//! ends it not found, merge operands read on to a base value (and are
//! merged, found, whatever ends them), and a range tombstone covers every
//! older entry of the key in its own table, and ends the walk there
//! (RocksDB's `Version::Get` reads no table past one whose tombstone
//! covers the key: they hold only older entries). Pebble's `Get` reads on
//! past a point deletion ([`GetWalk::new`]).
//!
//! ```
//! use leveldb_filter::db::{GetWalk, Outcome, TableStep};
//! use leveldb_filter::format::{EntryKind, KeyEntry};
//!
//! let entry = |kind, sequence| KeyEntry { kind, sequence };
//! let mut walk = GetWalk::default();
//! assert!(walk.step(&TableStep::Absent, 0));
//! // Operands newer than a range tombstone (at 90) of the same table, over
//! // a value it covers: merged over nothing, found.
//! let entries = vec![entry(EntryKind::Merge, 95), entry(EntryKind::Value, 40)];
//! assert!(!walk.step(&TableStep::Read(entries), 90));
//! assert_eq!((walk.outcome(), walk.merges()), (Outcome::Found, 1));
//! ```

use std::fmt;

use super::Engine;
use crate::format::{EntryKind, TableStep};

/// How a `Get` ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It returns a value: a value, a blob, an entity, or merge operands
    /// merged (over a base value, a deletion or nothing).
    Found,
    /// A point or single deletion is the newest entry: NotFound.
    Deleted,
    /// A range tombstone covers the key past the newest entries read:
    /// NotFound.
    RangeDeleted,
    /// No table holds an entry of the key: NotFound.
    NotFound,
    /// Tables of a comparator this crate does not know may hold the key.
    Unknown,
    /// A table on its path is missing or damaged, or holds an entry of a
    /// type no engine writes.
    Fails,
}

impl Outcome {
    /// The outcome's name in `ldbfilter`'s output.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Found => "found",
            Outcome::Deleted => "deleted",
            Outcome::RangeDeleted => "range-deleted",
            Outcome::NotFound => "not-found",
            Outcome::Unknown => "unknown",
            Outcome::Fails => "fails",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `Get` in progress: the range tombstones met so far, the merge
/// operands, and how it ended, if it has.
#[derive(Clone, Debug, Default)]
pub struct GetWalk {
    covering: u64,
    merges: usize,
    unordered: bool,
    end: Option<Outcome>,
    /// Pebble's: a point deletion ends the outcome, not the reading.
    past_deletions: bool,
}

impl GetWalk {
    /// A `Get` of `engine`'s. Pebble's iterator, having met a point
    /// deletion, looks for the key's older entries to pass over them: it
    /// reads on, level after level, to the last, or to one whose range
    /// deletion covers the key; the `Get` returns not found all the same.
    /// (The tables it reads then ask their filters, which Pebble counts.)
    pub fn new(engine: Engine) -> GetWalk {
        GetWalk {
            past_deletions: engine == Engine::Pebble,
            ..GetWalk::default()
        }
    }

    /// Takes the next table's step, with the largest sequence number of
    /// that table's range tombstones covering the key (0: none), which
    /// RocksDB takes before it asks the filter; returns whether the `Get`
    /// reads on to the next table: not past a table whose tombstone covers
    /// the key.
    pub fn step(&mut self, step: &TableStep, covering: u64) -> bool {
        if self.end.is_some() {
            return self.reads_on(covering);
        }
        self.covering = self.covering.max(covering);
        match step {
            TableStep::Corrupt => self.end = Some(Outcome::Fails),
            TableStep::Unordered => self.unordered = true,
            TableStep::Read(entries) => {
                for entry in entries {
                    let end = match entry.kind {
                        _ if self.covering > entry.sequence => Some(Outcome::RangeDeleted),
                        EntryKind::Merge => None,
                        kind if kind.is_value() => Some(Outcome::Found),
                        kind if kind.is_deletion() => Some(Outcome::Deleted),
                        _ => Some(Outcome::Fails),
                    };
                    self.merges += usize::from(entry.kind == EntryKind::Merge && end.is_none());
                    if let Some(end) = end {
                        self.end = Some(self.merged(end));
                        break;
                    }
                }
            }
            TableStep::PastLastKey | TableStep::Absent => {}
        }
        if self.end.is_none() && self.covering > 0 {
            self.end = Some(self.merged(Outcome::RangeDeleted));
        }
        self.end.is_none() || self.reads_on(covering)
    }

    /// Whether a `Get` that has its outcome reads on past a table whose
    /// range deletions cover the key at `covering`: Pebble's past a point
    /// deletion, while no range deletion covers the key.
    fn reads_on(&self, covering: u64) -> bool {
        self.past_deletions && self.end == Some(Outcome::Deleted) && covering == 0
    }

    /// Merge operands merge into a value whatever ends them, but a failure;
    /// after a table that could not be sought (which may hold newer
    /// entries), only a failure is sure.
    fn merged(&self, end: Outcome) -> Outcome {
        match (self.merges, end) {
            (_, Outcome::Fails) => Outcome::Fails,
            _ if self.unordered => Outcome::Unknown,
            (0, end) => end,
            _ => Outcome::Found,
        }
    }

    /// How the `Get` ends (after the last table: not found, unless merge
    /// operands were met, or a table could not be sought).
    pub fn outcome(&self) -> Outcome {
        match self.end {
            Some(end) => end,
            None if self.merges > 0 => Outcome::Found,
            None if self.unordered => Outcome::Unknown,
            None => Outcome::NotFound,
        }
    }

    /// The merge operands met.
    pub fn merges(&self) -> usize {
        self.merges
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::KeyEntry;

    fn read(entries: &[(EntryKind, u64)]) -> TableStep {
        let entries = entries
            .iter()
            .map(|&(kind, sequence)| KeyEntry { kind, sequence })
            .collect();
        TableStep::Read(entries)
    }

    fn walk(steps: &[(TableStep, u64)]) -> (Outcome, usize) {
        let mut walk = GetWalk::default();
        let mut taken = 0;
        for (step, covering) in steps {
            taken += 1;
            if !walk.step(step, *covering) {
                break;
            }
        }
        (walk.outcome(), taken)
    }

    #[test]
    fn the_newest_entry_decides() {
        use EntryKind::*;
        let later = (read(&[(Value, 1)]), 0);
        assert_eq!(
            walk(&[(read(&[(Value, 9)]), 0), later.clone()]),
            (Outcome::Found, 1)
        );
        assert_eq!(
            walk(&[(read(&[(Deletion, 9)]), 0), later.clone()]),
            (Outcome::Deleted, 1)
        );
        assert_eq!(
            walk(&[(read(&[(SingleDeletion, 9)]), 0), later.clone()]),
            (Outcome::Deleted, 1)
        );
        assert_eq!(walk(&[(read(&[(BlobIndex, 9)]), 0)]), (Outcome::Found, 1));
        assert_eq!(walk(&[(read(&[(Entity, 9)]), 0)]), (Outcome::Found, 1));
        assert_eq!(
            walk(&[(read(&[(Other(0x42), 9)]), 0), later.clone()]),
            (Outcome::Fails, 1)
        );
        assert_eq!(
            walk(&[(TableStep::Absent, 0), (read(&[]), 0)]),
            (Outcome::NotFound, 2)
        );
        assert_eq!(
            walk(&[(TableStep::Corrupt, 0), later.clone()]),
            (Outcome::Fails, 1)
        );
        assert_eq!(
            walk(&[(TableStep::Unordered, 0), (read(&[]), 0)]),
            (Outcome::Unknown, 2)
        );
        // A newer table that could not be sought may hold a newer entry.
        let steps = [(TableStep::Unordered, 0), (read(&[(Value, 1)]), 0)];
        assert_eq!(walk(&steps), (Outcome::Unknown, 2));
    }

    #[test]
    fn merges_read_on_and_merge_into_a_value() {
        use EntryKind::*;
        // Operands, then a deletion two tables on: merged over nothing.
        let steps = [
            (read(&[(Merge, 9), (Merge, 8)]), 0),
            (TableStep::Absent, 0),
            (read(&[(Deletion, 5)]), 0),
            (read(&[(Value, 1)]), 0),
        ];
        let mut walk = GetWalk::default();
        let read_on: Vec<bool> = steps.iter().map(|(s, c)| walk.step(s, *c)).collect();
        assert_eq!(read_on, [true, true, false, false]);
        assert_eq!((walk.outcome(), walk.merges()), (Outcome::Found, 2));
        // Operands alone.
        assert_eq!(walk_of(&[(read(&[(Merge, 3)]), 0)]), Outcome::Found);
        // A value under operands in the same table ends it there.
        assert_eq!(
            walk_of(&[(read(&[(Merge, 3), (Value, 2)]), 0)]),
            Outcome::Found
        );
    }

    fn walk_of(steps: &[(TableStep, u64)]) -> Outcome {
        walk(steps).0
    }

    #[test]
    fn pebbles_get_reads_past_a_deletion_to_a_range_deletion() {
        use EntryKind::*;
        let mut walk = GetWalk::new(Engine::Pebble);
        // A deletion, then older tables: read (their entries hidden), to
        // the one whose range deletion covers the key.
        assert!(walk.step(&read(&[(Deletion, 9)]), 0));
        assert!(walk.step(&TableStep::Absent, 0));
        assert!(walk.step(&read(&[(Value, 5)]), 0));
        assert!(!walk.step(&read(&[]), 3));
        assert_eq!(walk.outcome(), Outcome::Deleted);
        // A deletion in a table whose range deletion covers the key: no
        // further.
        let mut walk = GetWalk::new(Engine::Pebble);
        assert!(!walk.step(&read(&[(SingleDeletion, 9)]), 4));
        // A value ends it; so does a deletion elsewhere.
        let mut walk = GetWalk::new(Engine::Pebble);
        assert!(!walk.step(&read(&[(Value, 9)]), 0));
        let mut walk = GetWalk::new(Engine::RocksDb);
        assert!(!walk.step(&read(&[(Deletion, 9)]), 0));
        assert_eq!(walk.outcome(), Outcome::Deleted);
    }

    #[test]
    fn a_range_tombstone_covers_older_entries_in_its_table_and_ends_the_walk() {
        use EntryKind::*;
        // Newer than the tombstone: found.
        assert_eq!(walk_of(&[(read(&[(Value, 50)]), 40)]), Outcome::Found);
        // Older, in the same table; and no table after it is read.
        let covered = walk_of(&[(read(&[(Value, 30)]), 40)]);
        assert_eq!(covered, Outcome::RangeDeleted);
        let steps = [(TableStep::Absent, 40), (read(&[(Value, 30)]), 0)];
        assert_eq!(walk(&steps), (Outcome::RangeDeleted, 1));
        let steps = [(read(&[]), 40), (read(&[(Value, 50)]), 0)];
        assert_eq!(walk(&steps), (Outcome::RangeDeleted, 1));
        // Operands over a covered value merge into a value.
        let steps = [(read(&[(Merge, 60)]), 0), (read(&[(Value, 30)]), 40)];
        assert_eq!(walk_of(&steps), Outcome::Found);
    }
}
