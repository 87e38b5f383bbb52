//! Pebble's columnar blocks (`sstable/colblk`, Pebble v2): the data, index,
//! keyspan blocks of table formats Pebblev5 and later, and the metaindex
//! and properties blocks of Pebblev6 and Pebblev7.
//!
//! A columnar block stores each field of its rows as a column, so that
//! Pebble reads one field of many rows without decoding the others, and
//! compresses each field its own way: integers at the narrowest width,
//! sorted keys by shared prefixes. Every block is a header that lays out
//! the columns ([`header`]), the columns back to back, and one padding
//! byte. The column types:
//!
//! - integers ([`uints`]): one width for the column, an optional base;
//! - byte strings ([`raw_bytes`]): offsets, then the strings;
//! - sorted byte strings ([`prefix_bytes`]): a shared prefix, per-bundle
//!   prefixes, per-row suffixes;
//! - booleans ([`bitmap`]): a bit per row and a summary of its words.
//!
//! The block kinds put these together: data blocks under a key schema
//! ([`data`]), index blocks of either level ([`index`]), key-value blocks
//! ([`key_value`]), keyspan blocks ([`keyspan`]).
//!
//! Every reader borrows its block, checks every offset, width, count and
//! length against the block before use, and answers in time and memory
//! bounded by the block's size: a row count is checked against what the
//! block can hold, and never sizes an allocation. What can be wrong is a
//! [`Corruption`](crate::format::Corruption), which the table reader puts
//! in an [`Error::CorruptBlock`](crate::format::Error::CorruptBlock) with
//! the block's kind and offset.
//!
//! Integers are little-endian, and widths are aligned relative to the
//! block's first byte: Pebble reads columns in place from block buffers it
//! keeps 8-byte aligned, and pads inside the block to align them.

// The table reader will use these decoders; until it does, parts are unused.
#![allow(dead_code, unused_imports)]

mod bitmap;
mod column;
mod data;
mod header;
mod index;
mod key_value;
mod keyspan;
mod prefix_bytes;
mod raw_bytes;
mod uints;

#[cfg(test)]
mod tests;

pub(crate) use bitmap::{Bitmap, BitmapIter};
pub(crate) use data::{DataBlock, DataRows, KeySchema, Row, UnknownKeySchema, Value, CRDB1};
pub(crate) use header::{ColumnarBlock, DataType, VERSION};
pub(crate) use index::{IndexBlock, IndexEntry};
pub(crate) use key_value::KeyValueBlock;
pub(crate) use keyspan::{KeyspanBlock, KeyspanKey, Span};
pub(crate) use prefix_bytes::{PrefixBytes, PrefixBytesIter, PrefixCursor};
pub(crate) use raw_bytes::{RawBytes, RawBytesIter};
pub(crate) use uints::{Uints, UintsIter};
