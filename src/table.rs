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
//! use leveldb_filter::table::Table;
//!
//! let bytes = std::fs::read("000005.ldb")?;
//! let table = Table::new(&bytes)?; // footer, index, metaindex, filter block: checked
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
//! Bounds, whatever the bytes: a block is uncompressed only up to
//! [`MAX_SNAPPY_EXPANSION`] times its stored size and twice the file's size
//! plus 8 MiB; the keys of a block, once their shared prefixes are undone, add
//! up to at most [`KEY_EXPANSION`] times the block's stored size (with its
//! trailer). Beyond either, reading stops with an error: no number read from
//! the file sizes an allocation or a loop past these.

pub use crate::error::{Corruption, Field, Limit};
use crate::format::varint32;
pub use crate::format::{BlockHandle, BlockKind, Compression, BLOCK_TRAILER_LEN, TABLE_MAGIC};
use std::borrow::Cow;
use std::cmp::Ordering;

use byteorder::{ByteOrder, LittleEndian};

use crate::Error;

/// Length of the footer.
pub const FOOTER_LEN: usize = 48;
/// The most a Snappy block can expand: a 3-byte copy makes at most 64 bytes,
/// so no valid block claims more than 22 times its size.
pub const MAX_SNAPPY_EXPANSION: usize = 22;
/// How many bytes of keys a block may stand for, per byte stored (with its
/// trailer), once shared prefixes are undone. LevelDB's restart points (every
/// 16 keys by default) keep real blocks far below; a crafted block whose every
/// entry shares a long prefix would otherwise make work without bound.
pub const KEY_EXPANSION: usize = 64;

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

impl Block<'_> {
    /// A cursor over the block's entries (data, index and metaindex blocks),
    /// whose keys may expand to [`KEY_EXPANSION`] times the stored block.
    pub fn entries(&self) -> BlockIter<'_> {
        BlockIter::with_budget(&self.contents, self.handle.size)
    }
}

/// An entry of the index block: a key and the block it points to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockEntry {
    /// The entry's key: a separator >= every key of the block and < every key
    /// of the next one.
    pub key: Vec<u8>,
    /// The block.
    pub handle: BlockHandle,
}

/// A table file, read from a byte slice. Opening reads and checks the footer,
/// the index block, the metaindex and the filter block it names, as LevelDB's
/// `Table::Open` does; data blocks are read one at a time, on demand.
///
/// Nothing here panics, whatever the bytes, and no block is held expanded: the
/// index stays as stored (uncompressed) and is searched as LevelDB searches it;
/// [`data_blocks`](Self::data_blocks) yields one block at a time. Every problem
/// is an [`Error`] saying where.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use leveldb_filter::table::Table;
///
/// let bytes = std::fs::read("testdata/tables/user-4k-r16-none.ldb")?;
/// let table = Table::new(&bytes)?;
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
    file: &'a [u8],
    metaindex_handle: BlockHandle,
    index_handle: BlockHandle,
    index: Block<'a>,
    filter: Option<TableFilter<'a>>,
    verify_checksums: bool,
}

/// How [`Table::open`] treats the blocks a lookup does not need.
#[derive(Clone, Copy)]
enum Open {
    /// Every block must be sound; checksums checked or not.
    Strict { checksums: bool },
    /// As LevelDB's `Table::Open`: see [`Table::new_for_lookups`].
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
    pub fn new(file: &'a [u8]) -> Result<Self, Error> {
        Self::open(file, Open::Strict { checksums: true })
    }

    /// As [`Table::new`], but skipping every checksum, as LevelDB does unless
    /// `verify_checksums` or `paranoid_checks` is set.
    pub fn new_unchecked(file: &'a [u8]) -> Result<Self, Error> {
        Self::open(file, Open::Strict { checksums: false })
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
    /// [`Table::new`] is for checking a table: there every block must be
    /// sound, its checksum too.
    pub fn new_for_lookups(file: &'a [u8]) -> Result<Self, Error> {
        Self::open(file, Open::Lookups)
    }

    fn open(file: &'a [u8], how: Open) -> Result<Self, Error> {
        let verify_checksums = matches!(how, Open::Strict { checksums: true });
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
            index: Block {
                handle: index_handle,
                compression: Compression::None,
                contents: Cow::Borrowed(&[]),
            },
            filter: None,
            verify_checksums,
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

    /// The index block, as stored (uncompressed): one entry per data block, in
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
        let (contents, trailer) = stored_block(self.file, kind, handle)?;
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
        let (compression, contents) = match trailer[0] {
            0 => (Compression::None, Cow::Borrowed(contents)),
            1 => (
                Compression::Snappy,
                Cow::Owned(snappy(self.file.len(), kind, handle, contents)?),
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

/// The most a block may uncompress to in a file of `file_len` bytes: twice
/// the file's size plus 8 MiB.
pub(crate) fn uncompressed_limit(file_len: usize) -> usize {
    file_len.saturating_mul(2).saturating_add(8 << 20)
}

/// The error for an uncompressed size past `limit` (at most
/// [`uncompressed_limit`]).
pub(crate) fn too_large(kind: BlockKind, handle: BlockHandle, found: u64, limit: usize) -> Error {
    Error::LimitExceeded {
        block: kind,
        offset: handle.offset,
        what: Limit::UncompressedSize,
        found,
        limit: limit as u64,
    }
}

/// A Snappy block's contents, uncompressed, within the bounds its own size
/// and the file's allow.
pub(crate) fn snappy(
    file_len: usize,
    kind: BlockKind,
    handle: BlockHandle,
    contents: &[u8],
) -> Result<Vec<u8>, Error> {
    let corrupt = |what| Error::CorruptBlock {
        block: kind,
        offset: handle.offset,
        what,
    };
    let len =
        snap::raw::decompress_len(contents).map_err(|_| corrupt(Corruption::BadSnappyLength))?;
    if len > contents.len().saturating_mul(MAX_SNAPPY_EXPANSION) {
        return Err(corrupt(Corruption::SnappyLengthTooLarge));
    }
    if len > uncompressed_limit(file_len) {
        return Err(too_large(
            kind,
            handle,
            len as u64,
            uncompressed_limit(file_len),
        ));
    }
    snap::raw::Decoder::new()
        .decompress_vec(contents)
        .map_err(|_| corrupt(Corruption::BadSnappyData))
}

/// A block's contents and its 5-byte trailer (type byte, checksum), once the
/// handle is found to lie inside `file`.
pub(crate) fn stored_block(
    file: &[u8],
    kind: BlockKind,
    handle: BlockHandle,
) -> Result<(&[u8], &[u8]), Error> {
    let end = handle
        .offset
        .checked_add(handle.size)
        .and_then(|e| e.checked_add(BLOCK_TRAILER_LEN))
        .filter(|&e| e <= file.len() as u64)
        .ok_or(Error::HandlePastEnd {
            block: kind,
            handle,
            file_len: file.len() as u64,
        })?;
    let stored = &file[handle.offset as usize..end as usize];
    Ok(stored.split_at(handle.size as usize))
}

/// An entry of a block: its key (in the cursor's buffer) and its value.
pub type Entry<'k, 'b> = (&'k [u8], &'b [u8]);

/// A cursor over a block's entries, as LevelDB's `Block::Iter`
/// (table/block.cc): entries `shared | unshared | value length` (varint32s),
/// the key's unshared bytes and the value, then the restart array (fixed32
/// offsets of entries that share nothing) and its length.
///
/// It reads any bytes as LevelDB does: a block shorter than 4 bytes, or whose
/// restart array would not fit, is an error; a restart count of 0 is an empty
/// block, whatever precedes it; [`seek`](Self::seek) binary-searches the
/// restart points and then scans, so a damaged restart array misleads it as
/// it misleads LevelDB. A malformed entry ends the walk with an error
/// ([`error`](Self::error)). Keys are rebuilt in one buffer; their lengths
/// add up to at most [`KEY_EXPANSION`] times the block's stored size, past
/// which the walk stops with an error.
#[derive(Clone, Debug)]
pub struct BlockIter<'b> {
    data: &'b [u8],
    /// Offset of the restart array: where entries end.
    restarts: usize,
    num_restarts: usize,
    /// Offset of the current entry; `restarts` when not on an entry.
    current: usize,
    /// Offset just past the current entry.
    next: usize,
    restart_index: usize,
    key: Vec<u8>,
    value: (usize, usize),
    budget: usize,
    error: Option<Corruption>,
    started: bool,
}

impl<'b> BlockIter<'b> {
    /// A cursor over `block`, a block's uncompressed contents.
    pub fn new(block: &'b [u8]) -> Self {
        Self::with_budget(block, block.len() as u64)
    }

    /// A cursor whose keys may expand to [`KEY_EXPANSION`] times `stored_len`
    /// and a block trailer.
    pub(crate) fn with_budget(block: &'b [u8], stored_len: u64) -> Self {
        let budget = stored_len
            .saturating_add(BLOCK_TRAILER_LEN)
            .saturating_mul(KEY_EXPANSION as u64);
        let mut iter = BlockIter {
            data: &[],
            restarts: 0,
            num_restarts: 0,
            current: 0,
            next: 0,
            restart_index: 0,
            key: Vec::new(),
            value: (0, 0),
            budget: usize::try_from(budget).unwrap_or(usize::MAX),
            error: None,
            started: false,
        };
        let len = block.len();
        if len < 4 {
            iter.error = Some(Corruption::ShorterThanRestartCount);
            return iter;
        }
        let num_restarts = LittleEndian::read_u32(&block[len - 4..]) as usize;
        if num_restarts > (len - 4) / 4 {
            iter.error = Some(Corruption::RestartArrayTooLarge);
            return iter;
        }
        if num_restarts > 0 {
            iter.data = block;
            iter.num_restarts = num_restarts;
            iter.restarts = len - 4 - 4 * num_restarts;
            iter.current = iter.restarts;
            iter.restart_index = num_restarts;
        }
        iter
    }

    /// Whether the cursor is on an entry.
    pub fn valid(&self) -> bool {
        self.current < self.restarts
    }

    /// The current entry's key (empty when not [`valid`](Self::valid)).
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current entry's value (empty when not [`valid`](Self::valid)).
    pub fn value(&self) -> &'b [u8] {
        &self.data[self.value.0..self.value.1]
    }

    /// What is wrong with the block, once the cursor has met it.
    pub fn error(&self) -> Option<Corruption> {
        self.error
    }

    /// Moves to the first entry.
    pub fn seek_to_first(&mut self) {
        self.started = true;
        if self.num_restarts > 0 {
            self.seek_to_restart_point(0);
            self.parse_next_key();
        }
    }

    /// Moves to the next entry, if on one.
    pub fn advance(&mut self) {
        if self.valid() {
            self.parse_next_key();
        }
    }

    /// The first entry on the first call, then each next one; `None` past the
    /// last; the error that ends the walk, if any.
    pub fn next_entry(&mut self) -> Result<Option<Entry<'_, 'b>>, Corruption> {
        if self.started {
            self.advance();
        } else {
            self.seek_to_first();
        }
        match (self.valid(), self.error) {
            (true, _) => Ok(Some((&self.key, self.value()))),
            (false, Some(what)) => Err(what),
            (false, None) => Ok(None),
        }
    }

    /// Moves to the first entry whose key is `>= target` under `compare`, as
    /// LevelDB's `Block::Iter::Seek`: the last restart point whose key is
    /// `< target` by binary search, then entry by entry.
    pub fn seek(&mut self, target: &[u8], compare: impl Fn(&[u8], &[u8]) -> Ordering) {
        self.started = true;
        if self.num_restarts == 0 {
            return;
        }
        let (mut left, mut right) = (0, self.num_restarts - 1);
        let mut current = Ordering::Equal;
        if self.valid() {
            current = compare(&self.key, target);
            match current {
                Ordering::Less => left = self.restart_index,
                Ordering::Greater => right = self.restart_index,
                Ordering::Equal => return,
            }
        }
        while left < right {
            let mid = (left + right).div_ceil(2);
            let at = self.restart_point(mid);
            match decode_entry(self.data, at, self.restarts) {
                Ok((0, unshared, _, key_at)) => {
                    if compare(&self.data[key_at..key_at + unshared], target) == Ordering::Less {
                        left = mid;
                    } else {
                        right = mid - 1;
                    }
                }
                Ok(_) => return self.corrupt(Corruption::RestartEntryShares),
                Err(what) => return self.corrupt(what),
            }
        }
        if !(left == self.restart_index && current == Ordering::Less) {
            self.seek_to_restart_point(left);
        }
        while self.parse_next_key() {
            if compare(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    fn restart_point(&self, index: usize) -> usize {
        LittleEndian::read_u32(&self.data[self.restarts + 4 * index..]) as usize
    }

    fn seek_to_restart_point(&mut self, index: usize) {
        self.key.clear();
        self.restart_index = index;
        self.next = self.restart_point(index);
    }

    fn corrupt(&mut self, what: Corruption) {
        self.current = self.restarts;
        self.restart_index = self.num_restarts;
        self.error = Some(what);
        self.key.clear();
        self.value = (0, 0);
    }

    /// LevelDB's `ParseNextKey`: false at the end or on corruption.
    fn parse_next_key(&mut self) -> bool {
        self.current = self.next;
        if self.current >= self.restarts {
            self.current = self.restarts;
            self.restart_index = self.num_restarts;
            return false;
        }
        let (shared, unshared, value_len, at) =
            match decode_entry(self.data, self.current, self.restarts) {
                Ok(entry) => entry,
                Err(what) => {
                    self.corrupt(what);
                    return false;
                }
            };
        if shared > self.key.len() {
            self.corrupt(Corruption::SharesTooMuch);
            return false;
        }
        match self.budget.checked_sub(shared + unshared) {
            Some(left) => self.budget = left,
            None => {
                self.corrupt(Corruption::KeysTooLong);
                return false;
            }
        }
        self.key.truncate(shared);
        let len = shared + unshared;
        if len > self.key.capacity() {
            // Grow as a Vec does, but not past the block's entries: a key is
            // made of their bytes, so it is never longer.
            let grown = (2 * self.key.capacity()).min(self.restarts).max(len);
            self.key.reserve_exact(grown - shared);
        }
        self.key.extend_from_slice(&self.data[at..at + unshared]);
        self.value = (at + unshared, at + unshared + value_len);
        self.next = self.value.1;
        while self.restart_index + 1 < self.num_restarts
            && self.restart_point(self.restart_index + 1) < self.current
        {
            self.restart_index += 1;
        }
        true
    }
}

/// LevelDB's `DecodeEntry` at `at`, entries ending at `limit`: shared,
/// unshared and value lengths, and where the unshared key bytes start.
fn decode_entry(
    data: &[u8],
    at: usize,
    limit: usize,
) -> Result<(usize, usize, usize, usize), Corruption> {
    if at > limit || limit - at < 3 {
        return Err(Corruption::EntryHeaderPastEntries);
    }
    let bad = Corruption::BadVarint;
    let (shared, rest) = varint32(&data[at..limit]).ok_or(bad)?;
    let (unshared, rest) = varint32(rest).ok_or(bad)?;
    let (value_len, rest) = varint32(rest).ok_or(bad)?;
    if u64::from(unshared) + u64::from(value_len) > rest.len() as u64 {
        return Err(Corruption::EntryPastEntries);
    }
    let key_at = limit - rest.len();
    Ok((
        shared as usize,
        unshared as usize,
        value_len as usize,
        key_at,
    ))
}

/// LevelDB's `crc32c::Unmask`.
fn unmask(masked: u32) -> u32 {
    let rot = masked.wrapping_sub(0xa282ead8);
    rot.rotate_left(15)
}
