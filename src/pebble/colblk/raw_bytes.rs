//! Columns of byte strings (`DataTypeBytes`, Pebble's `RawBytes`).
//!
//! `n` strings are stored whole, one after another, behind a table of
//! `n + 1` offsets into them:
//!
//! ```text
//! offsets   an integer column of n + 1 values (see `uints`): no base, at
//!           most 4 bytes wide; offset 0 is 0, and string i is
//!           data[offset i .. offset i+1]
//! data      offset n bytes, right after the offsets
//! ```
//!
//! Strings are read in place, never copied. A column of no strings has no
//! bytes; a column of empty strings is one byte, a width-0 offsets table.

use super::column::Column;
use super::uints::{index, read_offsets, Uints};
use crate::format::Corruption;

/// A column of byte strings, borrowed from its block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawBytes<'b> {
    /// `len + 1` offsets, rising from 0 to `data.len()`.
    offsets: Uints<'b>,
    data: &'b [u8],
    len: usize,
}

impl<'b> RawBytes<'b> {
    /// Reads `count` strings from the front of `column`.
    pub(crate) fn read(column: &mut Column<'b>, count: usize) -> Result<Self, Corruption> {
        if count == 0 {
            return Ok(RawBytes {
                offsets: Uints::empty(),
                data: &[],
                len: 0,
            });
        }
        let slots = count.checked_add(1).ok_or(Corruption::ColumnarRowCount)?;
        let offsets = read_offsets(column, slots)?;
        // Pebble's builder always starts at 0; bytes before the first string
        // would belong to none.
        if offsets.get(0) != Some(0) {
            return Err(Corruption::ColumnarOffsets);
        }
        let end = offsets.get(count).ok_or(Corruption::ColumnarOffsets)?;
        let data =
            column.take(usize::try_from(end).map_err(|_| Corruption::ColumnarColumnLength)?)?;
        Ok(RawBytes {
            offsets,
            data,
            len: count,
        })
    }

    /// How many strings the column holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether the column holds none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// String `i`, `None` past the end.
    pub(crate) fn get(&self, i: usize) -> Option<&'b [u8]> {
        let start = self.offsets.get(i)?;
        let end = self.offsets.get(i.checked_add(1)?)?;
        self.data.get(index(start)..index(end))
    }

    /// The strings in order.
    pub(crate) fn iter(&self) -> RawBytesIter<'b> {
        RawBytesIter {
            column: *self,
            next: 0,
        }
    }
}

/// The strings of a [`RawBytes`] column, in order.
#[derive(Clone, Debug)]
pub(crate) struct RawBytesIter<'b> {
    column: RawBytes<'b>,
    next: usize,
}

impl<'b> Iterator for RawBytesIter<'b> {
    type Item = &'b [u8];

    fn next(&mut self) -> Option<&'b [u8]> {
        let s = self.column.get(self.next)?;
        self.next += 1;
        Some(s)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.column.len - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for RawBytesIter<'_> {}
