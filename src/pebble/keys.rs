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
    /// to stop.
    pub(super) fn for_each_data_handle(
        &self,
        mut each: impl FnMut(BlockHandle) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let two_level = self.props.two_level_index();
        let top = self.index_handles(&self.index, self.footer.index.offset)?;
        for handle in top {
            if !two_level {
                if !each(handle)? {
                    return Ok(());
                }
                continue;
            }
            let partition = self.block(BlockKind::Index, handle)?;
            for handle in self.index_handles(&partition, handle.offset)? {
                if !each(handle)? {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The handles of an index block (or partition) at `offset`.
    fn index_handles(&self, block: &[u8], offset: u64) -> Result<Vec<BlockHandle>, Error> {
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::Index,
            offset,
            what,
        };
        if self.format.columnar() {
            return super::columnar::index_handles(block).map_err(corrupt);
        }
        let mut cursor = self.row_cursor(block, INDEX).map_err(corrupt)?;
        let mut handles = Vec::new();
        let mut more = cursor.seek_to_first().map_err(corrupt)?;
        while more {
            handles.push(cursor.handle().ok_or(corrupt(Corruption::NotAHandle))?);
            more = cursor.advance().map_err(corrupt)?;
        }
        Ok(handles)
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
            let key = cursor.key();
            let at = key
                .len()
                .checked_sub(8)
                .ok_or(corrupt(Corruption::KeyShorterThanTag))?;
            let trailer = u64::from_le_bytes(key[at..].try_into().expect("8 bytes"));
            each(&key[..at], None, trailer & !OBSOLETE);
            count += 1;
            more = cursor.advance().map_err(corrupt)?;
        }
        Ok(count)
    }

    /// The key schema of a columnar table's data blocks, by the name its
    /// properties give.
    pub(super) fn key_schema(&self) -> Result<KeySchema, Error> {
        let name = self.props.key_schema().unwrap_or_default();
        KeySchema::from_name(&name).map_err(|_| Error::UnknownKeySchema { name })
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
            let key = cursor.key();
            let at = key
                .len()
                .checked_sub(8)
                .ok_or(corrupt(Corruption::KeyShorterThanTag))?;
            let trailer = u64::from_le_bytes(key[at..].try_into().expect("8 bytes"));
            each(&key[..at], cursor.value(), trailer);
            more = cursor.advance().map_err(corrupt)?;
        }
        Ok(())
    }
}

/// Pebblev4's obsolete bit in a key's kind (`InternalKeyKindSSTableInternalObsoleteBit`).
const OBSOLETE: u64 = 0x40;
