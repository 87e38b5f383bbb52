//! A RocksDB table's keys, read block by block in the index's order: one
//! pass for their statistics, and the false-positive rate measured on them.

use std::collections::{BTreeSet, HashMap};

use super::partitions::Partitions;
use super::table::Table;
use crate::format::for_each_user_key;
use crate::format::Corruption;
use crate::format::{BlockHandle, BlockKind, Compression};
use crate::Error;

impl<'a> Table<'a> {
    /// Calls `each` with every data block's handle, in the index's order
    /// (both levels of a two-level index), which must be the file's: each
    /// block after the one before, as RocksDB writes them, so that no block
    /// is read twice. Returns the compressions of the index blocks read.
    pub(super) fn for_each_data_block(
        &self,
        mut each: impl FnMut(BlockHandle, &[u8]) -> Result<(), Error>,
    ) -> Result<BTreeSet<Compression>, Error> {
        let (top, compression) = self.top_index()?;
        let mut compressions = BTreeSet::from([compression]);
        let (mut cursor, corrupt) = self.index_cursor(top, self.footer.index.offset)?;
        let two_level = self.index_type() == 2;
        let (mut data_end, mut partition_end) = (0, 0);
        let mut more = cursor.seek_to_first().map_err(&corrupt)?;
        while more {
            let handle = cursor.handle().ok_or(corrupt(Corruption::NotAHandle))?;
            if !two_level {
                after(&mut data_end, handle, &corrupt)?;
                each(handle, cursor.key())?;
            } else {
                after(&mut partition_end, handle, &corrupt)?;
                let partition = self.index_partition(handle)?;
                compressions.insert(partition.stored.1);
                let (mut entries, corrupt) =
                    self.index_cursor(&partition.stored.0, handle.offset)?;
                let mut more = entries.seek_to_first().map_err(&corrupt)?;
                while more {
                    let handle = entries.handle().ok_or(corrupt(Corruption::NotAHandle))?;
                    after(&mut data_end, handle, &corrupt)?;
                    each(handle, entries.key())?;
                    more = entries.advance().map_err(&corrupt)?;
                }
            }
            more = cursor.advance().map_err(&corrupt)?;
        }
        Ok(compressions)
    }

    /// The data blocks (by offset) whose index entry's key is the separator
    /// of a partition of `partitions`: where RocksDB cut filter partitions
    /// with the index's (before `decouple_partitioned_filters`), each ends
    /// with the data block whose entry ends an index partition, whatever the
    /// comparator. One entry a data block at most.
    pub(crate) fn blocks_ending_partitions(
        &self,
        partitions: &Partitions<'_>,
    ) -> Result<HashMap<u64, Vec<u8>>, Error> {
        let mut separators = std::collections::HashSet::new();
        let mut walk = partitions.walk();
        while let Some(separator) = walk.separator() {
            separators.insert(separator.to_vec());
            walk.advance();
        }
        let mut ends = HashMap::new();
        self.for_each_data_block(|handle, key| {
            if separators.contains(key) {
                ends.insert(handle.offset, key.to_vec());
            }
            Ok(())
        })?;
        Ok(ends)
    }

    /// Walks every key of the table, data block by data block, calling
    /// `each` with the user key (internal keys without their 8-byte tag)
    /// and the offset of its data block. Each block is read once: an index
    /// that names blocks out of the file's order is an error.
    pub fn for_each_key(&self, mut each: impl FnMut(&[u8], u64)) -> Result<KeyStats, Error> {
        let mut walk = KeyStats::default();
        let mut compressions = BTreeSet::new();
        let (order, mut last) = (self.key_order(), None::<Vec<u8>>);
        let index_compressions = self.for_each_data_block(|handle, _| {
            let (contents, compression) = self.block(BlockKind::Data, handle)?;
            compressions.insert(compression);
            walk.data_blocks += 1;
            let (prefixed, interval) = (self.common_prefix(), self.props.data_restart_interval);
            walk.keys += for_each_user_key(&contents, handle, prefixed, interval, |key| {
                if let (Some(order), Some(previous)) = (order, last.as_mut()) {
                    if walk.out_of_order.is_none() && order.compare(previous, key).is_gt() {
                        walk.out_of_order = Some((previous.clone(), key.to_vec()));
                    }
                    previous.clear();
                    previous.extend_from_slice(key);
                } else if order.is_some() {
                    last = Some(key.to_vec());
                }
                each(key, handle.offset)
            })?;
            Ok(())
        })?;
        compressions.extend(index_compressions);
        walk.compressions = compressions.into_iter().collect();
        Ok(walk)
    }

    /// The false-positive rate RocksDB's `Get`s meet on keys like the
    /// table's own, as LevelDB's [`measure_fpr`](crate::leveldb::measure_fpr)
    /// measures it: each distinct user key with its last byte one higher,
    /// where the table does not hold it and it lies inside the table's key
    /// range, probed as [`key_may_match`](Self::key_may_match) does.
    pub fn measure_fpr(&self) -> Result<crate::format::MeasuredFpr, Error> {
        let mut measured = crate::format::MeasuredFpr::default();
        let mut neighbours = crate::format::Neighbours::default();
        self.for_each_key(|key, _| {
            let probed = neighbours.key(key, |neighbour| {
                measured.probed += 1;
                measured.passed += u64::from(self.key_may_match(neighbour));
                Ok::<(), std::convert::Infallible>(())
            });
            let Ok(()) = probed;
        })?;
        // What is left lies past the last key: a `Get` does not ask.
        Ok(measured)
    }
}

/// Requires `handle` to start at or after `end`, then moves `end` past it
/// and its trailer.
pub(super) fn after(
    end: &mut u64,
    handle: BlockHandle,
    corrupt: impl Fn(Corruption) -> Error,
) -> Result<(), Error> {
    if handle.offset < *end {
        return Err(corrupt(Corruption::HandlesOutOfOrder));
    }
    *end = handle
        .offset
        .saturating_add(handle.size)
        .saturating_add(crate::format::BLOCK_TRAILER_LEN);
    Ok(())
}

/// What [`Table::for_each_key`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyStats {
    /// Data blocks the index names.
    pub data_blocks: u64,
    /// Keys (entries) in them.
    pub keys: u64,
    /// The compressions of the data and index blocks, in order.
    pub compressions: Vec<Compression>,
    /// The first two neighbouring user keys out of the table's order,
    /// where this crate knows its comparator: RocksDB's iterators take
    /// such a table for corrupt.
    pub out_of_order: Option<(Vec<u8>, Vec<u8>)>,
}
