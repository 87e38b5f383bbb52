//! What Pebble's `Get` meets at one table: the filter, asked first with
//! the key's `Split` prefix (`SeekPrefixGE`), then the key's entries in the
//! data block the index points it to, and the range deletions that cover
//! the key.

use std::cmp::Ordering;

use super::filter::{may_contain, FilterAnswer};
use super::keys::INDEX;
use super::tombstones::Tombstones;
use super::{Comparer, Table};
use crate::format::{BlockHandle, BlockKind, Corruption, EntryKind, KeyEntry, Limit, TableStep};
use crate::Error;

impl Table<'_> {
    /// What the table's filter answers for user key `key`: `None` where
    /// nothing can be asked (no filter, a comparer whose split this crate
    /// does not know) and a lookup reads on.
    pub fn filter_answer(&self, key: &[u8]) -> Option<FilterAnswer> {
        let (_, filter) = self.filter()?;
        // A columnar table's filter holds its key schema's prefixes, which
        // are the comparer's only under a schema read here.
        if self.format.columnar() && self.schema.is_err() {
            return None;
        }
        let prefix = self.comparer()?.prefix(key);
        Some(match filter {
            // An empty filter rules keys out only where no block holds one.
            Ok(data) if data.len() <= 5 => may_contain(data, prefix, !self.holds_no_point_key()),
            Ok(data) => may_contain(data, prefix, true),
            Err(_) => FilterAnswer::Malformed,
        })
    }

    /// Pebble's `Get` of user key `key` at this table: [`TableStep::Absent`]
    /// where the filter rules it out; else the key's entries in the data
    /// block the index points to, newest first (kinds as Pebble's: a
    /// SETWITHDEL is a value, a DELSIZED a deletion), or past the last key.
    /// Keys are sought in the order of the table's comparer ([`Comparer`]);
    /// under one this crate does not know the answer is
    /// [`TableStep::Unordered`], which a filter may still rule out. With
    /// the step, the largest sequence number of the table's range deletions
    /// that cover the key (0: none; not sought under an unknown comparer).
    pub fn get_step(&self, key: &[u8]) -> Result<(TableStep, u64), Error> {
        let Some(comparer) = self.comparer() else {
            return Ok((self.unordered_step(key), 0));
        };
        let covering = self.covering_tombstone(key)?;
        Ok((self.ordered_step(key, comparer)?, covering))
    }

    /// [`Table::get_step`] under a comparer whose order this crate does
    /// not know: what the filter alone says.
    fn unordered_step(&self, key: &[u8]) -> TableStep {
        match self.filter_answer(key).is_some_and(|a| !a.may_match()) {
            true => TableStep::Absent,
            false => TableStep::Unordered,
        }
    }

    /// [`Table::get_step`] under a comparer this crate knows, range
    /// deletions aside.
    fn ordered_step(&self, key: &[u8], comparer: Comparer) -> Result<TableStep, Error> {
        if self.filter_answer(key).is_some_and(|a| !a.may_match()) {
            return Ok(TableStep::Absent);
        }
        let Some(handle) = self.data_block_for(key)? else {
            return Ok(TableStep::PastLastKey);
        };
        let block = self.block(BlockKind::Data, handle)?;
        // A `Get` reads the key's entries up to the first that is not a
        // merge operand; a crafted block's operands are held up to a limit.
        let (mut entries, mut done) = (Vec::new(), false);
        self.block_keys(&block, handle, &mut |user_key, _, trailer| {
            if done || comparer.compare(user_key, key) != Ordering::Equal {
                return;
            }
            let kind = kind(trailer as u8);
            done = kind != EntryKind::Merge || entries.len() >= MAX_OPERANDS;
            entries.push(KeyEntry {
                kind,
                sequence: trailer >> 8,
            });
        })?;
        if entries.len() > MAX_OPERANDS {
            return Err(Error::LimitExceeded {
                block: BlockKind::Data,
                offset: handle.offset,
                what: Limit::MergeOperands,
                found: entries.len() as u64,
                limit: MAX_OPERANDS as u64,
            });
        }
        Ok(TableStep::Read(entries))
    }

    /// The data block the index points a lookup of `key` to: the first
    /// whose separator is at or past the key in the comparer's order (in a
    /// two-level index, the partition's); `None` past the last. (Under a
    /// comparer this crate does not know, the bytewise order's.)
    pub fn data_block_for(&self, key: &[u8]) -> Result<Option<BlockHandle>, Error> {
        // The top-level index was read whole and checked at open.
        let top = self.seek_index(&self.index, self.footer.index.offset, key, true)?;
        let Some(handle) = top else {
            return Ok(None);
        };
        if !self.two_level {
            return Ok(Some(handle));
        }
        let partition = self.block(BlockKind::Index, handle)?;
        self.seek_index(&partition, handle.offset, key, false)
    }

    /// The first entry of an index block at `offset` whose separator is at
    /// or past user key `key` (`checked`: a columnar block read and checked
    /// whole before).
    fn seek_index(
        &self,
        block: &[u8],
        offset: u64,
        key: &[u8],
        checked: bool,
    ) -> Result<Option<BlockHandle>, Error> {
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::Index,
            offset,
            what,
        };
        let comparer = self.comparer().unwrap_or(Comparer::Bytewise);
        if self.format.columnar() {
            return super::columnar::seek_index(block, key, checked, comparer).map_err(corrupt);
        }
        // Row separators are internal keys: one at the key's user key is
        // at or past a seek's largest tag.
        let order =
            |separator: &[u8]| match comparer.compare(crate::format::user_key(separator), key) {
                Ordering::Equal => Ordering::Greater,
                other => other,
            };
        let mut cursor = self.row_cursor(block, INDEX).map_err(corrupt)?;
        if checked {
            // The top level is kept: its checkpoints are made once.
            let user = crate::format::user_key;
            let cmp = |a: &[u8], b: &[u8]| comparer.compare(user(a), user(b));
            let checkpoints = self
                .index_checkpoints
                .get_or_init(|| cursor.checkpoints(cmp));
            cursor = cursor.with_checkpoints(checkpoints);
        }
        if !cursor.seek(order).map_err(corrupt)? {
            return Ok(None);
        }
        Ok(Some(
            cursor.handle().ok_or(corrupt(Corruption::NotAHandle))?,
        ))
    }

    /// The largest sequence number of the table's range deletions that
    /// cover user key `key` (0: none), for a bytewise-ordered table.
    pub fn covering_tombstone(&self, key: &[u8]) -> Result<u64, Error> {
        let tombstones = self.tombstones.get_or_init(|| Tombstones::read(self));
        let tombstones = tombstones.as_ref().map_err(Clone::clone)?;
        Ok(tombstones.covering(key, self.comparer().unwrap_or(Comparer::Bytewise)))
    }
}

/// The most merge operands of one key a `Get` holds from one data block.
const MAX_OPERANDS: usize = 1 << 16;

/// The kind of Pebble's type byte, as a `Get` takes it.
fn kind(byte: u8) -> EntryKind {
    match byte {
        // SETWITHDEL: a value that also deletes what is below.
        0x12 => EntryKind::Value,
        // DELSIZED: a deletion that knows the size it deletes.
        0x17 => EntryKind::Deletion,
        0x1 | 0x0 | 0x7 | 0x2 => EntryKind::of(byte),
        other => EntryKind::Other(other),
    }
}
