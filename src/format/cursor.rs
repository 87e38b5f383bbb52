//! A cursor over a RocksDB block's entries (index, metaindex and properties
//! blocks), with RocksDB's own seek: `BlockIter::BinarySeek` over the
//! restart points, then `FindKeyAfterBinarySeek`'s scan, which stops at the
//! next restart point (table/block_based/block.cc). On a sorted block it
//! finds what any seek finds; on an unsorted one, what RocksDB finds.
//!
//! ```text
//! entry: varint32 shared | varint32 unshared | [varint32 value length] | key bytes | value
//! block: entries | restarts: u32 x n | [hash index: buckets | u16 count] | u32 footer
//! footer: bit 31 hash index | bit 30 reserved | bit 29 uniform | bit 28 separated | restart count
//! ```
//!
//! A data block with separated keys and values (bit 28, RocksDB 11.0+)
//! puts every value after the entries and the values' offset before the
//! footer; each entry holds a key alone, and the first of each restart
//! interval also the offset of its value, as a varint32 after its lengths
//! (table/block_based/data_block_footer.h).
//!
//! Keys are rebuilt in one buffer, never stored; a walk or a seek stops
//! with an error once its keys add up to [`KEY_EXPANSION`] times the block.

mod checkpoints;

use std::cmp::Ordering;

pub(crate) use checkpoints::Checkpoints;

use super::{varint32, varint64, BlockHandle, BlockKind, Corruption, Error};
use super::{BLOCK_TRAILER_LEN, KEY_EXPANSION};

/// How a block's entries hold their values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// A value length, then the value (metaindex and properties blocks).
    Plain,
    /// An index block: each value a block handle, and with `first_key`
    /// (index type 3) the block's first key, length-prefixed, after it.
    /// With `delta` (`rocksdb.index.value.is.delta.encoded`) no value
    /// length, and an entry whose key shares bytes holds a signed size
    /// delta from the previous handle instead of a whole handle
    /// (`IndexBlockIter::DecodeCurrentValue`); with `escape`
    /// (format_version 8) that delta is stored as zigzag + 1, and 0 is an
    /// escape a whole handle follows.
    Index {
        delta: bool,
        first_key: bool,
        escape: bool,
    },
}

/// An entry's shared, unshared and value lengths, its separated value's
/// offset where it gives one, and the bytes after them.
type Header<'b> = (usize, usize, Option<usize>, Option<usize>, &'b [u8]);

/// A position in a block's entries.
#[derive(Clone, Debug)]
pub(crate) struct Cursor<'b> {
    block: &'b [u8],
    /// Where the entries end, and where the restart array starts: the same
    /// but for separated values, which lie between.
    entries_end: usize,
    array: usize,
    restarts: usize,
    /// Separated values: their offset, and the data block restart interval
    /// that says which entries give their value's offset (0: unknown).
    values: Option<usize>,
    interval: usize,
    /// The index of the entry after the current one, counted as RocksDB
    /// counts it (a restart point's is its number times the interval).
    entry: usize,
    layout: Layout,
    /// Offset of the current entry, and of the one after it.
    current: usize,
    next: usize,
    key: Vec<u8>,
    value: (usize, usize),
    handle: Option<BlockHandle>,
    budget: usize,
    /// The keys' common prefix stored once at the block's start
    /// (format_version 8): its length; 0 for none.
    prefix: usize,
    /// A restart key, its prefix put back, for the binary search.
    restart_key: Vec<u8>,
    /// What of a restart point is its offset: all 32 bits, or 31 where
    /// Pebble flags a restart with bit 31 (Pebblev3 and later).
    restart_mask: u32,
    /// Where a seek may resume a long restart interval's scan.
    checkpoints: Option<&'b Checkpoints>,
}

impl<'b> Cursor<'b> {
    /// A cursor before the first entry of `block`, a block's uncompressed
    /// contents; its restart array and the data-block hash index RocksDB
    /// may put after it (on blocks of at most 64 KiB) found as `Block` finds
    /// them.
    pub(crate) fn new(block: &'b [u8], layout: Layout) -> Result<Self, Corruption> {
        let len = block.len();
        let footer_at = len
            .checked_sub(4)
            .ok_or(Corruption::ShorterThanRestartCount)?;
        let footer = u32::from_le_bytes(block[footer_at..].try_into().expect("4 bytes"));
        // `DataBlockFooter::DecodeFrom`.
        if footer & 1 << 30 != 0 {
            return Err(Corruption::ExtendedBlockMetadata);
        }
        let restarts = (footer & 0x0fff_ffff) as usize;
        let mut array_end = footer_at;
        let values = if footer & 1 << 28 != 0 {
            array_end = array_end
                .checked_sub(4)
                .ok_or(Corruption::ShorterThanFooter)?;
            let at = &block[array_end..array_end + 4];
            Some(u32::from_le_bytes(at.try_into().expect("4 bytes")) as usize)
        } else {
            None
        };
        if footer & 1 << 31 != 0 {
            let count_at = array_end
                .checked_sub(2)
                .ok_or(Corruption::ShorterThanFooter)?;
            let buckets = u16::from_le_bytes([block[count_at], block[count_at + 1]]);
            array_end = count_at
                .checked_sub(usize::from(buckets))
                .ok_or(Corruption::ShorterThanFooter)?;
        }
        let array = restarts
            .checked_mul(4)
            .and_then(|array| array_end.checked_sub(array))
            .ok_or(Corruption::RestartArrayTooLarge)?;
        let entries_end = match values {
            Some(values) if values > array => return Err(Corruption::ValuePastValues),
            Some(values) => values,
            None => array,
        };
        Ok(Cursor {
            block,
            entries_end,
            array,
            restarts,
            values,
            interval: 0,
            entry: 0,
            layout,
            current: entries_end,
            next: entries_end,
            key: Vec::new(),
            value: (0, 0),
            handle: None,
            budget: (len as u64 + BLOCK_TRAILER_LEN)
                .saturating_mul(KEY_EXPANSION as u64)
                .try_into()
                .unwrap_or(usize::MAX),
            prefix: 0,
            restart_key: Vec::new(),
            restart_mask: u32::MAX,
            checkpoints: None,
        })
    }

    /// The cursor of a Pebble row block whose restart points may carry a
    /// flag in bit 31 (Pebblev3 and later: the restart key shares its
    /// prefix with the key before), which is no part of the offset.
    pub(crate) fn flagged_restarts(mut self, flagged: bool) -> Self {
        if flagged {
            self.restart_mask = 0x7fff_ffff;
        }
        self
    }

    /// The cursor of a block of format_version 8, which may store its
    /// keys' common prefix once, before its first entry: `restarts[0]`
    /// bytes, put back before every key that shares nothing.
    pub(crate) fn with_common_prefix(mut self, format_version_8: bool) -> Result<Self, Corruption> {
        if format_version_8 && self.restarts > 0 {
            let prefix = self.restart(0);
            if prefix > self.entries_end {
                return Err(Corruption::EntryHeaderPastEntries);
            }
            self.prefix = prefix;
        }
        Ok(self)
    }

    /// The cursor of a data block, whose values a block may hold apart
    /// from its keys: `interval` is the table's data block restart interval
    /// (`rocksdb.data.block.restart.interval`, 0 where it has none).
    pub(crate) fn data_block(mut self, interval: u64) -> Self {
        self.interval = usize::try_from(interval).unwrap_or(0);
        self
    }

    /// The cursor of a block whose seeks resume long restart intervals
    /// from `checkpoints`, made by [`Cursor::checkpoints`] from a cursor of
    /// the same block and kind.
    pub(crate) fn with_checkpoints(mut self, checkpoints: &'b Checkpoints) -> Self {
        self.checkpoints = Some(checkpoints);
        self
    }

    /// The current entry's key.
    pub(crate) fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current entry's value, as stored.
    pub(crate) fn value(&self) -> &'b [u8] {
        &self.block[self.value.0..self.value.1]
    }

    /// The current entry's block handle (index blocks).
    pub(crate) fn handle(&self) -> Option<BlockHandle> {
        self.handle
    }

    fn restart(&self, i: usize) -> usize {
        let at = self.array + 4 * i;
        (u32::from_le_bytes(self.block[at..at + 4].try_into().expect("4 bytes"))
            & self.restart_mask) as usize
    }

    fn at_restart(&mut self, i: usize) {
        self.key.clear();
        self.handle = None;
        self.next = self.restart(i);
        self.entry = i.saturating_mul(self.interval);
    }

    /// Moves to the first entry: false for a block of none.
    pub(crate) fn seek_to_first(&mut self) -> Result<bool, Corruption> {
        if self.restarts == 0 {
            return Ok(false);
        }
        self.at_restart(0);
        self.advance()
    }

    /// Moves to the last entry, as `SeekToLast`: from the last restart
    /// point to the entry that ends where the entries end.
    pub(crate) fn seek_to_last(&mut self) -> Result<bool, Corruption> {
        if self.restarts == 0 {
            return Ok(false);
        }
        self.at_restart(self.restarts - 1);
        if self.checkpoints.is_some_and(|c| c.resume_last(self)) {
            return Ok(true);
        }
        while self.advance()? {
            if self.next >= self.entries_end {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// RocksDB's `Seek`: `order` gives an entry's key against the target.
    /// False where no entry is found (past the last key).
    /// A block with no entries before its restart array (as RocksDB writes
    /// the index of a table of range deletions alone) finds nothing.
    pub(crate) fn seek(&mut self, order: impl Fn(&[u8]) -> Ordering) -> Result<bool, Corruption> {
        if self.restarts == 0 || self.entries_end == 0 {
            return Ok(false);
        }
        // Restart keys at `left` and before are below the target (-1: none
        // is), those past `right` above it.
        let (mut left, mut right) = (-1i64, self.restarts as i64 - 1);
        let mut found = false;
        while left != right {
            let mid = left + (right - left + 1) / 2;
            // Without a common prefix the key is compared where it lies.
            let ordering = if self.prefix == 0 {
                order(self.restart_bytes(mid as usize)?)
            } else {
                self.load_restart_key(mid as usize)?;
                order(&self.restart_key)
            };
            match ordering {
                Ordering::Less => left = mid,
                Ordering::Greater => right = mid - 1,
                Ordering::Equal => {
                    found = true;
                    (left, right) = (mid, mid);
                }
            }
        }
        let index = usize::try_from(left).unwrap_or(0);
        self.at_restart(index);
        let before = self.budget;
        if !self.advance()? || found || left < 0 {
            return Ok(self.current < self.entries_end);
        }
        // The next restart point's key is above the target: stop there.
        let stop = (index + 1 < self.restarts).then(|| self.restart(index + 1));
        if let Some(checkpoints) = self.checkpoints {
            checkpoints.resume(self, index, before, &order);
        }
        while self.advance()? {
            if Some(self.current) == stop || order(&self.key) != Ordering::Less {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The key at restart point `i` (which must share nothing), with the
    /// block's common prefix, into `restart_key`.
    fn load_restart_key(&mut self, i: usize) -> Result<(), Corruption> {
        let bytes = self.restart_bytes(i)?;
        self.restart_key.clear();
        self.restart_key
            .extend_from_slice(&self.block[..self.prefix]);
        self.restart_key.extend_from_slice(bytes);
        Ok(())
    }

    /// The key bytes stored at restart point `i` (whose entry must share
    /// nothing), without the block's common prefix.
    fn restart_bytes(&self, i: usize) -> Result<&'b [u8], Corruption> {
        let (shared, unshared, _, _, rest) = self.header(self.restart(i), 0)?;
        if shared != 0 {
            return Err(Corruption::RestartEntryShares);
        }
        rest.get(..unshared).ok_or(Corruption::EntryPastEntries)
    }

    /// The shared, unshared and value lengths of the entry at `at` (no
    /// value length for delta-encoded index values), and the bytes after
    /// (past a separated value's offset, where the entry has one).
    fn header(&self, at: usize, entry: usize) -> Result<Header<'b>, Corruption> {
        let entries = &self.block[..self.entries_end];
        let input = entries
            .get(at..)
            .filter(|rest| rest.len() >= 3)
            .ok_or(Corruption::EntryHeaderPastEntries)?;
        let (shared, rest) = varint32(input).ok_or(Corruption::BadVarint)?;
        let (unshared, rest) = varint32(rest).ok_or(Corruption::BadVarint)?;
        let (value_len, rest) = match self.layout {
            Layout::Index { delta: true, .. } => (None, rest),
            _ => {
                let (len, rest) = varint32(rest).ok_or(Corruption::BadVarint)?;
                (Some(len as usize), rest)
            }
        };
        // With separated values, entry number `entry` gives its value's
        // offset if it is the first of a restart interval.
        let (offset, rest) = match self.values {
            None => (None, rest),
            Some(_) if self.interval == 0 || self.layout != Layout::Plain => {
                return Err(Corruption::UnexpectedSeparatedValues)
            }
            Some(_) if !entry.is_multiple_of(self.interval) => (None, rest),
            Some(_) => {
                let (offset, rest) = varint32(rest).ok_or(Corruption::BadVarint)?;
                (Some(offset as usize), rest)
            }
        };
        Ok((shared as usize, unshared as usize, value_len, offset, rest))
    }

    /// Moves to the next entry: false past the last.
    pub(crate) fn advance(&mut self) -> Result<bool, Corruption> {
        self.current = self.next;
        if self.current >= self.entries_end {
            self.current = self.entries_end;
            return Ok(false);
        }
        let (shared, unshared, value_len, offset, rest) = self.header(self.current, self.entry)?;
        if shared > self.key.len() {
            return Err(Corruption::SharesTooMuch);
        }
        let bytes = rest.get(..unshared).ok_or(Corruption::EntryPastEntries)?;
        let prefix = if shared == 0 { self.prefix } else { 0 };
        self.budget = self
            .budget
            .checked_sub(shared + prefix + unshared)
            .ok_or(Corruption::KeysTooLong)?;
        self.key.truncate(shared);
        self.key.extend_from_slice(&self.block[..prefix]);
        self.key.extend_from_slice(bytes);
        super::count_decoded();
        let value_at = self.entries_end - rest.len() + unshared;
        if let Some(values) = self.values {
            // The value lies apart: from the offset a restart interval's
            // first entry gives, or where the previous value ends.
            let start = match offset {
                Some(_) if shared != 0 => return Err(Corruption::RestartEntryShares),
                Some(offset) => values.checked_add(offset),
                None => Some(self.value.1).filter(|&end| end >= values),
            };
            let len = value_len.ok_or(Corruption::UnexpectedSeparatedValues)?;
            let end = start
                .and_then(|start| start.checked_add(len))
                .filter(|&end| end <= self.array)
                .ok_or(Corruption::ValuePastValues)?;
            self.value = (end - len, end);
            self.next = value_at;
            self.entry += 1;
            return Ok(true);
        }
        let value = &self.block[value_at..self.entries_end];
        let value = match value_len {
            Some(len) => value.get(..len).ok_or(Corruption::EntryPastEntries)?,
            None => value,
        };
        let used = match self.layout {
            Layout::Plain => value.len(),
            Layout::Index {
                delta,
                first_key,
                escape,
            } => {
                let previous = self.handle.filter(|_| delta && shared != 0);
                let (handle, rest) = decode_index_value(value, previous, first_key, escape)
                    .ok_or(Corruption::NotAHandle)?;
                self.handle = Some(handle);
                value.len() - rest.len()
            }
        };
        self.value = (value_at, value_at + used);
        self.next = match value_len {
            Some(len) => value_at + len,
            None => value_at + used,
        };
        Ok(true)
    }
}

/// `IndexValue::DecodeFrom`: a whole handle, or with `previous` a signed
/// size delta (the block following the previous one and its trailer; with
/// `escape`, zigzag + 1, 0 escaping a whole handle), then with `first_key` a
/// length-prefixed key; and what follows.
fn decode_index_value(
    value: &[u8],
    previous: Option<BlockHandle>,
    first_key: bool,
    escape: bool,
) -> Option<(BlockHandle, &[u8])> {
    let (handle, rest) = match previous {
        None => BlockHandle::decode(value)?,
        Some(prev) => {
            let (stored, rest) = varint64(value)?;
            let zigzag = match (escape, stored) {
                (true, 0) => return with_first_key(BlockHandle::decode(rest)?, first_key),
                (true, stored) => stored - 1,
                (false, stored) => stored,
            };
            let delta = (zigzag >> 1) ^ (zigzag & 1).wrapping_neg();
            let handle = BlockHandle {
                offset: prev
                    .offset
                    .wrapping_add(prev.size)
                    .wrapping_add(BLOCK_TRAILER_LEN),
                size: prev.size.wrapping_add(delta),
            };
            (handle, rest)
        }
    };
    with_first_key((handle, rest), first_key)
}

/// A handle and what follows it, past the length-prefixed first key where
/// values hold one.
fn with_first_key(
    (handle, rest): (BlockHandle, &[u8]),
    first_key: bool,
) -> Option<(BlockHandle, &[u8])> {
    if !first_key {
        return Some((handle, rest));
    }
    let (len, rest) = varint32(rest)?;
    Some((handle, rest.get(len as usize..)?))
}

/// Reads every key of a data block (internal keys: user key and an 8-byte
/// tag), calling `each` with each user key; with `common_prefix`
/// (format_version 8) the block may store the keys' common prefix once;
/// `interval`, the table's data block restart interval, reads a block of
/// separated keys and values.
pub(crate) fn for_each_user_key(
    block: &[u8],
    handle: BlockHandle,
    common_prefix: bool,
    interval: u64,
    mut each: impl FnMut(&[u8]),
) -> Result<u64, Error> {
    for_each_internal_key(block, handle, common_prefix, interval, |user, _| {
        each(user);
        true
    })
}

/// As [`for_each_user_key`], with each key's tag (sequence number << 8 |
/// type); `each` says whether to go on. Returns the keys read.
pub(crate) fn for_each_internal_key(
    block: &[u8],
    handle: BlockHandle,
    common_prefix: bool,
    interval: u64,
    mut each: impl FnMut(&[u8], u64) -> bool,
) -> Result<u64, Error> {
    let corrupt = |what| Error::CorruptBlock {
        block: BlockKind::Data,
        offset: handle.offset,
        what,
    };
    let cursor = Cursor::new(block, Layout::Plain)
        .and_then(|c| c.with_common_prefix(common_prefix))
        .map(|c| c.data_block(interval));
    let mut cursor = cursor.map_err(corrupt)?;
    let mut keys = 0;
    let mut more = cursor.seek_to_first().map_err(corrupt)?;
    while more {
        let key = cursor.key();
        let user = key
            .len()
            .checked_sub(8)
            .ok_or(corrupt(Corruption::KeyShorterThanTag))?;
        let tag = u64::from_le_bytes(key[user..].try_into().expect("8 bytes"));
        keys += 1;
        if !each(&key[..user], tag) {
            break;
        }
        more = cursor.advance().map_err(corrupt)?;
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block of `keys` (each sharing nothing) with a restart point at
    /// each of `restarts`, plain layout, values one byte.
    fn block(keys: &[&[u8]], restarts: &[usize]) -> Vec<u8> {
        let (mut out, mut offsets) = (Vec::new(), Vec::new());
        for key in keys {
            offsets.push(out.len() as u32);
            out.extend_from_slice(&[0, key.len() as u8, 1]);
            out.extend_from_slice(key);
            out.push(b'v');
        }
        for &r in restarts {
            out.extend_from_slice(&offsets[r].to_le_bytes());
        }
        out.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
        out
    }

    fn seek(block: &[u8], target: &[u8]) -> Option<Vec<u8>> {
        let mut cursor = Cursor::new(block, Layout::Plain).unwrap();
        cursor
            .seek(|key| key.cmp(target))
            .unwrap()
            .then(|| cursor.key().to_vec())
    }

    #[test]
    fn seeks_a_sorted_block_as_any_seek() {
        let keys: [&[u8]; 5] = [b"b", b"d", b"f", b"h", b"j"];
        let b = block(&keys, &[0, 2, 4]);
        for (target, want) in [
            (&b"a"[..], Some(&b"b"[..])),
            (b"b", Some(b"b")),
            (b"c", Some(b"d")),
            (b"f", Some(b"f")),
            (b"g", Some(b"h")),
            (b"j", Some(b"j")),
            (b"k", None),
        ] {
            assert_eq!(seek(&b, target).as_deref(), want, "{target:?}");
        }
    }

    /// Out of order, RocksDB's scan stops at the next restart point even
    /// where its key is below the target, and a seek below every restart
    /// key takes the first entry unscanned.
    #[test]
    fn seeks_an_unsorted_block_as_rocksdb() {
        let keys: [&[u8]; 4] = [b"m", b"a", b"z", b"c"];
        let b = block(&keys, &[0, 2]);
        // Restart keys m and z: "n" lands after m, scans "a" (below), stops
        // at the restart point z.
        assert_eq!(seek(&b, b"n").as_deref(), Some(&b"z"[..]));
        // Below m: the first entry, whatever follows.
        assert_eq!(seek(&b, b"b").as_deref(), Some(&b"m"[..]));
        // Past z: scans "c", then the end.
        assert_eq!(seek(&b, b"zz"), None);
    }

    /// A data block of separated keys and values, restart interval 2, as
    /// RocksDB 11's `BlockBuilder` writes it: keys "ka" "kb" "kc", values
    /// "1" "22" "333"; the first entry of each interval gives its value's
    /// offset, the others follow the previous value.
    fn separated() -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&[0, 2, 1, 0, b'k', b'a']); // restart 0: value at 0
        b.extend_from_slice(&[1, 1, 2, b'b']); // shares "k"; value follows
        b.extend_from_slice(&[0, 2, 3, 3, b'k', b'c']); // restart 1: value at 3
        let values = b.len() as u32;
        b.extend_from_slice(b"122333");
        b.extend_from_slice(&[0, 0, 0, 0, 10, 0, 0, 0]); // restarts 0, 10
        b.extend_from_slice(&values.to_le_bytes());
        b.extend_from_slice(&(2u32 | 1 << 28 | 1 << 29).to_le_bytes());
        b
    }

    #[test]
    fn separated_values_are_read_by_the_restart_interval() {
        let b = separated();
        let mut cursor = Cursor::new(&b, Layout::Plain).unwrap().data_block(2);
        let mut got = Vec::new();
        let mut more = cursor.seek_to_first().unwrap();
        while more {
            got.push((cursor.key().to_vec(), cursor.value().to_vec()));
            more = cursor.advance().unwrap();
        }
        let want: [(&[u8], &[u8]); 3] = [(b"ka", b"1"), (b"kb", b"22"), (b"kc", b"333")];
        assert_eq!(got, want.map(|(k, v)| (k.to_vec(), v.to_vec())));
        assert!(cursor.seek(|key| key.cmp(b"kc")).unwrap());
        assert_eq!((cursor.key(), cursor.value()), (&b"kc"[..], &b"333"[..]));
        // Without the table's restart interval, or in an index block, the
        // entries cannot be told apart.
        let mut cursor = Cursor::new(&b, Layout::Plain).unwrap();
        assert_eq!(
            cursor.seek_to_first(),
            Err(Corruption::UnexpectedSeparatedValues)
        );
        // A value past the values section.
        let mut bad = b.clone();
        bad[13] = 4;
        let mut cursor = Cursor::new(&bad, Layout::Plain).unwrap().data_block(2);
        assert!(cursor.seek_to_first().unwrap());
        assert_eq!(cursor.advance(), Ok(true));
        assert_eq!(cursor.advance(), Err(Corruption::ValuePastValues));
        // A values section past the restart array.
        let mut bad = b.clone();
        let at = bad.len() - 8;
        bad[at] = 200;
        assert_eq!(
            Cursor::new(&bad, Layout::Plain).err(),
            Some(Corruption::ValuePastValues)
        );
        // Bit 30: metadata of a format newer than any RocksDB writes.
        let mut bad = b;
        let at = bad.len() - 1;
        bad[at] |= 0x40;
        assert_eq!(
            Cursor::new(&bad, Layout::Plain).err(),
            Some(Corruption::ExtendedBlockMetadata)
        );
    }

    #[test]
    fn seek_to_last_finds_the_entry_that_ends_the_entries() {
        let keys: [&[u8]; 3] = [b"a", b"b", b"c"];
        let b = block(&keys, &[0, 1]);
        let mut cursor = Cursor::new(&b, Layout::Plain).unwrap();
        assert!(cursor.seek_to_last().unwrap());
        assert_eq!(cursor.key(), b"c");
    }

    /// Delta-encoded index values: an entry that shares key bytes holds a
    /// size delta; one that shares none (restart point or not) a handle.
    #[test]
    fn index_values_are_handles_where_keys_share_nothing() {
        let mut b = Vec::new();
        b.extend_from_slice(&[0, 2, b'k', b'a', 0, 10]); // handle 0, 10
        b.extend_from_slice(&[1, 1, b'b', 3]); // shares "k": delta -2 (zigzag 3)
        b.extend_from_slice(&[0, 1, b'x', 100, 7]); // no shared bytes: handle 100, 7
        b.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
        let mut cursor = Cursor::new(
            &b,
            Layout::Index {
                delta: true,
                first_key: false,
                escape: false,
            },
        )
        .unwrap();
        let mut got = Vec::new();
        while cursor.advance_or_first() {
            got.push((cursor.key().to_vec(), cursor.handle().unwrap()));
        }
        let h = |offset, size| BlockHandle { offset, size };
        assert_eq!(
            got,
            [
                (b"ka".to_vec(), h(0, 10)),
                (b"kb".to_vec(), h(15, 8)),
                (b"x".to_vec(), h(100, 7))
            ]
        );
    }

    /// format_version 8: a block's common prefix stored once before its
    /// first entry (`restarts[0]` bytes), put back before each key that
    /// shares nothing; keys that share bytes extend the whole key before.
    #[test]
    fn common_prefixes_are_put_back() {
        let mut b = b"user:".to_vec();
        b.extend_from_slice(&[0, 2, 1, b'a', b'a', b'x']); // "user:aa" at 5
        b.extend_from_slice(&[6, 1, 1, b'b', b'y']); // "user:ab"
        let second = b.len() as u32;
        b.extend_from_slice(&[0, 2, 1, b'c', b'c', b'z']); // "user:cc"
        for r in [5u32, second, 2] {
            b.extend_from_slice(&r.to_le_bytes());
        }
        let cursor = || {
            let c = Cursor::new(&b, Layout::Plain).unwrap();
            c.with_common_prefix(true).unwrap()
        };
        let mut walk = cursor();
        let mut keys = Vec::new();
        let mut more = walk.seek_to_first().unwrap();
        while more {
            keys.push(walk.key().to_vec());
            more = walk.advance().unwrap();
        }
        assert_eq!(keys, [&b"user:aa"[..], b"user:ab", b"user:cc"]);
        for (target, want) in [
            (&b"user:ab"[..], &b"user:ab"[..]),
            (b"user:b", b"user:cc"),
            (b"a", b"user:aa"),
        ] {
            let mut c = cursor();
            assert!(c.seek(|key| key.cmp(target)).unwrap());
            assert_eq!(c.key(), want, "{target:?}");
        }
    }

    /// format_version 8's index values: a size delta stored as zigzag + 1,
    /// 0 escaping a whole handle where the block does not follow the last.
    #[test]
    fn escaped_index_values_hold_whole_handles() {
        let mut b = Vec::new();
        b.extend_from_slice(&[0, 2, b'k', b'a', 0, 10]); // handle 0, 10
        b.extend_from_slice(&[1, 1, b'b', 0, 100, 7]); // escape: handle 100, 7
        b.extend_from_slice(&[1, 1, b'c', 4]); // zigzag(-2) + 1: 112, 5
        b.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
        let layout = Layout::Index {
            delta: true,
            first_key: false,
            escape: true,
        };
        let mut cursor = Cursor::new(&b, layout).unwrap();
        let mut got = Vec::new();
        let mut more = cursor.seek_to_first().unwrap();
        while more {
            got.push(cursor.handle().unwrap());
            more = cursor.advance().unwrap();
        }
        let h = |offset, size| BlockHandle { offset, size };
        assert_eq!(got, [h(0, 10), h(100, 7), h(112, 5)]);
    }

    impl Cursor<'_> {
        fn advance_or_first(&mut self) -> bool {
            if self.key.is_empty() && self.handle.is_none() {
                self.seek_to_first().unwrap()
            } else {
                self.advance().unwrap()
            }
        }
    }
}
