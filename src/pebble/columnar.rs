//! Pebble's columnar blocks (Pebblev5 and later, [`colblk`](super::colblk))
//! as the table reader walks and seeks them.

use super::blocks::Named;
use super::colblk::{DataBlock, IndexBlock, KeySchema, KeyValueBlock, KeyspanBlock};
use super::comparer::Comparer;
use crate::format::{BlockHandle, Corruption};

/// Every entry of a key-value block (the metaindex from Pebblev6, the
/// properties from Pebblev7).
pub(super) fn key_values(block: &[u8]) -> Result<Vec<Named>, Corruption> {
    let block = KeyValueBlock::parse(block)?;
    Ok(block
        .iter()
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect())
}

/// The handles of an index block (either level), in order.
pub(super) fn index_handles(
    block: &[u8],
) -> Result<impl Iterator<Item = BlockHandle> + '_, Corruption> {
    Ok(IndexBlock::parse(block)?.iter().map(|e| e.handle))
}

/// The rows of an index block, read and checked whole.
pub(super) fn index_len(block: &[u8]) -> Result<usize, Corruption> {
    Ok(IndexBlock::parse(block)?.len())
}

/// The first entry of an index block whose separator (a user key) is at or
/// past `key` in the comparer's order, by binary search: `None` past the last. With
/// `checked`, the block was read whole and checked before (a table's
/// top-level index), and the seek reads only the rows it compares.
pub(super) fn seek_index(
    block: &[u8],
    key: &[u8],
    checked: bool,
    comparer: Comparer,
) -> Result<Option<BlockHandle>, Corruption> {
    let index = match checked {
        true => IndexBlock::parse_checked_once(block)?,
        false => IndexBlock::parse(block)?,
    };
    // Rows below `lo` are below the key; rows at `hi` and past are not.
    let (mut lo, mut hi) = (0, index.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let entry = index.get(mid).ok_or(Corruption::MalformedIndexEntry)?;
        match comparer.compare(entry.separator, key).is_lt() {
            true => lo = mid + 1,
            false => hi = mid,
        }
    }
    Ok(index.get(lo).map(|e| e.handle))
}

/// Calls `each` with every row of a data block under `schema`: its user
/// key, its prefix (the filter's key) and its trailer. Returns the rows.
pub(super) fn data_keys(
    block: &[u8],
    schema: KeySchema,
    mut each: impl FnMut(&[u8], &[u8], u64),
) -> Result<u64, Corruption> {
    let block = DataBlock::parse(block, schema)?;
    let mut rows = block.iter();
    let mut count = 0;
    while let Some(row) = rows.next() {
        each(row.user_key, row.prefix, row.trailer);
        count += 1;
    }
    // A row that does not decode ends the walk early.
    match count == block.rows() as u64 {
        true => Ok(count),
        false => Err(Corruption::MalformedEntry),
    }
}

/// Calls `each` with every key of every span of a keyspan block: the span's
/// start and end user keys and the key's trailer.
pub(super) fn spans(
    block: &[u8],
    mut each: impl FnMut(&[u8], &[u8], u64),
) -> Result<(), Corruption> {
    let block = KeyspanBlock::parse(block)?;
    for span in block.spans() {
        for i in span.keys.clone() {
            let key = block.key(i).ok_or(Corruption::MalformedEntry)?;
            each(span.start, span.end, key.trailer);
        }
    }
    Ok(())
}
