//! Columnar keyspan blocks (Pebble's `KeyspanBlockWriter`): a table's range
//! deletions, or its range keys.
//!
//! Spans are stored fragmented (overlapping spans split until any two have
//! the same bounds or none in common), so their bounds form one sorted list
//! of user keys, each stored once, with the index of the first key that
//! starts at it. The keys of span `[b_i, b_i+1)` are rows
//! `index_i .. index_i+1`; where two spans do not touch, the gap between them
//! is a span of no keys:
//!
//! ```text
//! boundary count       u32 little-endian, before the columnar header
//! columnar header      (see `header`), rows = keys, 5 columns
//! boundary keys        bytes, boundary-count rows: the user keys, sorted
//! boundary indices     uint, boundary-count rows: rising from 0 to the key
//!                      count
//! trailers             uint: seqnum << 8 | kind
//! suffixes             bytes: a range key's suffix (empty for deletions)
//! values               bytes: a range key's value (empty for deletions)
//! padding              u8
//! ```
//!
//! Reading checks what Pebble's iterator needs: indices from 0 to the key
//! count that never go down, and no empty span first, last or beside
//! another (Pebble reports the last two as corruption).

use std::ops::Range;

use super::header::{checked_rows, ColumnarBlock, DataType};
use super::raw_bytes::RawBytes;
use super::uints::{index, Uints};
use crate::format::Corruption;

/// The boundary count before the columnar header.
const HEADER_LEN: usize = 4;

const COLUMNS: [DataType; 5] = [
    DataType::Bytes,
    DataType::Uint,
    DataType::Uint,
    DataType::Bytes,
    DataType::Bytes,
];

/// A keyspan block whose columns have been read and checked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyspanBlock<'b> {
    boundaries: RawBytes<'b>,
    indices: Uints<'b>,
    trailers: Uints<'b>,
    suffixes: RawBytes<'b>,
    values: RawBytes<'b>,
}

/// A span: its bounds and the rows of its keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Span<'b> {
    /// The first user key the span covers.
    pub(crate) start: &'b [u8],
    /// The first user key past it.
    pub(crate) end: &'b [u8],
    /// Its keys: rows of [`KeyspanBlock::key`], newest first.
    pub(crate) keys: Range<usize>,
}

/// One key of a span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyspanKey<'b> {
    /// Sequence number << 8 | kind (RANGEDEL, or RANGEKEYSET, UNSET, DEL).
    pub(crate) trailer: u64,
    /// A range key's suffix.
    pub(crate) suffix: &'b [u8],
    /// A range key's value.
    pub(crate) value: &'b [u8],
}

impl<'b> KeyspanBlock<'b> {
    /// Reads `block`.
    pub(crate) fn parse(block: &'b [u8]) -> Result<Self, Corruption> {
        let header = ColumnarBlock::parse(block, HEADER_LEN)?;
        header.expect_columns(&[&COLUMNS])?;
        let count = header.custom_header();
        let count = u32::from_le_bytes([count[0], count[1], count[2], count[3]]);
        let boundaries = checked_rows(u64::from(count), block.len())?;
        let keys = header.rows();
        let parsed = KeyspanBlock {
            boundaries: header.raw_bytes(0, boundaries)?,
            indices: header.uints(1, boundaries)?,
            trailers: header.uints(2, keys)?,
            suffixes: header.raw_bytes(3, keys)?,
            values: header.raw_bytes(4, keys)?,
        };
        parsed.check_indices(keys)?;
        Ok(parsed)
    }

    /// Checks that the boundary indices rise from 0 to `keys`, and leave no
    /// span empty first, last or beside another.
    fn check_indices(&self, keys: usize) -> Result<(), Corruption> {
        let wrong = Err(Corruption::ColumnarKeyspanIndices);
        let n = self.indices.len();
        if n == 0 {
            return if keys == 0 { Ok(()) } else { wrong };
        }
        if n == 1 || self.indices.get(0) != Some(0) || self.indices.get(n - 1) != Some(keys as u64)
        {
            return wrong;
        }
        let mut previous = 0;
        let mut previous_empty = true; // as if before the first span
        for (i, at) in self.indices.iter().enumerate().skip(1) {
            if at < previous {
                return wrong;
            }
            let empty = at == previous;
            if empty && (previous_empty || i == n - 1) {
                return wrong;
            }
            previous = at;
            previous_empty = empty;
        }
        Ok(())
    }

    /// How many keys the block holds (range deletions, or range key sets,
    /// unsets and deletions).
    pub(crate) fn key_count(&self) -> usize {
        self.trailers.len()
    }

    /// How many boundary keys.
    pub(crate) fn boundary_count(&self) -> usize {
        self.boundaries.len()
    }

    /// Key `i`, `None` past the end.
    pub(crate) fn key(&self, i: usize) -> Option<KeyspanKey<'b>> {
        Some(KeyspanKey {
            trailer: self.trailers.get(i)?,
            suffix: self.suffixes.get(i)?,
            value: self.values.get(i)?,
        })
    }

    /// The spans that hold keys, in order.
    pub(crate) fn spans(&self) -> impl Iterator<Item = Span<'b>> + 'b {
        let block = *self;
        (0..self.boundary_count().saturating_sub(1)).filter_map(move |i| {
            let first = index(block.indices.get(i)?);
            let last = index(block.indices.get(i + 1)?);
            (first < last).then_some(Span {
                start: block.boundaries.get(i)?,
                end: block.boundaries.get(i + 1)?,
                keys: first..last,
            })
        })
    }
}
