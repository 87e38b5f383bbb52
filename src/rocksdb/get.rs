//! What RocksDB's `Get` meets in a table: the range tombstones
//! (`rocksdb.range_del`) that cover the key, the filter, and the entries of
//! the key in the data block it reads, newest first.

use crate::format::{find_meta, for_each_internal_key, Cursor, Layout};
use crate::format::{BlockHandle, BlockKind, Corruption, EntryKind, KeyEntry, TableStep};
use crate::Error;

use super::{Lookup, Table};

impl Table<'_> {
    /// RocksDB's `TableCache::Get` and `BlockBasedTable::Get` of user key
    /// `key` at a database's table: the largest sequence number of the range
    /// tombstones that cover the key (0: none), then the filter (asked
    /// before the index: a key past the last point key of a table whose
    /// range tombstones reach further is ruled out by it), then the key's
    /// entries in the data block. With `skip_filter` (RocksDB's
    /// `optimize_filters_for_hits` at the last level) the filter is not
    /// asked.
    pub fn get_step(&self, key: &[u8], skip_filter: bool) -> Result<(TableStep, u64), Error> {
        let may_match = |may_match: bool| may_match || skip_filter;
        let covering = match self.key_order() {
            Some(_) => self.covering_tombstone(key)?,
            None => 0,
        };
        let step = match self.lookup(key)? {
            Lookup::PastLastKey if !may_match(self.key_may_match(key)) => TableStep::Absent,
            Lookup::PastLastKey => TableStep::PastLastKey,
            Lookup::Block { may_match: m, .. } | Lookup::Unordered { may_match: m }
                if !may_match(m) =>
            {
                TableStep::Absent
            }
            Lookup::Unordered { .. } => TableStep::Unordered,
            Lookup::Block { handle, .. } => TableStep::Read(self.entries_in(handle, key)?),
        };
        Ok((step, covering))
    }

    /// The entries of user key `key` (without a timestamp) in the data
    /// block at `handle`, newest first: those a `Get` reading the block
    /// meets (as many as the block's bytes hold, no more). A key's entries
    /// that go on into the next block are not read: RocksDB's `Get` reads
    /// on there past merge operands.
    pub fn entries_in(&self, handle: BlockHandle, key: &[u8]) -> Result<Vec<KeyEntry>, Error> {
        let (contents, _) = self.block(BlockKind::Data, handle)?;
        let (prefixed, interval) = (self.common_prefix(), self.props.data_restart_interval);
        let mut entries = Vec::new();
        for_each_internal_key(&contents, handle, prefixed, interval, |user, tag| {
            if self.strip_timestamp(user) == key {
                entries.push(KeyEntry {
                    kind: EntryKind::of(tag as u8),
                    sequence: tag >> 8,
                });
            } else if !entries.is_empty() {
                // A key's entries lie together: past them, no more.
                return false;
            }
            true
        })?;
        Ok(entries)
    }

    /// The largest sequence number of the table's range tombstones that
    /// cover user key `key` (without a timestamp): start <= key < end in
    /// the table's order; 0 where none does, or the table has none. Under a
    /// comparator this crate does not know, [`Error::UnknownComparator`].
    pub fn covering_tombstone(&self, key: &[u8]) -> Result<u64, Error> {
        let Some(value) = find_meta(self.metaindex, b"rocksdb.range_del") else {
            return Ok(0);
        };
        let order = self.known_order()?;
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::Metaindex,
            offset: self.footer.metaindex.offset,
            what,
        };
        let (handle, _) = BlockHandle::decode(value).ok_or(corrupt(Corruption::NotAHandle))?;
        let (contents, _) = self.block(BlockKind::RangeDeletion, handle)?;
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::RangeDeletion,
            offset: handle.offset,
            what,
        };
        let mut cursor = Cursor::new(&contents, Layout::Plain).map_err(corrupt)?;
        let mut covering = 0;
        let mut more = cursor.seek_to_first().map_err(corrupt)?;
        while more {
            let start = cursor.key();
            let split = start
                .len()
                .checked_sub(8)
                .ok_or(corrupt(Corruption::KeyShorterThanTag))?;
            let tag = u64::from_le_bytes(start[split..].try_into().expect("8 bytes"));
            let (start, end) = (
                self.strip_timestamp(&start[..split]),
                self.strip_timestamp(cursor.value()),
            );
            if order.range_covers(start, end, key) {
                covering = covering.max(tag >> 8);
            }
            more = cursor.advance().map_err(corrupt)?;
        }
        Ok(covering)
    }
}
