//! Blocks as both formats store them (LevelDB's table/block.cc and
//! table/format.cc, which RocksDB keeps): contents and a 5-byte trailer,
//! Snappy's bounds, and the cursor over a block's key/value entries.
//!
//! Bounds, whatever the bytes: a block is uncompressed only up to
//! [`MAX_SNAPPY_EXPANSION`] times its stored size and twice the file's size
//! plus 8 MiB; the keys of a block, once their shared prefixes are undone, add
//! up to at most [`KEY_EXPANSION`] times the block's stored size (with its
//! trailer). Beyond either, reading stops with an error: no number read from
//! the file sizes an allocation or a loop past these.

use std::borrow::Cow;
use std::cmp::Ordering;

use byteorder::{ByteOrder, LittleEndian};

use super::checkpoints::{Checkpoints, Walk};
use super::Error;
use super::{varint32, BlockHandle, BlockKind, Compression, Source, BLOCK_TRAILER_LEN};
use super::{Corruption, Limit};

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

/// The most a block may uncompress to in a file of `file_len` bytes: twice
/// the file's size plus 8 MiB.
pub(crate) fn uncompressed_limit(file_len: u64) -> usize {
    usize::try_from(file_len)
        .unwrap_or(usize::MAX)
        .saturating_mul(2)
        .saturating_add(8 << 20)
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
    file_len: u64,
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
/// handle is found to lie inside the file: borrowed from memory or read now.
pub(crate) fn stored_block<'a>(
    source: Source<'a>,
    kind: BlockKind,
    handle: BlockHandle,
) -> Result<(Cow<'a, [u8]>, [u8; 5]), Error> {
    let len = stored_len(source, kind, handle)?;
    let split =
        |stored: &[u8]| -> [u8; 5] { stored[handle.size as usize..].try_into().expect("5 bytes") };
    Ok(match source.read(handle.offset, len)? {
        Cow::Borrowed(stored) => (
            Cow::Borrowed(&stored[..handle.size as usize]),
            split(stored),
        ),
        Cow::Owned(mut stored) => {
            let trailer = split(&stored);
            stored.truncate(handle.size as usize);
            (Cow::Owned(stored), trailer)
        }
    })
}

/// As [`stored_block`], for a block the table keeps while open: read once
/// per file.
pub(crate) fn kept_block<'a>(
    source: Source<'a>,
    kind: BlockKind,
    handle: BlockHandle,
) -> Result<(&'a [u8], [u8; 5]), Error> {
    let len = stored_len(source, kind, handle)?;
    let (contents, trailer) = source
        .kept(handle.offset, len)?
        .split_at(handle.size as usize);
    Ok((contents, trailer.try_into().expect("5 bytes")))
}

/// The length of the block and its trailer, once they are found inside the
/// file.
fn stored_len(source: Source<'_>, kind: BlockKind, handle: BlockHandle) -> Result<usize, Error> {
    handle
        .offset
        .checked_add(handle.size)
        .and_then(|e| e.checked_add(BLOCK_TRAILER_LEN))
        .filter(|&e| e <= source.len())
        .map(|_| (handle.size + BLOCK_TRAILER_LEN) as usize)
        .ok_or(Error::HandlePastEnd {
            block: kind,
            handle,
            file_len: source.len(),
        })
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
    /// Where a seek may resume a long restart interval's scan.
    checkpoints: Option<&'b BlockCheckpoints>,
}

/// A LevelDB block's checkpoints (`format/checkpoints.rs`), made by
/// [`BlockIter::checkpoints`].
pub(crate) type BlockCheckpoints = Checkpoints<IterState>;

/// A [`BlockIter`]'s state on an entry, but its key and budget.
#[derive(Clone, Debug)]
pub(crate) struct IterState {
    current: usize,
    next: usize,
    restart_index: usize,
    value: (usize, usize),
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
            checkpoints: None,
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
            // Every entry the checkpoint passes over is below the target:
            // the scan would have gone on past it.
            if let Some(checkpoints) = self.checkpoints {
                let before = self.budget;
                checkpoints.resume(self, left, before, &|key| compare(key, target));
            }
        }
        while self.parse_next_key() {
            if compare(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    /// The checkpoints of this cursor's block, from a cursor that has not
    /// moved, for seeks under `compare` (see
    /// [`Checkpoints::new`]): each interval walked from its restart point
    /// to the next one's. LevelDB's scan runs on past the next restart
    /// point, but a seek's scan reaches it only where that point's key is
    /// not below the target (the binary search found so) or where the
    /// restart array misleads it; either way what it finds is unchanged.
    pub(crate) fn checkpoints(
        &self,
        compare: impl Fn(&[u8], &[u8]) -> Ordering,
    ) -> BlockCheckpoints {
        let mut walk = self.clone();
        walk.checkpoints = None;
        Checkpoints::new(&walk, compare)
    }

    /// This cursor, its seeks resuming long restart intervals from
    /// `checkpoints`, made by [`BlockIter::checkpoints`] from a cursor of the
    /// same block, for seeks under the same order.
    pub(crate) fn with_checkpoints(mut self, checkpoints: &'b BlockCheckpoints) -> Self {
        self.checkpoints = Some(checkpoints);
        self
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
        super::count_decoded();
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

impl Walk for BlockIter<'_> {
    type State = IterState;

    fn restart_count(&self) -> usize {
        self.num_restarts
    }

    fn restart_offset(&self, i: usize) -> usize {
        self.restart_point(i)
    }

    fn at_restart(&mut self, i: usize) {
        self.seek_to_restart_point(i);
    }

    fn step(&mut self) -> bool {
        self.parse_next_key()
    }

    fn current(&self) -> usize {
        self.current
    }

    fn is_last(&self) -> bool {
        self.next >= self.restarts
    }

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn budget(&self) -> usize {
        self.budget
    }

    fn set_budget(&mut self, budget: usize) {
        self.budget = budget;
    }

    fn block_len(&self) -> usize {
        self.data.len()
    }

    fn state(&self) -> IterState {
        IterState {
            current: self.current,
            next: self.next,
            restart_index: self.restart_index,
            value: self.value,
        }
    }

    fn restore(&mut self, state: &IterState, key: &[u8], budget: usize) {
        self.current = state.current;
        self.next = state.next;
        self.restart_index = state.restart_index;
        self.value = state.value;
        self.budget = budget;
        self.key.clear();
        self.key.extend_from_slice(key);
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
pub(crate) fn unmask(masked: u32) -> u32 {
    let rot = masked.wrapping_sub(0xa282ead8);
    rot.rotate_left(15)
}
