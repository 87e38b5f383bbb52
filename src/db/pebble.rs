//! Where Pebble's `Get` looks (`getIter`): the memtables, then each
//! sublevel of level 0 newest first, then each deeper level, one table in
//! each. Which table differs between releases:
//!
//! - v2 reads the table whose point keys' bounds hold the key, if any
//!   (Pebble splits no user key across the tables of a level or sublevel).
//!   Among the tables of level 0 that hold a key, the sublevels' order is
//!   the tables' order by largest sequence number, newest first: a table
//!   that overlaps an older one lies in a higher sublevel.
//! - v1's level iterator reads the first table whose largest key is at or
//!   past the key, even where the key lies below its smallest: its filter
//!   is asked, and may rule the key out. Level 0's sublevels are then
//!   needed as Pebble builds them (`NewL0Sublevels`).
//!
//! In both, a table of range keys alone is never read, a bound that is a
//! range deletion's or range key's end (an exclusive sentinel) does not hold
//! its own user key, and no filter of a level-6 table is asked
//! (`UseL6Filters` is off in a `Get`).

use std::cmp::Ordering;

use super::{KeyOrder, LiveTable, Manifest};
use crate::format::{user_key, TableStep, MAX_SEQUENCE};
use crate::pebble::Table;
use crate::Error;

/// The Pebble release whose `Get` a walk follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PebbleGet {
    /// v1 (format major versions up to 16): the first table at or past the
    /// key in each level and sublevel.
    V1,
    /// v2 (format major versions from 13): the table holding the key.
    #[default]
    V2,
}

impl PebbleGet {
    /// The release that opened the database last: by its format major
    /// version where only one release writes it (v1 up to 12, v2 from 17),
    /// else (13 to 16) by its newest OPTIONS file, which v2 writes with a
    /// `key_schema` and v1 without.
    pub fn of(format: Option<u64>, options: Option<&str>) -> PebbleGet {
        let key_schema = || options.and_then(|o| super::options_value(o, "Options", "key_schema"));
        match format {
            None | Some(0..=12) => PebbleGet::V1,
            Some(17..) => PebbleGet::V2,
            Some(_) if key_schema().is_some() => PebbleGet::V2,
            Some(_) => PebbleGet::V1,
        }
    }
}

/// The most level-0 tables whose sublevels are built for v1's order (the
/// work grows with their square); past it, v2's order (the tables holding
/// the key, which v1 reads too) stands in.
const MAX_SUBLEVEL_TABLES: usize = 4096;

impl Manifest {
    /// [`Manifest::get_order`] for Pebble: `family` the family's tables in
    /// the manifest's order (level 0 newest first, then by smallest key).
    pub(super) fn pebble_get_order<'m>(
        &self,
        family: &[&'m LiveTable],
        order: KeyOrder,
        key: &[u8],
    ) -> Vec<&'m LiveTable> {
        let level_0 = family.iter().take_while(|t| t.level == 0).count();
        let (level_0, mut rest) = family.split_at(level_0);
        let v1 = self.pebble_get == PebbleGet::V1 && level_0.len() <= MAX_SUBLEVEL_TABLES;
        let mut found: Vec<&LiveTable> = match v1 {
            true => sublevels(level_0, order)
                .iter()
                .rev()
                .filter_map(|sublevel| first_at_or_past(sublevel, order, key))
                .collect(),
            false => level_0
                .iter()
                .copied()
                .filter(|t| t.pebble_holds(order, key))
                .collect(),
        };
        while let Some(first) = rest.first() {
            let count = rest.iter().take_while(|t| t.level == first.level).count();
            let (tables, deeper) = rest.split_at(count);
            rest = deeper;
            let table = first_at_or_past(tables, order, key);
            found.extend(
                table.filter(|t| self.pebble_get == PebbleGet::V1 || t.pebble_holds(order, key)),
            );
        }
        found
    }

    /// Whether a `Get` asks `table`'s filter: not a level-6 table's in
    /// Pebble's (its `Get` does not set `UseL6Filters`).
    pub fn asks_filter(&self, table: &LiveTable) -> bool {
        !(self.engine == super::Engine::Pebble && table.level == 6)
    }

    /// The Pebble release whose `Get` [`Manifest::get_order`] follows
    /// (`None`: not Pebble's MANIFEST). v2's unless
    /// [`Manifest::in_directory`] found the database to be v1's.
    pub fn pebble_get(&self) -> Option<PebbleGet> {
        (self.engine == super::Engine::Pebble).then_some(self.pebble_get)
    }
}

/// The first table of a level's or sublevel's (sorted by smallest key, not
/// overlapping) whose point keys reach the key (`LevelIterator.SeekGE` on
/// point keys): its largest point key past the key, or at it and no
/// exclusive sentinel; tables of range keys alone passed over.
fn first_at_or_past<'m>(
    tables: &[&'m LiveTable],
    order: KeyOrder,
    key: &[u8],
) -> Option<&'m LiveTable> {
    let at = tables.partition_point(|t| order.compare(t.largest_user_key(), key) == Ordering::Less);
    tables[at..].iter().copied().find(|t| {
        t.point_bounds()
            .is_some_and(|(_, largest)| match order.compare(user_key(largest), key) {
                Ordering::Greater => true,
                Ordering::Less => false,
                Ordering::Equal => !exclusive_sentinel(largest),
            })
    })
}

/// Level 0's sublevels as Pebble's `NewL0Sublevels` builds them: the
/// tables taken oldest first (by largest sequence number, then smallest,
/// then number), each in the sublevel above the highest of the tables it
/// overlaps (an exclusive bound overlaps nothing at its key); each
/// sublevel sorted by smallest key. `level_0` is newest first.
fn sublevels<'m>(level_0: &[&'m LiveTable], order: KeyOrder) -> Vec<Vec<&'m LiveTable>> {
    let less = |a: IntervalKey<'_>, b: IntervalKey<'_>| {
        order.compare(a.0, b.0).then(a.1.cmp(&b.1)) == Ordering::Less
    };
    let mut placed: Vec<(&LiveTable, usize)> = Vec::with_capacity(level_0.len());
    let mut levels: Vec<Vec<&LiveTable>> = Vec::new();
    for &table in level_0.iter().rev() {
        let (start, end) = interval(table);
        let sublevel = placed
            .iter()
            .filter(|(other, _)| {
                let (other_start, other_end) = interval(other);
                less(start, other_end) && less(other_start, end)
            })
            .map(|(_, sublevel)| sublevel + 1)
            .max()
            .unwrap_or(0);
        placed.push((table, sublevel));
        if sublevel == levels.len() {
            levels.push(Vec::new());
        }
        levels[sublevel].push(table);
    }
    for level in &mut levels {
        level.sort_by(|a, b| order.compare(a.smallest_user_key(), b.smallest_user_key()));
    }
    levels
}

/// A key of Pebble's sublevel intervals: a user key, and whether it is an
/// inclusive end, which sorts after a start or exclusive end at the same
/// key.
type IntervalKey<'a> = (&'a [u8], bool);

/// A level-0 table's interval: its start, and its end.
fn interval(table: &LiveTable) -> (IntervalKey<'_>, IntervalKey<'_>) {
    let end = (
        table.largest_user_key(),
        !exclusive_sentinel(&table.largest),
    );
    ((table.smallest_user_key(), false), end)
}

impl LiveTable {
    /// What a `Get` of `key` meets at the table, given `step`, its backing
    /// file's step (and covering range deletion): Pebble reads a virtual
    /// table within its bounds alone, so where v1 reads one whose bounds
    /// do not hold the key (the first at or past it), the filter still
    /// answers, but the backing's entries of the key and range deletions
    /// over it are not the table's. Under an order this crate does not
    /// know (`None`), the step stands.
    pub fn virtual_step(
        &self,
        order: Option<KeyOrder>,
        key: &[u8],
        step: (TableStep, u64),
    ) -> (TableStep, u64) {
        let (Some(order), Some(_)) = (order, self.backing()) else {
            return step;
        };
        if self.pebble_holds(order, key) {
            return step;
        }
        match step.0 {
            TableStep::Read(_) => (TableStep::Read(Vec::new()), 0),
            other => (other, 0),
        }
    }

    /// Whether the table's point keys' bounds hold `key`, an exclusive
    /// largest bound excluded.
    fn pebble_holds(&self, order: KeyOrder, key: &[u8]) -> bool {
        let Some((smallest, largest)) = self.point_bounds() else {
            return false;
        };
        if order.compare(user_key(smallest), key) == Ordering::Greater {
            return false;
        }
        match order.compare(user_key(largest), key) {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal => !exclusive_sentinel(largest),
        }
    }
}

/// Whether an internal key is Pebble's exclusive sentinel: a range
/// deletion's or range key's end, at the largest sequence number
/// (`InternalKey.IsExclusiveSentinel`).
pub(super) fn exclusive_sentinel(internal_key: &[u8]) -> bool {
    let Some(at) = internal_key.len().checked_sub(8) else {
        return false;
    };
    let trailer = u64::from_le_bytes(internal_key[at..].try_into().unwrap_or_default());
    // RANGEDEL (15) and the range key kinds (19 to 21).
    trailer >> 8 == MAX_SEQUENCE && matches!(trailer & 0xff, 0x0f | 0x13..=0x15)
}

/// Pebble's `Get` step at `table` without its filter (a level-6 table's,
/// [`Manifest::asks_filter`]): [`Table::get_step`], where the filter rules
/// the key out, the data block read instead, which holds no entry of the
/// key (a filter rules out no key its table holds).
pub fn pebble_step_without_filter(
    table: &Table<'_>,
    key: &[u8],
) -> Result<(TableStep, u64), Error> {
    let (step, covering) = table.get_step(key)?;
    Ok(match step {
        TableStep::Absent if table.comparer().is_some() => {
            let step = match table.data_block_for(key)? {
                Some(_) => TableStep::Read(Vec::new()),
                None => TableStep::PastLastKey,
            };
            (step, covering)
        }
        // Under a comparer whose order this crate does not know, only the
        // filter could have said anything.
        TableStep::Absent => (TableStep::Unordered, covering),
        step => (step, covering),
    })
}
