//! A Pebble table's keys in order: its index (one level or two) walked
//! to each data block, each data block's keys walked, as the writer added
//! them to the filter.

use super::colblk::KeySchema;
use super::Table;
use crate::format::{BlockHandle, BlockKind, Corruption, Layout};
use crate::Error;

/// Index values are a handle, then (Pebblev1 and later) block properties,
/// which the cursor leaves after the handle.
pub(super) const INDEX: Layout = Layout::Index {
    delta: false,
    first_key: false,
    escape: false,
};

impl<'a> Table<'a> {
    /// The data blocks' handles, in the index's order: `each` returns false
    /// to stop. Each block (and each index partition) must start at or past
    /// the end of the one before, as Pebble writes them, so that a walk
    /// reads each byte of the file at most once.
    pub(super) fn for_each_data_handle(
        &self,
        mut each: impl FnMut(BlockHandle) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let two_level = self.two_level;
        let (mut data_end, mut partition_end) = (0, 0);
        let ordered = |end: &mut u64, handle: BlockHandle, offset| {
            if handle.offset < *end {
                return Err(index_error(offset, Corruption::HandlesOutOfOrder));
            }
            *end = handle.offset.saturating_add(handle.size);
            Ok(())
        };
        self.for_each_index_handle(&self.index, self.footer.index.offset, |handle| {
            if !two_level {
                ordered(&mut data_end, handle, self.footer.index.offset)?;
                return each(handle);
            }
            ordered(&mut partition_end, handle, self.footer.index.offset)?;
            let partition = self.block(BlockKind::Index, handle)?;
            let mut more = true;
            self.for_each_index_handle(&partition, handle.offset, |data| {
                ordered(&mut data_end, data, handle.offset)?;
                more = each(data)?;
                Ok(more)
            })?;
            Ok(more)
        })
    }

    /// Calls `each` with the handles of an index block (or partition) at
    /// `offset`, in order, until it returns false.
    fn for_each_index_handle(
        &self,
        block: &[u8],
        offset: u64,
        mut each: impl FnMut(BlockHandle) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let corrupt = |what| index_error(offset, what);
        if self.format.columnar() {
            for handle in super::columnar::index_handles(block).map_err(corrupt)? {
                if !each(handle)? {
                    break;
                }
            }
            return Ok(());
        }
        let mut cursor = self.row_cursor(block, INDEX).map_err(corrupt)?;
        let mut more = cursor.seek_to_first().map_err(corrupt)?;
        while more {
            let handle = cursor.handle().ok_or(corrupt(Corruption::NotAHandle))?;
            if !each(handle)? {
                break;
            }
            more = cursor.advance().map_err(corrupt)?;
        }
        Ok(())
    }

    /// Calls `each` with every point key of the table's data blocks, in
    /// order: its user key and its trailer (sequence number << 8 | kind,
    /// the kind without Pebblev4's obsolete bit). Returns the number of
    /// keys.
    pub fn for_each_key(&self, mut each: impl FnMut(&[u8], u64)) -> Result<u64, Error> {
        self.for_each_entry(|key, _, trailer| each(key, trailer))
    }

    /// As [`Table::for_each_key`], with each key's prefix where the block
    /// stores it (columnar blocks: the key schema's prefix, the filter's
    /// key).
    pub(super) fn for_each_entry(
        &self,
        mut each: impl FnMut(&[u8], Option<&[u8]>, u64),
    ) -> Result<u64, Error> {
        let mut count = 0;
        self.for_each_data_handle(|handle| {
            let block = self.block(BlockKind::Data, handle)?;
            count += self.block_keys(&block, handle, &mut each)?;
            Ok(true)
        })?;
        Ok(count)
    }

    /// The point keys of one data block, as [`Table::for_each_entry`].
    pub(super) fn block_keys(
        &self,
        block: &[u8],
        handle: BlockHandle,
        each: &mut impl FnMut(&[u8], Option<&[u8]>, u64),
    ) -> Result<u64, Error> {
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::Data,
            offset: handle.offset,
            what,
        };
        if self.format.columnar() {
            let schema = self.key_schema()?;
            return super::columnar::data_keys(block, schema, |key, prefix, trailer| {
                each(key, Some(prefix), trailer & !OBSOLETE)
            })
            .map_err(corrupt);
        }
        let mut cursor = self.row_cursor(block, Layout::Plain).map_err(corrupt)?;
        let mut count = 0;
        let mut more = cursor.seek_to_first().map_err(corrupt)?;
        while more {
            let (user_key, trailer) = split_internal(cursor.key()).map_err(corrupt)?;
            each(user_key, None, trailer & !OBSOLETE);
            count += 1;
            more = cursor.advance().map_err(corrupt)?;
        }
        Ok(count)
    }

    /// The key schema of a columnar table's data blocks, by the name its
    /// properties give (one of another comparer than the table's is not
    /// read: Pebble does not open such a table).
    pub(super) fn key_schema(&self) -> Result<KeySchema, Error> {
        self.schema
            .clone()
            .map_err(|name| Error::UnknownKeySchema { name })
    }
}

/// What one pass over a table's data blocks finds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    /// Data blocks.
    pub data_blocks: u64,
    /// Point keys (entries of every kind).
    pub keys: u64,
    /// The first and last user keys.
    pub range: Option<(Vec<u8>, Vec<u8>)>,
}

impl Table<'_> {
    /// One pass over the data blocks: their count, the keys, the first and
    /// last user keys.
    pub fn walk(&self) -> Result<Walk, Error> {
        let mut walk = Walk::default();
        let mut last = Vec::new();
        let mut first = None;
        self.for_each_data_handle(|handle| {
            walk.data_blocks += 1;
            let block = self.block(BlockKind::Data, handle)?;
            walk.keys += self.block_keys(&block, handle, &mut |key, _, _| {
                if first.is_none() {
                    first = Some(key.to_vec());
                }
                last.clear();
                last.extend_from_slice(key);
            })?;
            Ok(true)
        })?;
        walk.range = first.map(|first| (first, last));
        Ok(walk)
    }

    /// Calls `each` with every range deletion of the block at `handle`:
    /// its start and end user keys and its trailer.
    pub(super) fn for_each_range_deletion(
        &self,
        handle: BlockHandle,
        mut each: impl FnMut(&[u8], &[u8], u64),
    ) -> Result<(), Error> {
        let block = self.block(BlockKind::RangeDeletion, handle)?;
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::RangeDeletion,
            offset: handle.offset,
            what,
        };
        if self.format.columnar() {
            return super::columnar::spans(&block, each).map_err(corrupt);
        }
        let mut cursor = self.row_cursor(&block, Layout::Plain).map_err(corrupt)?;
        let mut more = cursor.seek_to_first().map_err(corrupt)?;
        while more {
            let (user_key, trailer) = split_internal(cursor.key()).map_err(corrupt)?;
            each(user_key, cursor.value(), trailer);
            more = cursor.advance().map_err(corrupt)?;
        }
        Ok(())
    }
}

/// An index block's error at `offset`.
fn index_error(offset: u64, what: Corruption) -> Error {
    Error::CorruptBlock {
        block: BlockKind::Index,
        offset,
        what,
    }
}

/// A row block's internal key: its user key and its 8-byte trailer.
fn split_internal(key: &[u8]) -> Result<(&[u8], u64), Corruption> {
    let at = key
        .len()
        .checked_sub(8)
        .ok_or(Corruption::KeyShorterThanTag)?;
    let trailer = u64::from_le_bytes(key[at..].try_into().expect("8 bytes"));
    Ok((&key[..at], trailer))
}

/// Pebblev4's obsolete bit in a key's kind (`InternalKeyKindSSTableInternalObsoleteBit`).
const OBSOLETE: u64 = 0x40;
