//! LevelDB's table file (table/format.cc, table/block.cc): the footer, block
//! handles, the 5-byte block trailer with its masked CRC-32C, Snappy blocks, and
//! the key/value entries of data, index and metaindex blocks.
//!
//! ```text
//! data block 0 .. data block N-1 | filter block | metaindex block | index block | footer
//! each block: contents | compression type (1 byte) | masked crc32c of contents + type (4 bytes)
//! footer (48 bytes): metaindex handle | index handle | zero padding to 40 | magic (fixed64)
//! ```
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use leveldb_filter::leveldb::Table;
//!
//! let bytes = std::fs::read("000005.ldb")?;
//! let table = Table::open(&bytes)?; // footer, index, metaindex, filter block: checked
//! if let Some(filter) = table.filter_block() {
//!     println!("filter.{}: {} bytes", filter.name, filter.block.contents.len());
//! }
//! for block in table.data_blocks() {
//!     let block = block?; // checksum checked, uncompressed
//!     let mut entries = block.entries();
//!     while let Some((key, value)) = entries.next_entry()? {
//!         println!("{key:02x?} = {} bytes", value.len());
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! Bounds, whatever the bytes: those of [`format`](mod@crate::format).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::OnceLock;

use byteorder::{ByteOrder, LittleEndian};

use crate::format::{
    kept_block, snappy, stored_block, unmask, Block, BlockCheckpoints, BlockHandle, BlockIter,
    BlockKind, Compression, Corruption, Footer, Source, BLOCK_TRAILER_LEN,
};
use crate::Error;

/// Length of the footer.
pub const FOOTER_LEN: usize = crate::format::LEVELDB_FOOTER_LEN;
/// An entry of the index block: a key and the block it points to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockEntry {
    /// The entry's key: a separator >= every key of the block and < every key
    /// of the next one.
    pub key: Vec<u8>,
    /// The block.
    pub handle: BlockHandle,
}

/// A table file, read from a byte slice or a [`TableFile`](crate::format::TableFile).
/// Opening reads and checks the footer, the index block, the metaindex and
/// the filter block it names, as LevelDB's `Table::Open` does; data blocks
/// are read one at a time, on demand.
///
/// Nothing here panics, whatever the bytes. The index is held uncompressed
/// and searched as LevelDB searches it; [`data_blocks`](Self::data_blocks)
/// yields one block at a time. Every problem is an [`Error`] saying where.
/// A table is `Send + Sync`: it holds no cache but its index's checkpoints
/// (made once, by the first lookup), and any thread may read it.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use leveldb_filter::leveldb::Table;
///
/// let bytes = std::fs::read("testdata/tables/user-4k-r16-none.ldb")?;
/// let table = Table::open(&bytes)?;
/// let filter = table.filter_block().expect("this table has a filter");
/// assert_eq!(filter.name, "leveldb.BuiltinBloomFilter2");
/// // Every data block, checked and uncompressed, one at a time, with its keys.
/// let mut keys = 0;
/// for block in table.data_blocks() {
///     let block = block?;
///     let mut entries = block.entries();
///     while let Some((_key, _value)) = entries.next_entry()? {
///         keys += 1;
///     }
/// }
/// assert_eq!(keys, table.key_stats()?.keys); // the same pass, done by the crate
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Table<'a> {
    file: Source<'a>,
    metaindex_handle: BlockHandle,
    index_handle: BlockHandle,
    index: Block<'a>,
    filter: Option<TableFilter<'a>>,
    verify_checksums: bool,
    /// The index block's checkpoints, made by the first lookup: for
    /// lookups of user keys (bytewise) and of internal keys.
    index_checkpoints: [OnceLock<BlockCheckpoints>; 2],
}

/// How [`Table::open`] treats the blocks a lookup does not need.
#[derive(Clone, Copy)]
enum Open {
    /// Every block must be sound; checksums checked or not.
    Strict { checksums: bool },
    /// As LevelDB's `Table::Open`: see [`Table::open_for_lookups`].
    Lookups,
}

/// The filter block of a table, as the metaindex names it.
#[derive(Clone, Debug)]
pub struct TableFilter<'a> {
    /// The policy name, from the metaindex key `filter.<name>` (invalid UTF-8
    /// replaced). It comes from the file: escape it before printing it.
    pub name: String,
    /// The block.
    pub block: Block<'a>,
}

impl<'a> Table<'a> {
    /// Reads the footer, the index, the metaindex and the filter block,
    /// checking their checksums.
    pub fn open(file: impl Into<Source<'a>>) -> Result<Self, Error> {
        Self::open_as(file.into(), Open::Strict { checksums: true })
    }

    /// As [`Table::open`], but skipping every checksum, as LevelDB does unless
    /// `verify_checksums` or `paranoid_checks` is set.
    pub fn open_unchecked(file: impl Into<Source<'a>>) -> Result<Self, Error> {
        Self::open_as(file.into(), Open::Strict { checksums: false })
    }

    /// Opens the table as LevelDB's `Table::Open` does for lookups
    /// (`Table::InternalGet`, default options, which check no checksum
    /// unless `verify_checksums` or `paranoid_checks` is set): the footer and
    /// the index must be sound; the metaindex and the filter block are not
    /// needed, and where they cannot be read (a block not in the file, not
    /// uncompressed, not parsed) the table has no filter; the filter is the
    /// one LevelDB's seek of the metaindex finds: the entry whose key is
    /// exactly `filter.<name>`, `<name>` taken from the first `filter.` entry
    /// (a damaged restart array can hide an entry from the seek that a walk
    /// meets). No checksum is checked, here or when blocks are read.
    ///
    /// [`Table::open`] is for checking a table: there every block must be
    /// sound, its checksum too.
    pub fn open_for_lookups(file: impl Into<Source<'a>>) -> Result<Self, Error> {
        Self::open_as(file.into(), Open::Lookups)
    }

    fn open_as(file: Source<'a>, how: Open) -> Result<Self, Error> {
        let verify_checksums = matches!(how, Open::Strict { checksums: true });
        let Some(footer_at) = file.len().checked_sub(FOOTER_LEN as u64) else {
            return Err(Error::TruncatedFooter {
                len: file.len(),
                footer_len: FOOTER_LEN as u64,
            });
        };
        let footer = file.read(footer_at, FOOTER_LEN)?;
        let (metaindex_handle, index_handle) = Footer::leveldb_handles(&footer)?;
        let mut table = Table {
            file,
            metaindex_handle,
            index_handle,
            index: Block {
                handle: index_handle,
                compression: Compression::None,
                contents: Cow::Borrowed(&[]),
            },
            filter: None,
            verify_checksums,
            index_checkpoints: Default::default(),
        };
        table.index = table.read_block(BlockKind::Index, index_handle)?;
        table.filter = match how {
            Open::Strict { .. } => table.find_filter()?,
            Open::Lookups => table.find_filter_as_leveldb(),
        };
        Ok(table)
    }

    /// The filter LevelDB's `ReadMeta` and `ReadFilter` find, for a policy
    /// named as the first `filter.` entry: none where a block cannot be read
    /// or the seek misses the entry.
    fn find_filter_as_leveldb(&self) -> Option<TableFilter<'a>> {
        let metaindex = self
            .read_block(BlockKind::Metaindex, self.metaindex_handle)
            .ok()?;
        let mut walk = metaindex.entries();
        let key = loop {
            match walk.next_entry() {
                Ok(Some((key, _))) if key.starts_with(b"filter.") => break key.to_vec(),
                Ok(Some(_)) => continue,
                Ok(None) | Err(_) => return None,
            }
        };
        let mut seek = metaindex.entries();
        seek.seek(&key, <[u8]>::cmp);
        if !seek.valid() || seek.key() != key {
            return None;
        }
        let (handle, _) = BlockHandle::decode(seek.value())?;
        let block = self.read_block(BlockKind::Filter, handle).ok()?;
        Some(TableFilter {
            name: String::from_utf8_lossy(&key[b"filter.".len()..]).into_owned(),
            block,
        })
    }

    /// The first metaindex entry named `filter.<name>`, read.
    fn find_filter(&self) -> Result<Option<TableFilter<'a>>, Error> {
        let handle = self.metaindex_handle;
        let metaindex = self.read_block(BlockKind::Metaindex, handle)?;
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::Metaindex,
            offset: handle.offset,
            what,
        };
        let mut entries = metaindex.entries();
        while let Some((key, value)) = entries.next_entry().map_err(corrupt)? {
            if let Some(name) = key.strip_prefix(b"filter.") {
                let (filter, _) =
                    BlockHandle::decode(value).ok_or(corrupt(Corruption::NotAHandle))?;
                return Ok(Some(TableFilter {
                    name: String::from_utf8_lossy(name).into_owned(),
                    block: self.read_block(BlockKind::Filter, filter)?,
                }));
            }
        }
        Ok(None)
    }

    /// Where the table's bytes come from (and the file's length).
    pub fn source(&self) -> Source<'a> {
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

    /// The bytes the table holds beyond its file's kept blocks: its index
    /// and filter blocks where they are stored compressed (else they borrow
    /// the file's bytes).
    pub fn held_bytes(&self) -> u64 {
        let owned = |block: &Block<'_>| match &block.contents {
            Cow::Owned(contents) => contents.len() as u64,
            Cow::Borrowed(_) => 0,
        };
        let checkpoints = self.index_checkpoints.iter();
        let checkpoints = checkpoints.filter_map(OnceLock::get);
        owned(&self.index)
            + self.filter.as_ref().map_or(0, |f| owned(&f.block))
            + checkpoints.map(|c| c.bytes() as u64).sum::<u64>()
    }

    /// A cursor over the index block whose seeks under `compare` (bytewise
    /// where `!internal`, else LevelDB's internal key order) resume long
    /// restart intervals from checkpoints, made by the first such seek:
    /// what it finds is what [`Block::entries`]' seek finds.
    pub(crate) fn index_seeker(
        &self,
        internal: bool,
        compare: impl Fn(&[u8], &[u8]) -> Ordering,
    ) -> BlockIter<'_> {
        let entries = self.index.entries();
        let checkpoints = self.index_checkpoints[usize::from(internal)]
            .get_or_init(|| entries.checkpoints(compare));
        entries.with_checkpoints(checkpoints)
    }

    /// The index block, uncompressed: one entry per data block, in
    /// key order. [`Block::entries`] seeks it as LevelDB does.
    pub fn index_block(&self) -> &Block<'a> {
        &self.index
    }

    /// The index's entries, in order, each read when asked for.
    pub fn index_entries(&self) -> impl Iterator<Item = Result<BlockEntry, Error>> + '_ {
        let mut entries = self.index.entries();
        let mut done = false;
        std::iter::from_fn(move || {
            if done {
                return None;
            }
            let entry = match entries.next_entry() {
                Ok(Some((key, value))) => BlockHandle::decode(value)
                    .map(|(handle, _)| BlockEntry {
                        key: key.to_vec(),
                        handle,
                    })
                    .ok_or(Corruption::NotAHandle),
                Ok(None) => {
                    done = true;
                    return None;
                }
                Err(what) => Err(what),
            };
            done = entry.is_err();
            Some(entry.map_err(|what| self.index_error(what)))
        })
    }

    fn index_error(&self, what: Corruption) -> Error {
        Error::CorruptBlock {
            block: BlockKind::Index,
            offset: self.index_handle.offset,
            what,
        }
    }

    /// The filter block, if the metaindex names one (`filter.<policy name>`).
    /// LevelDB uses a table's filter only when that name is its own policy's.
    pub fn filter_block(&self) -> Option<&TableFilter<'a>> {
        self.filter.as_ref()
    }

    /// The data blocks the index points to, in order, each read, checked and
    /// uncompressed when the iterator reaches it. The blocks must follow each
    /// other in the file without overlapping; the first error ends the walk.
    pub fn data_blocks(&self) -> impl Iterator<Item = Result<Block<'a>, Error>> + '_ {
        let mut entries = self.index.entries();
        let mut end = 0u64;
        let mut done = false;
        std::iter::from_fn(move || {
            if done {
                return None;
            }
            let block = (|| {
                let Some((_, value)) = entries.next_entry().map_err(|w| self.index_error(w))?
                else {
                    return Ok(None);
                };
                let (handle, _) = BlockHandle::decode(value)
                    .ok_or_else(|| self.index_error(Corruption::NotAHandle))?;
                if handle.offset < end {
                    return Err(self.index_error(Corruption::HandlesOutOfOrder));
                }
                let block = self.read_block(BlockKind::Data, handle)?;
                // read_block checked that the block and its trailer are in the file.
                end = handle.offset + handle.size + BLOCK_TRAILER_LEN;
                Ok(Some(block))
            })();
            done = !matches!(block, Ok(Some(_)));
            block.transpose()
        })
    }

    /// Reads a block: checks that it lies inside the file, checks its CRC-32C
    /// (unless opened unchecked) and uncompresses it.
    pub fn read_block(&self, kind: BlockKind, handle: BlockHandle) -> Result<Block<'a>, Error> {
        let (contents, trailer) = match kind {
            BlockKind::Data => stored_block(self.file, kind, handle)?,
            // The blocks a table holds while open: read once per file,
            // however often it is opened.
            _ => kept_block(self.file, kind, handle).map(|(c, t)| (Cow::Borrowed(c), t))?,
        };
        if self.verify_checksums {
            let expected = unmask(LittleEndian::read_u32(&trailer[1..]));
            let found = crc32c::crc32c_append(crc32c::crc32c(&contents), &trailer[..1]);
            if expected != found {
                return Err(Error::ChecksumMismatch {
                    block: kind,
                    offset: handle.offset,
                    expected,
                    found,
                });
            }
        }
        let (compression, contents) = match trailer[0] {
            0 => (Compression::None, contents),
            1 => (
                Compression::Snappy,
                Cow::Owned(snappy(self.file.len(), kind, handle, &contents)?),
            ),
            2 => {
                return Err(Error::UnsupportedCompression {
                    block: kind,
                    offset: handle.offset,
                    compression: Compression::Zstd,
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
}
