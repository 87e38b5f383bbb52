//! A cursor over one column's bytes.
//!
//! A column is read front to back, and must end exactly where the next
//! column starts (the block's last column: before the padding byte), as
//! Pebble's `DecodeColumn` asserts. Widths are aligned relative to the
//! block's first byte, not the column's: Pebble keeps blocks 8-byte aligned
//! in memory and pads within them, so the cursor keeps the whole block to
//! know where it is. Padding is checked to be zero, which is what Pebble
//! writes (`alignWithZeroes`).

use crate::format::Corruption;

/// The bytes of one column, `block[pos..end]`, read front to back.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Column<'b> {
    block: &'b [u8],
    pos: usize,
    end: usize,
    /// Whether offsets tables are checked to rise (see
    /// [`ColumnarBlock::checked_once`](super::ColumnarBlock::checked_once)).
    check_offsets: bool,
}

impl<'b> Column<'b> {
    /// The column `block[start..end]`; the caller has checked the range.
    pub(crate) fn new(block: &'b [u8], start: usize, end: usize) -> Self {
        debug_assert!(start <= end && end <= block.len());
        Column {
            block,
            pos: start,
            end,
            check_offsets: true,
        }
    }

    /// The same column, its offsets tables checked to rise or not.
    pub(crate) fn checking_offsets(mut self, check: bool) -> Self {
        self.check_offsets = check;
        self
    }

    /// Whether offsets tables are to be checked to rise.
    pub(crate) fn checks_offsets(&self) -> bool {
        self.check_offsets
    }

    /// The next byte.
    pub(crate) fn byte(&mut self) -> Result<u8, Corruption> {
        Ok(self.take(1)?[0])
    }

    /// The next `n` bytes, all within the column.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'b [u8], Corruption> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.end)
            .ok_or(Corruption::ColumnarColumnLength)?;
        let bytes = &self.block[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    /// The next `n` bytes, `n` a product that must not overflow.
    pub(crate) fn take_n(&mut self, count: usize, width: usize) -> Result<&'b [u8], Corruption> {
        let n = count
            .checked_mul(width)
            .ok_or(Corruption::ColumnarColumnLength)?;
        self.take(n)
    }

    /// Skips the padding up to the next multiple of `to` (a power of two)
    /// from the block's start.
    pub(crate) fn align(&mut self, to: usize) -> Result<(), Corruption> {
        debug_assert!(to.is_power_of_two());
        let padding = self.pos.wrapping_neg() & (to - 1);
        if self.take(padding)?.iter().any(|&b| b != 0) {
            return Err(Corruption::ColumnarPadding);
        }
        Ok(())
    }

    /// Checks that the column's bytes are all read.
    pub(crate) fn finish(self) -> Result<(), Corruption> {
        if self.pos == self.end {
            Ok(())
        } else {
            Err(Corruption::ColumnarColumnLength)
        }
    }
}
