//! The header of a columnar block, and the columns it lays out.
//!
//! Every columnar block starts with the same header, after a header of the
//! block's own kind (`custom`, `custom_len` bytes: 0 for index and key-value
//! blocks, 4 for keyspan blocks, the key schema's header and 4 for data
//! blocks), and ends with one padding byte:
//!
//! ```text
//! custom header                  custom_len bytes
//! version                        u8, 1
//! column count                   u16 little-endian
//! row count                      u32 little-endian
//! per column: data type          u8: 1 bool, 2 uint, 3 bytes, 4 prefix bytes
//!             start              u32 little-endian, from the block's start
//! column 0 data .. column n-1 data
//! padding                        u8, 0
//! ```
//!
//! Columns follow each other with no gap: column `i` ends where column
//! `i + 1` starts, and the last one at the padding byte. The padding byte
//! lets Pebble point one past a column's end and stay inside the block.
//! Pebble checks neither the version nor the column count (it reads the
//! columns it expects and asserts where each ends); this reader checks
//! both, and that the first column starts right after the header.

use std::ops::Range;

use super::bitmap::Bitmap;
use super::column::Column;
use super::prefix_bytes::PrefixBytes;
use super::raw_bytes::RawBytes;
use super::uints::Uints;
use crate::format::Corruption;

/// The only version of the columnar block format (`colblk.Version1`).
pub(crate) const VERSION: u8 = 1;

/// Version, column count and row count.
const BASE_LEN: usize = 7;
/// Data type and start of one column.
const COLUMN_HEADER_LEN: usize = 5;

/// What a column holds, and so how its bytes are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum DataType {
    /// One bit per row: a [`Bitmap`].
    Bool,
    /// An unsigned integer per row: [`Uints`].
    Uint,
    /// A byte string per row: [`RawBytes`].
    Bytes,
    /// A sorted byte string per row, prefix-compressed: [`PrefixBytes`].
    PrefixBytes,
}

impl DataType {
    /// The type of a column header's type byte (0 is Pebble's invalid type).
    pub(crate) fn from_byte(byte: u8) -> Option<DataType> {
        match byte {
            1 => Some(DataType::Bool),
            2 => Some(DataType::Uint),
            3 => Some(DataType::Bytes),
            4 => Some(DataType::PrefixBytes),
            _ => None,
        }
    }
}

/// A columnar block whose header has been checked: the columns it names lie
/// in order inside the block, each of a known type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColumnarBlock<'b> {
    block: &'b [u8],
    custom_len: usize,
    columns: usize,
    rows: usize,
    check_offsets: bool,
}

impl<'b> ColumnarBlock<'b> {
    /// Reads the header of `block`, which starts after `custom_len` bytes of
    /// the block kind's own header.
    pub(crate) fn parse(block: &'b [u8], custom_len: usize) -> Result<Self, Corruption> {
        let base = block
            .get(custom_len..)
            .and_then(|rest| rest.get(..BASE_LEN))
            .ok_or(Corruption::ColumnarTruncatedHeader)?;
        if base[0] != VERSION {
            return Err(Corruption::ColumnarVersion);
        }
        let columns = usize::from(u16::from_le_bytes([base[1], base[2]]));
        let rows = u32::from_le_bytes([base[3], base[4], base[5], base[6]]);
        let header_end = custom_len + BASE_LEN + columns * COLUMN_HEADER_LEN;
        // The header and the padding byte.
        if block.len() <= header_end {
            return Err(Corruption::ColumnarTruncatedHeader);
        }
        if block[block.len() - 1] != 0 {
            return Err(Corruption::ColumnarPadding);
        }
        let rows = checked_rows(u64::from(rows), block.len())?;
        let parsed = ColumnarBlock {
            block,
            custom_len,
            columns,
            rows,
            check_offsets: true,
        };
        let mut previous = header_end;
        for col in 0..columns {
            let (type_byte, start) = parsed.column_header(col);
            DataType::from_byte(type_byte).ok_or(Corruption::ColumnarSchema)?;
            // Columns are written back to back from the header's end.
            let in_order = if col == 0 {
                start == header_end
            } else {
                start >= previous
            };
            if !in_order || start >= block.len() {
                return Err(Corruption::ColumnarColumnOffset);
            }
            previous = start;
        }
        Ok(parsed)
    }

    /// The same block, its offsets tables no longer checked to rise: for a
    /// block read whole and checked once (a table's top-level index), then
    /// sought in many times, each seek in time of the rows it reads. A
    /// string between offsets that fall is no string (`RawBytes::get`
    /// answers `None`), so nothing unchecked is read.
    pub(crate) fn checked_once(mut self) -> Self {
        self.check_offsets = false;
        self
    }

    /// The header of the block's kind, before the columnar header.
    pub(crate) fn custom_header(&self) -> &'b [u8] {
        &self.block[..self.custom_len]
    }

    /// The format version: always [`VERSION`].
    pub(crate) fn version(&self) -> u8 {
        VERSION
    }

    /// How many columns the block has.
    pub(crate) fn columns(&self) -> usize {
        self.columns
    }

    /// How many rows the header gives (every column of most block kinds has
    /// them; keyspan blocks count their boundary keys apart).
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The type of column `col`.
    pub(crate) fn data_type(&self, col: usize) -> Option<DataType> {
        (col < self.columns)
            .then(|| DataType::from_byte(self.column_header(col).0))
            .flatten()
    }

    /// Where column `col`'s data lies in the block.
    pub(crate) fn column_range(&self, col: usize) -> Option<Range<usize>> {
        (col < self.columns).then(|| {
            let start = self.column_header(col).1;
            let end = if col + 1 < self.columns {
                self.column_header(col + 1).1
            } else {
                self.block.len() - 1
            };
            start..end
        })
    }

    /// Checks that the block has exactly the columns `parts`, in order, one
    /// part after another.
    pub(crate) fn expect_columns(&self, parts: &[&[DataType]]) -> Result<(), Corruption> {
        let types = parts.iter().flat_map(|part| part.iter());
        let count = parts.iter().map(|part| part.len()).sum::<usize>();
        let same = self.columns == count
            && types
                .enumerate()
                .all(|(col, &t)| self.data_type(col) == Some(t));
        if same {
            Ok(())
        } else {
            Err(Corruption::ColumnarSchema)
        }
    }

    /// Column `col` as integers, `rows` of them.
    pub(crate) fn uints(&self, col: usize, rows: usize) -> Result<Uints<'b>, Corruption> {
        self.decode(col, DataType::Uint, |c| Uints::read(c, rows))
    }

    /// Column `col` as byte strings, `rows` of them.
    pub(crate) fn raw_bytes(&self, col: usize, rows: usize) -> Result<RawBytes<'b>, Corruption> {
        self.decode(col, DataType::Bytes, |c| RawBytes::read(c, rows))
    }

    /// Column `col` as prefix-compressed byte strings, `rows` of them.
    pub(crate) fn prefix_bytes(
        &self,
        col: usize,
        rows: usize,
    ) -> Result<PrefixBytes<'b>, Corruption> {
        self.decode(col, DataType::PrefixBytes, |c| PrefixBytes::read(c, rows))
    }

    /// Column `col` as a bitmap of `rows` bits.
    pub(crate) fn bitmap(&self, col: usize, rows: usize) -> Result<Bitmap<'b>, Corruption> {
        self.decode(col, DataType::Bool, |c| Bitmap::read(c, rows))
    }

    /// Reads column `col`, of type `expected`, and checks that it fills its
    /// bytes exactly.
    fn decode<T>(
        &self,
        col: usize,
        expected: DataType,
        read: impl FnOnce(&mut Column<'b>) -> Result<T, Corruption>,
    ) -> Result<T, Corruption> {
        if self.data_type(col) != Some(expected) {
            return Err(Corruption::ColumnarSchema);
        }
        let range = self.column_range(col).ok_or(Corruption::ColumnarSchema)?;
        let mut column =
            Column::new(self.block, range.start, range.end).checking_offsets(self.check_offsets);
        let decoded = read(&mut column)?;
        column.finish()?;
        Ok(decoded)
    }

    /// Column `col`'s type byte and start; `col` is below the column count,
    /// whose headers [`parse`](Self::parse) found inside the block.
    fn column_header(&self, col: usize) -> (u8, usize) {
        let at = self.custom_len + BASE_LEN + col * COLUMN_HEADER_LEN;
        let h = &self.block[at..at + COLUMN_HEADER_LEN];
        let start = u32::from_le_bytes([h[1], h[2], h[3], h[4]]);
        // A start past the block fails the check in `parse`, so saturating
        // on a 16-bit target changes no answer.
        (h[0], usize::try_from(start).unwrap_or(usize::MAX))
    }
}

/// A row count read from a block of `len` bytes, if the block can hold that
/// many rows. Every block Pebble writes stores each row in at least one bit
/// of some column (a data block's prefix-changed bitmap is never elided; in
/// other kinds the keys or offsets differ from row to row), so a count past
/// 8 bits a byte is corrupt, and bounds the work a block can ask for.
pub(crate) fn checked_rows(rows: u64, len: usize) -> Result<usize, Corruption> {
    let most = (len as u64).saturating_mul(8);
    if rows > most {
        return Err(Corruption::ColumnarRowCount);
    }
    usize::try_from(rows).map_err(|_| Corruption::ColumnarRowCount)
}
