//! Columnar key-value blocks (Pebble's `KeyValueBlockWriter`): the
//! metaindex of Pebblev6 tables and later, and the properties block of
//! Pebblev7 and later.
//!
//! ```text
//! columnar header    (see `header`), 2 columns
//! keys               bytes: the names, sorted
//! values             bytes
//! padding            u8
//! ```

use super::header::{ColumnarBlock, DataType};
use super::raw_bytes::RawBytes;
use crate::format::Corruption;

const COLUMNS: [DataType; 2] = [DataType::Bytes, DataType::Bytes];

/// A key-value block whose columns have been read and checked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyValueBlock<'b> {
    keys: RawBytes<'b>,
    values: RawBytes<'b>,
}

impl<'b> KeyValueBlock<'b> {
    /// Reads `block`.
    pub(crate) fn parse(block: &'b [u8]) -> Result<Self, Corruption> {
        let header = ColumnarBlock::parse(block, 0)?;
        header.expect_columns(&[&COLUMNS])?;
        let rows = header.rows();
        Ok(KeyValueBlock {
            keys: header.raw_bytes(0, rows)?,
            values: header.raw_bytes(1, rows)?,
        })
    }

    /// How many pairs the block holds.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether it holds none.
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The pairs, in the block's order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = (&'b [u8], &'b [u8])> + 'b {
        self.keys.iter().zip(self.values.iter())
    }

    /// The value of the first pair whose key is `key`. Pebble sorts the
    /// keys, but a scan needs no order and costs no more than the block's
    /// size.
    pub(crate) fn get(&self, key: &[u8]) -> Option<&'b [u8]> {
        self.iter().find(|&(k, _)| k == key).map(|(_, v)| v)
    }
}
