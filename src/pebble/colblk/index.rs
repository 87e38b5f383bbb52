//! Columnar index blocks (Pebble's `IndexBlockWriter`), both levels.
//!
//! One row per block indexed: a data block in a single-level index or in a
//! partition of a two-level one, an index partition in the top level. No
//! header of its own:
//!
//! ```text
//! columnar header      (see `header`), 4 columns
//! separators           bytes: a user key >= every key of the block and
//!                      <= every key of the next (so two may be equal)
//! offsets              uint: where the block starts in the file
//! lengths              uint: its length, without the 5-byte trailer
//! block properties     bytes: what block-property collectors recorded
//! padding              u8
//! ```
//!
//! A table without point keys has an index block of no rows.

use super::header::{ColumnarBlock, DataType};
use super::raw_bytes::RawBytes;
use super::uints::Uints;
use crate::format::{BlockHandle, Corruption};

const COLUMNS: [DataType; 4] = [
    DataType::Bytes,
    DataType::Uint,
    DataType::Uint,
    DataType::Bytes,
];

/// An index block whose columns have been read and checked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexBlock<'b> {
    separators: RawBytes<'b>,
    offsets: Uints<'b>,
    lengths: Uints<'b>,
    properties: RawBytes<'b>,
}

/// An index block's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndexEntry<'b> {
    /// A user key between the block's keys and the next block's.
    pub(crate) separator: &'b [u8],
    /// Where the block is (its trailer follows).
    pub(crate) handle: BlockHandle,
    /// The block's properties, as Pebble's block-property collectors encode
    /// them.
    pub(crate) properties: &'b [u8],
}

impl<'b> IndexBlock<'b> {
    /// Reads `block`.
    pub(crate) fn parse(block: &'b [u8]) -> Result<Self, Corruption> {
        Self::from_header(ColumnarBlock::parse(block, 0)?)
    }

    /// Reads `block`, which [`IndexBlock::parse`] has read before, in time
    /// independent of its rows (see [`ColumnarBlock::checked_once`]).
    pub(crate) fn parse_checked_once(block: &'b [u8]) -> Result<Self, Corruption> {
        Self::from_header(ColumnarBlock::parse(block, 0)?.checked_once())
    }

    fn from_header(header: ColumnarBlock<'b>) -> Result<Self, Corruption> {
        header.expect_columns(&[&COLUMNS])?;
        let rows = header.rows();
        Ok(IndexBlock {
            separators: header.raw_bytes(0, rows)?,
            offsets: header.uints(1, rows)?,
            lengths: header.uints(2, rows)?,
            properties: header.raw_bytes(3, rows)?,
        })
    }

    /// How many entries the block holds.
    pub(crate) fn len(&self) -> usize {
        self.separators.len()
    }

    /// Whether it holds none.
    pub(crate) fn is_empty(&self) -> bool {
        self.separators.is_empty()
    }

    /// Entry `i`, `None` past the end.
    pub(crate) fn get(&self, i: usize) -> Option<IndexEntry<'b>> {
        Some(IndexEntry {
            separator: self.separators.get(i)?,
            handle: BlockHandle {
                offset: self.offsets.get(i)?,
                size: self.lengths.get(i)?,
            },
            properties: self.properties.get(i)?,
        })
    }

    /// The entries in order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = IndexEntry<'b>> + 'b {
        let handles = self.offsets.iter().zip(self.lengths.iter());
        self.separators
            .iter()
            .zip(handles)
            .zip(self.properties.iter())
            .map(|((separator, (offset, size)), properties)| IndexEntry {
                separator,
                handle: BlockHandle { offset, size },
                properties,
            })
    }
}
