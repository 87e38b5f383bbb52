//! Columns of unsigned integers (`DataTypeUint`, Pebble's `UintEncoding`).
//!
//! Pebble stores each column of integers at the narrowest width that holds
//! them, and subtracts their minimum first where that makes them narrower:
//!
//! ```text
//! encoding   u8: bits 0-6 the width in bytes (0, 1, 2, 4 or 8),
//!                bit 7 set when a base follows (never with width 8)
//! base       u64 little-endian, only with bit 7
//! padding    zeros, up to a multiple of the width from the block's start
//! values     rows x width bytes, little-endian; each value is base + stored
//! ```
//!
//! Width 0 stores no values: every row is the base (or 0 without one). A
//! column of no rows has no bytes at all, not even the encoding byte.
//! Values are aligned to their width relative to the block's first byte
//! (Pebble reads them in place from an 8-byte-aligned buffer), so the same
//! column written at another offset has other padding.

use super::column::Column;
use crate::format::Corruption;

/// The encoding byte's flag for a base.
const DELTA: u8 = 0x80;

/// A column of integers, borrowed from its block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Uints<'b> {
    /// `len * width` bytes.
    values: &'b [u8],
    width: usize,
    base: u64,
    len: usize,
}

impl<'b> Uints<'b> {
    /// Reads `rows` integers from the front of `column`.
    pub(crate) fn read(column: &mut Column<'b>, rows: usize) -> Result<Self, Corruption> {
        if rows == 0 {
            return Ok(Uints::empty());
        }
        let encoding = column.byte()?;
        let delta = encoding & DELTA != 0;
        let width = usize::from(encoding & !DELTA);
        match width {
            0 | 1 | 2 | 4 => {}
            8 if !delta => {}
            _ => return Err(Corruption::ColumnarUintEncoding),
        }
        let base = if delta {
            let b = column.take(8)?;
            u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
        } else {
            0
        };
        if width > 0 {
            column.align(width)?;
        }
        let values = column.take_n(rows, width)?;
        Ok(Uints {
            values,
            width,
            base,
            len: rows,
        })
    }

    /// A column of no integers.
    pub(crate) fn empty() -> Self {
        Uints {
            values: &[],
            width: 0,
            base: 0,
            len: 0,
        }
    }

    /// How many integers the column holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether the column holds none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes per stored value: 0, 1, 2, 4 or 8.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// What is added to each stored value (0 where the column has none).
    pub(crate) fn base(&self) -> u64 {
        self.base
    }

    /// Integer `i`, `None` past the end. The base is added modulo 2^64, as
    /// Pebble adds it.
    pub(crate) fn get(&self, i: usize) -> Option<u64> {
        if i >= self.len {
            return None;
        }
        if self.width == 0 {
            return Some(self.base);
        }
        let at = i * self.width;
        let b = self.values.get(at..at + self.width)?;
        let stored = match *b {
            [a] => u64::from(a),
            [a, b] => u64::from(u16::from_le_bytes([a, b])),
            [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
            [a, b, c, d, e, f, g, h] => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
            _ => return None,
        };
        Some(self.base.wrapping_add(stored))
    }

    /// The integers in order.
    pub(crate) fn iter(&self) -> UintsIter<'b> {
        UintsIter {
            uints: *self,
            next: 0,
        }
    }
}

/// The integers of a [`Uints`] column, in order.
#[derive(Clone, Debug)]
pub(crate) struct UintsIter<'b> {
    uints: Uints<'b>,
    next: usize,
}

impl Iterator for UintsIter<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let value = self.uints.get(self.next)?;
        self.next += 1;
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.uints.len - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for UintsIter<'_> {}

/// Reads an offsets table: `count` integers with no base and at most 4
/// bytes wide, as Pebble's `DecodeUnsafeOffsets` demands, that never go
/// down. (A base of 0 behind the delta flag is no base: Pebble accepts it.)
pub(crate) fn read_offsets<'b>(
    column: &mut Column<'b>,
    count: usize,
) -> Result<Uints<'b>, Corruption> {
    let offsets = Uints::read(column, count)?;
    if offsets.base != 0 || offsets.width == 8 {
        return Err(Corruption::ColumnarOffsets);
    }
    if !column.checks_offsets() {
        return Ok(offsets);
    }
    let mut previous = 0;
    for offset in offsets.iter() {
        if offset < previous {
            return Err(Corruption::ColumnarOffsets);
        }
        previous = offset;
    }
    Ok(offsets)
}

/// An offset as an index into the data it points into, which holds at
/// least that many bytes (so that it fits a `usize`).
pub(crate) fn index(offset: u64) -> usize {
    usize::try_from(offset).unwrap_or(usize::MAX)
}
