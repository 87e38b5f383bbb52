//! LevelDB's table file (table/format.cc, table/block.cc): the footer, block
//! handles, the 5-byte block trailer with its masked CRC-32C, Snappy blocks, and
//! the key/value entries of data, index and metaindex blocks.
//!
//! ```text
//! data block 0 .. data block N-1 | filter block | metaindex block | index block | footer
//! each block: contents | compression type (1 byte) | masked crc32c of contents + type (4 bytes)
//! footer (48 bytes): metaindex handle | index handle | zero padding to 40 | magic (fixed64)
//! ```

use std::borrow::Cow;
use std::fmt;

use byteorder::{ByteOrder, LittleEndian};

use crate::Error;

/// The magic number that ends every LevelDB table.
pub const TABLE_MAGIC: u64 = 0xdb4775248b80fb57;
/// Length of the footer.
pub const FOOTER_LEN: usize = 48;
/// Length of the trailer after each block: compression type and masked CRC-32C.
pub const BLOCK_TRAILER_LEN: u64 = 5;

/// Where a block lies in the file: its contents, without the 5-byte trailer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockHandle {
    /// Offset of the block in the file.
    pub offset: u64,
    /// Length of the block's contents (the trailer follows).
    pub size: u64,
}

impl BlockHandle {
    /// Decodes two varint64s from the front of `input`, and returns what follows.
    pub fn decode(input: &[u8]) -> Option<(BlockHandle, &[u8])> {
        let (offset, rest) = varint64(input)?;
        let (size, rest) = varint64(rest)?;
        Some((BlockHandle { offset, size }, rest))
    }
}

impl fmt::Display for BlockHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "offset {} size {}", self.offset, self.size)
    }
}

/// Which block of a table, for errors and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// A data block: the table's keys and values.
    Data,
    /// The index block: one entry per data block.
    Index,
    /// The metaindex block: names the filter block.
    Metaindex,
    /// The filter block.
    Filter,
}

impl fmt::Display for BlockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BlockKind::Data => "data block",
            BlockKind::Index => "index block",
            BlockKind::Metaindex => "metaindex block",
            BlockKind::Filter => "filter block",
        })
    }
}

/// A block's compression type, from its trailer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Compression {
    /// Type 0: stored as is.
    None,
    /// Type 1: Snappy.
    Snappy,
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "none",
            Compression::Snappy => "snappy",
        })
    }
}

/// A block's contents, checked and uncompressed.
#[derive(Clone, Debug)]
pub struct Block<'a> {
    /// Where it is.
    pub handle: BlockHandle,
    /// How it was stored.
    pub compression: Compression,
    /// The contents: borrowed from the file when stored uncompressed.
    pub contents: Cow<'a, [u8]>,
}

/// An entry of the metaindex or index block: a key and the block it points to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockEntry {
    /// The entry's key: for the index, a separator >= every key of the block
    /// and < every key of the next one; for the metaindex, a name such as
    /// `filter.leveldb.BuiltinBloomFilter2`.
    pub key: Vec<u8>,
    /// The block.
    pub handle: BlockHandle,
}

/// A table file, read from a byte slice: its footer, index and metaindex are
/// read and checked when it is opened, other blocks on demand.
///
/// Nothing here panics or allocates more than the file's size suggests,
/// whatever the bytes: every problem is an [`Error`] saying where.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use leveldb_filter::Table;
///
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/tables/user-4k-r16-none.ldb"))?;
/// let table = Table::new(&bytes)?;
/// let filter = table.filter_block()?.expect("this table has a filter");
/// assert_eq!(filter.name, "leveldb.BuiltinBloomFilter2");
/// // Every data block, checked and uncompressed, with its keys.
/// let blocks = table.data_blocks()?;
/// assert_eq!(blocks.len(), table.index().len());
/// assert!(blocks.iter().all(|b| !b.keys.is_empty()));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Table<'a> {
    file: &'a [u8],
    metaindex_handle: BlockHandle,
    index_handle: BlockHandle,
    index: Vec<BlockEntry>,
    metaindex: Vec<BlockEntry>,
    verify_checksums: bool,
}

/// The filter block of a table, as the metaindex names it.
#[derive(Clone, Debug)]
pub struct TableFilter<'a> {
    /// The policy name, from the metaindex key `filter.<name>`.
    pub name: String,
    /// The block.
    pub block: Block<'a>,
}

impl<'a> Table<'a> {
    /// Reads the footer, the index and the metaindex, checking their checksums.
    pub fn new(file: &'a [u8]) -> Result<Self, Error> {
        Self::open(file, true)
    }

    /// As [`Table::new`], but skipping every checksum, as LevelDB does unless
    /// `verify_checksums` or `paranoid_checks` is set.
    pub fn new_unchecked(file: &'a [u8]) -> Result<Self, Error> {
        Self::open(file, false)
    }

    fn open(file: &'a [u8], verify_checksums: bool) -> Result<Self, Error> {
        let Some(footer_at) = file.len().checked_sub(FOOTER_LEN) else {
            return Err(Error::TruncatedFooter {
                len: file.len() as u64,
            });
        };
        let footer = &file[footer_at..];
        let magic = LittleEndian::read_u64(&footer[40..]);
        if magic != TABLE_MAGIC {
            return Err(Error::BadMagic { found: magic });
        }
        let bad_footer = Error::BadFooterHandle;
        let (metaindex_handle, rest) =
            BlockHandle::decode(&footer[..40]).ok_or(bad_footer.clone())?;
        let (index_handle, _) = BlockHandle::decode(rest).ok_or(bad_footer)?;
        let mut table = Table {
            file,
            metaindex_handle,
            index_handle,
            index: Vec::new(),
            metaindex: Vec::new(),
            verify_checksums,
        };
        table.index = table.block_entries(BlockKind::Index, index_handle)?;
        table.metaindex = table.block_entries(BlockKind::Metaindex, metaindex_handle)?;
        Ok(table)
    }

    /// The file's bytes.
    pub fn file(&self) -> &'a [u8] {
        self.file
    }

    /// The footer's metaindex handle.
    pub fn metaindex_handle(&self) -> BlockHandle {
        self.metaindex_handle
    }

    /// The footer's index handle.
    pub fn index_handle(&self) -> BlockHandle {
        self.index_handle
    }

    /// The index: one entry per data block, in key order.
    pub fn index(&self) -> &[BlockEntry] {
        &self.index
    }

    /// The metaindex entries.
    pub fn metaindex(&self) -> &[BlockEntry] {
        &self.metaindex
    }

    /// The filter block, if the metaindex names one (`filter.<policy name>`).
    /// LevelDB uses a table's filter only when that name is its own policy's.
    pub fn filter_block(&self) -> Result<Option<TableFilter<'a>>, Error> {
        let Some(entry) = self
            .metaindex
            .iter()
            .find(|e| e.key.starts_with(b"filter."))
        else {
            return Ok(None);
        };
        Ok(Some(TableFilter {
            name: String::from_utf8_lossy(&entry.key[b"filter.".len()..]).into_owned(),
            block: self.read_block(BlockKind::Filter, entry.handle)?,
        }))
    }

    /// Reads a block: checks that it lies inside the file, checks its CRC-32C
    /// (unless opened unchecked) and uncompresses it.
    pub fn read_block(&self, kind: BlockKind, handle: BlockHandle) -> Result<Block<'a>, Error> {
        let past_end = Error::HandlePastEnd {
            block: kind,
            handle,
            file_len: self.file.len() as u64,
        };
        let end = handle
            .offset
            .checked_add(handle.size)
            .and_then(|e| e.checked_add(BLOCK_TRAILER_LEN));
        let Some(end) = end.filter(|&e| e <= self.file.len() as u64) else {
            return Err(past_end);
        };
        let (start, size) = (handle.offset as usize, handle.size as usize);
        let stored = &self.file[start..end as usize];
        let (contents, trailer) = stored.split_at(size);
        if self.verify_checksums {
            let expected = unmask(LittleEndian::read_u32(&trailer[1..]));
            let found = crc32c::crc32c_append(crc32c::crc32c(contents), &trailer[..1]);
            if expected != found {
                return Err(Error::ChecksumMismatch {
                    block: kind,
                    offset: handle.offset,
                    expected,
                    found,
                });
            }
        }
        let corrupt = |what| Error::CorruptBlock {
            block: kind,
            offset: handle.offset,
            what,
        };
        let (compression, contents) = match trailer[0] {
            0 => (Compression::None, Cow::Borrowed(contents)),
            1 => {
                let len = snap::raw::decompress_len(contents)
                    .map_err(|_| corrupt("bad Snappy length header"))?;
                // Snappy cannot expand more than about 22 times (a 3-byte copy
                // of 64 bytes): a larger claim is corrupt, and not allocated.
                if len > contents.len().saturating_mul(22) {
                    return Err(corrupt("Snappy length header larger than the data allows"));
                }
                let data = snap::raw::Decoder::new()
                    .decompress_vec(contents)
                    .map_err(|_| corrupt("corrupt Snappy data"))?;
                (Compression::Snappy, Cow::Owned(data))
            }
            2 => {
                return Err(Error::UnsupportedCompression {
                    block: kind,
                    offset: handle.offset,
                    name: "zstd",
                })
            }
            kind_byte => {
                return Err(Error::UnknownCompression {
                    block: kind,
                    offset: handle.offset,
                    kind: kind_byte,
                })
            }
        };
        Ok(Block {
            handle,
            compression,
            contents,
        })
    }

    /// Reads a block whose values are block handles (index, metaindex).
    fn block_entries(
        &self,
        kind: BlockKind,
        handle: BlockHandle,
    ) -> Result<Vec<BlockEntry>, Error> {
        let block = self.read_block(kind, handle)?;
        let corrupt = |what| Error::CorruptBlock {
            block: kind,
            offset: handle.offset,
            what,
        };
        let mut entries = Vec::new();
        // Keys are rebuilt from shared prefixes: a few bytes of entry can
        // stand for a long key, so their total is bounded by the file's size.
        let mut budget = key_budget(self.file.len());
        block_entries(&block.contents, |key, value| {
            budget = budget.checked_sub(key.len()).ok_or(KEYS_TOO_LONG)?;
            let (handle, _) =
                BlockHandle::decode(value).ok_or("an entry's value is not a block handle")?;
            entries.push(BlockEntry {
                key: key.to_vec(),
                handle,
            });
            Ok(())
        })
        .map_err(corrupt)?;
        Ok(entries)
    }
}

/// What a table's keys may add up to once their shared prefixes are undone:
/// 64 times the file, plus 64 MiB. LevelDB's restart points (every 16 keys by
/// default) keep real tables far below; a crafted block whose every entry
/// shares a long prefix would otherwise expand without bound.
pub(crate) fn key_budget(file_len: usize) -> usize {
    file_len.saturating_mul(64).saturating_add(64 << 20)
}

/// The error for keys past [`key_budget`].
pub(crate) const KEYS_TOO_LONG: &str = "keys expand past 64 times the file's size";

/// LevelDB's `crc32c::Unmask`.
fn unmask(masked: u32) -> u32 {
    let rot = masked.wrapping_sub(0xa282ead8);
    rot.rotate_left(15)
}

/// Calls `f(key, value)` for each entry of a data, index or metaindex block,
/// in order, undoing the keys' prefix compression; says what is wrong with a
/// malformed block, or passes on what `f` says is wrong, and stops there.
pub fn block_entries(
    block: &[u8],
    mut f: impl FnMut(&[u8], &[u8]) -> Result<(), &'static str>,
) -> Result<(), &'static str> {
    let len = block.len();
    if len < 4 {
        return Err("block shorter than its restart count");
    }
    let restarts = LittleEndian::read_u32(&block[len - 4..]) as usize;
    if restarts > (len - 4) / 4 {
        return Err("restart array larger than the block");
    }
    let mut entries = &block[..len - 4 - 4 * restarts];
    let mut key = Vec::new();
    while !entries.is_empty() {
        let (shared, rest) = varint32(entries).ok_or("bad varint in an entry header")?;
        let (unshared, rest) = varint32(rest).ok_or("bad varint in an entry header")?;
        let (value_len, rest) = varint32(rest).ok_or("bad varint in an entry header")?;
        let (shared, unshared, value_len) =
            (shared as usize, unshared as usize, value_len as usize);
        if shared > key.len() {
            return Err("an entry shares more bytes than the previous key has");
        }
        if unshared.saturating_add(value_len) > rest.len() {
            return Err("an entry runs into the restart array");
        }
        key.truncate(shared);
        key.extend_from_slice(&rest[..unshared]);
        f(&key, &rest[unshared..unshared + value_len])?;
        entries = &rest[unshared + value_len..];
    }
    Ok(())
}

fn varint32(input: &[u8]) -> Option<(u32, &[u8])> {
    let (value, rest) = varint(input, 5)?;
    Some((value as u32, rest))
}

fn varint64(input: &[u8]) -> Option<(u64, &[u8])> {
    varint(input, 10)
}

/// LevelDB's varint decoding: 7 bits a byte, little end first, at most
/// `max_len` bytes; bits past the width are dropped as LevelDB drops them.
fn varint(input: &[u8], max_len: usize) -> Option<(u64, &[u8])> {
    let mut value = 0u64;
    for (i, &byte) in input.iter().take(max_len).enumerate() {
        value |= u64::from(byte & 0x7f).wrapping_shl(7 * i as u32);
        if byte & 0x80 == 0 {
            return Some((value, &input[i + 1..]));
        }
    }
    None
}
