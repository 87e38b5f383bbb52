//! A key looked up as RocksDB's `Get` looks it up: the index's data block
//! for the key and what the table's filter says of it.

use super::check::Prefix;
use super::partitions::{index_key_cmp, order_to_seek, SstFilter};
use super::table::Table;
use crate::format::for_each_user_key;
use crate::format::Corruption;
use crate::format::{BlockHandle, BlockKind, KeyOrder};
use crate::Error;

impl<'a> Table<'a> {
    /// The data block RocksDB's index points a lookup of user key `key`
    /// (without a timestamp) to, the entry its seek finds, or `None` past
    /// the last key; [`Error::UnknownComparator`] where the table's keys are
    /// ordered by a comparator this crate does not know. The index is read
    /// once per table, and each partition of a two-level index once however
    /// many lookups need it.
    pub fn data_block_for(&self, key: &[u8]) -> Result<Option<BlockHandle>, Error> {
        let (internal, known) = (self.index_keys_are_internal(), self.known_order()?);
        let order = |separator: &[u8]| order_to_seek(separator, key, internal, known);
        let cmp = |a: &[u8], b: &[u8]| index_key_cmp(a, b, internal, known);
        let (top, _) = self.top_index()?;
        let (cursor, corrupt) = self.index_cursor(top, self.footer.index.offset)?;
        let checkpoints = self
            .index_checkpoints
            .get_or_init(|| cursor.checkpoints(cmp));
        let mut cursor = cursor.with_checkpoints(checkpoints);
        if !cursor.seek(order).map_err(&corrupt)? {
            return Ok(None);
        }
        if self.index_type() != 2 {
            return Ok(cursor.handle());
        }
        // `PartitionedIndexIterator`: seek the partition; where the key is
        // past its last entry, the first entry of the next partition.
        let mut first = true;
        loop {
            let partition = cursor.handle().ok_or(corrupt(Corruption::NotAHandle))?;
            let block = self.index_partition(partition)?;
            let (entries, in_partition) = self.index_cursor(&block.stored.0, partition.offset)?;
            let checkpoints = block.checkpoints.get_or_init(|| entries.checkpoints(cmp));
            let mut entries = entries.with_checkpoints(checkpoints);
            let found = match first {
                true => entries.seek(order),
                false => entries.seek_to_first(),
            };
            let found = found
                .map_err(in_partition)?
                .then(|| entries.handle())
                .flatten();
            if found.is_some() {
                return Ok(found);
            }
            first = false;
            if !cursor.advance().map_err(&corrupt)? {
                return Ok(None);
            }
        }
    }

    /// Whether the data block at `handle` holds an entry (a value, a
    /// deletion or any other) of user key `key` (without a timestamp): a
    /// `Get` that reads the block RocksDB's index points it to stops at this
    /// table when it does.
    pub fn block_holds_key(&self, handle: BlockHandle, key: &[u8]) -> Result<bool, Error> {
        let (contents, _) = self.block(BlockKind::Data, handle)?;
        let (prefixed, interval) = (self.common_prefix(), self.props.data_restart_interval);
        let order = self.key_order().unwrap_or(KeyOrder::Bytewise);
        let mut found = false;
        for_each_user_key(&contents, handle, prefixed, interval, |k| {
            found |= order.strip(k) == key
        })?;
        Ok(found)
    }

    /// What RocksDB's `Get` of user key `key` (without a timestamp) does at
    /// this table, as far as its index and filter decide: past the last
    /// key, or the data block it reads (or skips, where the filter rules
    /// the key out). Under a comparator this crate does not know no block
    /// can be sought: [`Lookup::Unordered`], absent only where every
    /// filter the table has rules the key out, so that a key the table
    /// holds is never answered absent.
    pub fn lookup(&self, key: &[u8]) -> Result<Lookup, Error> {
        if self.key_order().is_none() {
            return Ok(Lookup::Unordered {
                may_match: self.key_may_match(key),
            });
        }
        Ok(match self.data_block_for(key)? {
            None => Lookup::PastLastKey,
            Some(handle) => Lookup::Block {
                handle,
                may_match: self.key_may_match(key),
            },
        })
    }

    /// Whether RocksDB's `Get` of user key `key` may find it in this table,
    /// judging by the filter alone (`false`: the filter rules it out). A
    /// table that filters prefixes alone is probed with the key's prefix,
    /// by the table's fixed, capped or no-op prefix extractor (any other
    /// answers "may match").
    pub fn key_may_match(&self, key: &[u8]) -> bool {
        // Without whole keys in the filter, RocksDB probes the key's prefix
        // (with the table's own extractor, where the key is in its domain).
        let probe = match self.whole_key_filtering() {
            true => key,
            false => match Prefix::of(self.prefix_extractor()).and_then(|p| p.of_key(key)) {
                Some(prefix) => prefix,
                None => return true,
            },
        };
        match &self.filter {
            Ok(Some(SstFilter::Full(bits))) => bits.may_match(probe),
            Ok(Some(SstFilter::Partitioned(partitions))) => partitions.may_match(key, probe),
            _ => true,
        }
    }
}

/// What a table's index and filter decide for a `Get` of a key
/// ([`Table::lookup`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The key sorts past the table's last key: the table cannot hold it.
    PastLastKey,
    /// The data block the index points the key to, and whether the filter
    /// lets the `Get` read it (`false`: the key is absent).
    Block {
        /// The data block.
        handle: BlockHandle,
        /// Whether the filter may hold the key.
        may_match: bool,
    },
    /// The table's comparator is one this crate does not know: no block
    /// can be sought, and the filters are asked whole.
    Unordered {
        /// Whether any of the table's filters may hold the key.
        may_match: bool,
    },
}
