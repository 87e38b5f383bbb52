//! Columns of sorted, prefix-compressed byte strings
//! (`DataTypePrefixBytes`, Pebble's `PrefixBytes`): a data block's keys.
//!
//! Rows are grouped in bundles of `2^shift` rows. The prefix every key of
//! the column shares is stored once, the prefix every key of a bundle
//! shares (past that one) once per bundle, and each row keeps the rest,
//! its suffix; a row equal to the row before it stores an empty suffix.
//! Compression never crosses a bundle, so any row reads in O(bundle size)
//! and a walk forward in O(1) per row. The strings are a `RawBytes` whose
//! first offset is not 0 but the shared prefix's length:
//!
//! ```text
//! shift     u8: log2 of the bundle size
//! offsets   an integer column of 1 + bundles + rows values (no base, at
//!           most 4 bytes wide), rising; bundles = ceil(rows / 2^shift)
//! data      offset[last] bytes
//!
//! shared prefix           data[0 .. offset 0]
//! bundle b's prefix       slice j = b * (2^shift + 1)
//! row r's suffix          slice 1 + r / 2^shift + r
//! slice i                 data[offset i .. offset i+1]
//! ```
//!
//! Row r is the shared prefix, its bundle's prefix and its suffix. An empty
//! suffix past a bundle's first row means "the same as the row before": the
//! row takes the nearest suffix before it in the bundle that is not empty
//! (none where all are, leaving the two prefixes alone). A column of one
//! row stores the whole key as the shared prefix. A column of no rows has
//! no bytes (Pebble never writes one, and its reader refuses it).
//!
//! A shift of 32 or more makes one bundle of every row, as in Pebble, whose
//! shifts of a 32-bit row number by that much give 0.

use super::column::Column;
use super::uints::{index, read_offsets, Uints};
use crate::format::Corruption;

/// A column of prefix-compressed strings, borrowed from its block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PrefixBytes<'b> {
    /// log2 of the bundle size, at most 63.
    shift: u32,
    rows: usize,
    bundles: usize,
    /// `1 + bundles + rows` offsets, rising, the last `data.len()`.
    offsets: Uints<'b>,
    data: &'b [u8],
}

impl<'b> PrefixBytes<'b> {
    /// Reads `rows` strings from the front of `column`.
    pub(crate) fn read(column: &mut Column<'b>, rows: usize) -> Result<Self, Corruption> {
        if rows == 0 {
            return Ok(PrefixBytes {
                shift: 0,
                rows: 0,
                bundles: 0,
                offsets: Uints::empty(),
                data: &[],
            });
        }
        let shift = u32::from(column.byte()?).min(63);
        let bundles = 1 + ((rows - 1) as u64 >> shift) as usize;
        let slots = rows
            .checked_add(bundles)
            .and_then(|n| n.checked_add(1))
            .ok_or(Corruption::ColumnarRowCount)?;
        let offsets = read_offsets(column, slots)?;
        let end = offsets.get(slots - 1).ok_or(Corruption::ColumnarOffsets)?;
        let data =
            column.take(usize::try_from(end).map_err(|_| Corruption::ColumnarColumnLength)?)?;
        Ok(PrefixBytes {
            shift,
            rows,
            bundles,
            offsets,
            data,
        })
    }

    /// How many strings the column holds.
    pub(crate) fn len(&self) -> usize {
        self.rows
    }

    /// Whether the column holds none.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// How many rows a bundle holds (the last may hold fewer).
    pub(crate) fn bundle_size(&self) -> u64 {
        1u64 << self.shift
    }

    /// How many bundles the rows make.
    pub(crate) fn bundle_count(&self) -> usize {
        self.bundles
    }

    /// The prefix every string of the column starts with.
    pub(crate) fn shared_prefix(&self) -> &'b [u8] {
        self.data
            .get(..index(self.offsets.get(0).unwrap_or(0)))
            .unwrap_or(&[])
    }

    /// Bundle `b`'s prefix, past the shared prefix; `None` past the last
    /// bundle.
    pub(crate) fn bundle_prefix(&self, b: usize) -> Option<&'b [u8]> {
        if b >= self.bundles {
            return None;
        }
        self.slice(self.bundle_slot(b))
    }

    /// Row `row`'s string into `out` (cleared first); `None`, with `out`
    /// empty, past the last row. Takes O(bundle size) where the row repeats
    /// the rows before it; [`cursor`](Self::cursor) walks rows in O(1) each.
    pub(crate) fn get_into(&self, row: usize, out: &mut Vec<u8>) -> Option<()> {
        out.clear();
        if row >= self.rows {
            return None;
        }
        let bundle = self.slice(self.bundle_slot(self.bundle_of(row)))?;
        let suffix = self.slice(self.row_suffix_slot(row)?)?;
        out.extend_from_slice(self.shared_prefix());
        out.extend_from_slice(bundle);
        out.extend_from_slice(suffix);
        Some(())
    }

    /// A walk over the rows in order.
    pub(crate) fn cursor(&self) -> PrefixCursor<'b> {
        PrefixCursor {
            column: *self,
            next: 0,
            suffix_slot: 0,
            bundle_end: 0,
            key_len: 0,
        }
    }

    /// Each row's string length, in order, without building the strings.
    pub(crate) fn lengths(&self) -> impl Iterator<Item = usize> + 'b {
        let mut cursor = self.cursor();
        std::iter::from_fn(move || cursor.advance(None))
    }

    /// The bundle row `row` is in.
    fn bundle_of(&self, row: usize) -> usize {
        (row as u64 >> self.shift) as usize
    }

    /// The slot of bundle `b`'s prefix: `b * (bundle size + 1)`, that is
    /// the rows of the bundles before it and one prefix each.
    fn bundle_slot(&self, b: usize) -> usize {
        // b < bundles, so b * bundle size < rows.
        (((b as u64) << self.shift) as usize).saturating_add(b)
    }

    /// The slot of the last suffix at or before row `row`'s that is not
    /// empty, staying in the row's bundle (its first row's, empty or not,
    /// where all are): the suffix the row repeats.
    fn row_suffix_slot(&self, row: usize) -> Option<usize> {
        let first = self.bundle_slot(self.bundle_of(row)) + 1;
        let mut slot = 1 + self.bundle_of(row) + row;
        while slot > first && self.slice(slot)?.is_empty() {
            slot -= 1;
        }
        Some(slot)
    }

    /// Slice `i`: `data[offset i .. offset i+1]`.
    fn slice(&self, i: usize) -> Option<&'b [u8]> {
        let start = self.offsets.get(i)?;
        let end = self.offsets.get(i.checked_add(1)?)?;
        self.data.get(index(start)..index(end))
    }
}

/// A walk over a [`PrefixBytes`] column's rows, building each string in a
/// buffer the caller owns from the one before it: a row copies only its
/// suffix, and a bundle's first row its bundle prefix, so a walk copies
/// each stored byte once (the shared prefix once in all).
///
/// The buffer's first bytes must be the string the cursor gave last: the
/// caller may append past it (a key's suffix) between rows, and the cursor
/// cuts the buffer back.
#[derive(Clone, Debug)]
pub(crate) struct PrefixCursor<'b> {
    column: PrefixBytes<'b>,
    /// The row the next call gives.
    next: usize,
    /// The slot of the last row's suffix.
    suffix_slot: usize,
    /// Length of the shared and bundle prefixes of the last row.
    bundle_end: usize,
    /// Length of the last row's string.
    key_len: usize,
}

impl PrefixCursor<'_> {
    /// Puts the next row's string in `buf[..n]` and returns `n`; `None`
    /// past the last row.
    pub(crate) fn next(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        self.advance(Some(buf))
    }

    /// The row the next call to [`next`](Self::next) gives.
    pub(crate) fn position(&self) -> usize {
        self.next
    }

    /// Steps to the next row, building its string in `buf` where given, and
    /// returns the string's length.
    fn advance(&mut self, mut buf: Option<&mut Vec<u8>>) -> Option<usize> {
        let column = self.column;
        let row = self.next;
        if row >= column.rows {
            return None;
        }
        let starts_bundle = row == 0 || column.bundle_of(row) != column.bundle_of(row - 1);
        if starts_bundle {
            if row == 0 {
                if let Some(buf) = buf.as_deref_mut() {
                    buf.clear();
                    buf.extend_from_slice(column.shared_prefix());
                }
            }
            let shared = column.shared_prefix().len();
            let slot = column.bundle_slot(column.bundle_of(row));
            let bundle = column.slice(slot)?;
            let suffix = column.slice(slot + 1)?;
            if let Some(buf) = buf.as_deref_mut() {
                buf.truncate(shared);
                buf.extend_from_slice(bundle);
                buf.extend_from_slice(suffix);
            }
            self.suffix_slot = slot + 1;
            self.bundle_end = shared + bundle.len();
            self.key_len = self.bundle_end + suffix.len();
        } else {
            self.suffix_slot += 1;
            let suffix = column.slice(self.suffix_slot)?;
            // An empty suffix repeats the row before, whose string the
            // buffer still starts with.
            if !suffix.is_empty() {
                if let Some(buf) = buf.as_deref_mut() {
                    buf.truncate(self.bundle_end);
                    buf.extend_from_slice(suffix);
                }
                self.key_len = self.bundle_end + suffix.len();
            }
        }
        if let Some(buf) = buf {
            buf.truncate(self.key_len);
        }
        self.next += 1;
        Some(self.key_len)
    }
}

/// The strings of a [`PrefixBytes`] column, in order, in a buffer of the
/// iterator's own (a lending iterator: each string lives until the next).
#[derive(Clone, Debug)]
pub(crate) struct PrefixBytesIter<'b> {
    cursor: PrefixCursor<'b>,
    buf: Vec<u8>,
}

impl<'b> PrefixBytesIter<'b> {
    /// A walk over `column`.
    pub(crate) fn new(column: &PrefixBytes<'b>) -> Self {
        PrefixBytesIter {
            cursor: column.cursor(),
            buf: Vec::new(),
        }
    }

    /// The next string.
    pub(crate) fn next(&mut self) -> Option<&[u8]> {
        let n = self.cursor.next(&mut self.buf)?;
        self.buf.get(..n)
    }
}
