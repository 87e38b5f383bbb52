//! Columns of booleans (`DataTypeBool`, Pebble's `Bitmap`).
//!
//! One bit per row, and a summary that says which 64-bit words hold a set
//! bit, so that Pebble can seek to the next set bit without reading every
//! word:
//!
//! ```text
//! encoding   u8: 0 a bitmap follows, 1 every bit is 0 (nothing follows)
//! padding    zeros, up to a multiple of 8 from the block's start
//! words      ceil(rows / 64) u64 little-endian; row i is bit i % 64 of
//!            word i / 64; bits past the last row are 0
//! summary    ceil(words / 64) u64 little-endian; bit j of summary word k is
//!            set when word 64k + j is not 0
//! ```
//!
//! Unlike the other columns, a bitmap of no rows still has its encoding
//! byte. Reading checks the summary against the words and the bits past
//! the last row, which Pebble's seeks rely on.

use super::column::Column;
use crate::format::Corruption;

/// The encoding byte of a bitmap that follows.
const DEFAULT_ENCODING: u8 = 0;
/// The encoding byte of a bitmap with no bit set.
const ZERO_ENCODING: u8 = 1;

/// A column of booleans, borrowed from its block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bitmap<'b> {
    /// The words, 8 bytes each, without the summary; empty for a bitmap
    /// stored as all zeros.
    words: &'b [u8],
    rows: usize,
}

impl<'b> Bitmap<'b> {
    /// Reads a bitmap of `rows` bits from the front of `column`.
    pub(crate) fn read(column: &mut Column<'b>, rows: usize) -> Result<Self, Corruption> {
        match column.byte()? {
            ZERO_ENCODING => return Ok(Bitmap { words: &[], rows }),
            DEFAULT_ENCODING => {}
            _ => return Err(Corruption::ColumnarBitmapEncoding),
        }
        column.align(8)?;
        let word_count = rows.div_ceil(64);
        let words = column.take_n(word_count, 8)?;
        let summary = column.take_n(word_count.div_ceil(64), 8)?;
        let bitmap = Bitmap { words, rows };
        bitmap.check(summary)?;
        Ok(bitmap)
    }

    /// Checks that no bit is set past the last row, and that the summary
    /// marks exactly the words that are not 0.
    fn check(&self, summary: &[u8]) -> Result<(), Corruption> {
        let tail = self.rows % 64;
        if let Some(last) = self
            .words
            .len()
            .checked_sub(8)
            .map(|at| word(self.words, at))
        {
            if tail != 0 && last >> tail != 0 {
                return Err(Corruption::ColumnarBitmapSummary);
            }
        }
        let mut words = self.words.chunks_exact(8);
        for summary_word in summary.chunks_exact(8) {
            let mut expected = 0u64;
            for bit in 0..64 {
                match words.next() {
                    Some(w) if w.iter().any(|&b| b != 0) => expected |= 1 << bit,
                    Some(_) => {}
                    None => break,
                }
            }
            if word(summary_word, 0) != expected {
                return Err(Corruption::ColumnarBitmapSummary);
            }
        }
        Ok(())
    }

    /// How many bits the bitmap holds.
    pub(crate) fn len(&self) -> usize {
        self.rows
    }

    /// Whether it holds none.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Whether no bit is set, known from the encoding alone.
    pub(crate) fn is_all_zero(&self) -> bool {
        self.words.is_empty()
    }

    /// Bit `i`, `None` past the end.
    pub(crate) fn get(&self, i: usize) -> Option<bool> {
        if i >= self.rows {
            return None;
        }
        if self.words.is_empty() {
            return Some(false);
        }
        let byte = self.words.get(i / 8)?;
        Some(byte >> (i % 8) & 1 == 1)
    }

    /// How many bits are set.
    pub(crate) fn count_ones(&self) -> usize {
        self.words.iter().map(|b| b.count_ones() as usize).sum()
    }

    /// The bits in order.
    pub(crate) fn iter(&self) -> BitmapIter<'b> {
        BitmapIter {
            bitmap: *self,
            next: 0,
        }
    }
}

/// The little-endian u64 at `bytes[at..at + 8]`; `at + 8` is in bounds.
fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

/// The bits of a [`Bitmap`], in order.
#[derive(Clone, Debug)]
pub(crate) struct BitmapIter<'b> {
    bitmap: Bitmap<'b>,
    next: usize,
}

impl Iterator for BitmapIter<'_> {
    type Item = bool;

    fn next(&mut self) -> Option<bool> {
        let bit = self.bitmap.get(self.next)?;
        self.next += 1;
        Some(bit)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.bitmap.rows - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for BitmapIter<'_> {}
