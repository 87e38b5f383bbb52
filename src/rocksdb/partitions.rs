//! A RocksDB table's filter as its metaindex names it: one full filter, or
//! a partitioned one, whose index block RocksDB seeks for a key's partition.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::FilterBits;
use crate::format::{seek_tag, user_key_if, Corruption, Limit};
use crate::format::{BlockHandle, BlockKind, KeyOrder};
use crate::format::{Checkpoints, Cursor, Layout};
use crate::Error;

/// A RocksDB table's filter, as RocksDB finds it in the metaindex.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum SstFilter<'a> {
    /// `fullfilter.<name>`: one filter for the whole table.
    Full(FilterBits<'a>),
    /// `partitionedfilter.<name>`: the partitions' index; each key's
    /// partition is found as RocksDB finds it.
    Partitioned(Partitions<'a>),
    /// `filter.<name>`: the block-based filter of RocksDB 6.x and earlier
    /// (LevelDB's filter block, RocksDB's signed hash), which RocksDB 7.0
    /// and later ignore: every key may match. Its block, as stored.
    BlockBased(&'a [u8]),
}

/// The index of a partitioned filter: a separator key and a partition per
/// entry, kept as the block RocksDB seeks (`GetFilterPartitionHandle`).
#[derive(Clone, Debug)]
pub struct Partitions<'a> {
    pub(super) index: Cow<'a, [u8]>,
    pub(super) layout: Layout,
    /// Whether separators are internal keys (user key and 8-byte tag).
    pub(super) internal_keys: bool,
    /// The table's key order, where this crate knows its comparator.
    pub(super) order: Option<KeyOrder>,
    /// Whether the block may store its keys' common prefix once.
    pub(super) common_prefix: bool,
    pub(super) entries: usize,
    /// Each distinct partition the entries name, read and checked once.
    pub(super) filters: BTreeMap<BlockHandle, Result<FilterBits<'a>, Error>>,
    /// The index's checkpoints, made by the first seek (boxed: the filter's
    /// enum stays small).
    pub(super) checkpoints: OnceLock<Box<Checkpoints>>,
}

impl<'a> Partitions<'a> {
    /// Reads the partition index `index` (its block at `offset`) and each
    /// distinct partition it names, within the bounds of a file of
    /// `file_len` bytes: the partitions checked add up to at most twice the
    /// file (each counted as at least 64 bytes), which a table RocksDB wrote
    /// never nears (its partitions lie apart in the file); past that, the
    /// filter does not read (it rules nothing out). Separators are internal
    /// keys where `internal_keys`; the block may store their common prefix
    /// once where `common_prefix` (format_version 8).
    pub(super) fn read(
        index: Cow<'a, [u8]>,
        offset: u64,
        layout: Layout,
        (internal_keys, common_prefix): (bool, bool),
        order: Option<KeyOrder>,
        read: impl Fn(BlockHandle) -> Result<FilterBits<'a>, Error>,
        file_len: u64,
    ) -> Result<Self, Error> {
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::FilterIndex,
            offset,
            what,
        };
        let cursor = Cursor::new(&index, layout).and_then(|c| c.with_common_prefix(common_prefix));
        let mut cursor = cursor.map_err(corrupt)?;
        let mut filters = BTreeMap::new();
        let (mut entries, mut checked) = (0, 0u64);
        let budget = file_len.saturating_mul(2);
        let mut more = cursor.seek_to_first().map_err(corrupt)?;
        while more {
            let handle = cursor.handle().ok_or(corrupt(Corruption::NotAHandle))?;
            entries += 1;
            if let std::collections::btree_map::Entry::Vacant(entry) = filters.entry(handle) {
                checked = checked.saturating_add(handle.size.saturating_add(5).max(64));
                if checked > budget {
                    return Err(Error::LimitExceeded {
                        block: BlockKind::FilterIndex,
                        offset,
                        what: Limit::FilterPartitions,
                        found: checked,
                        limit: budget,
                    });
                }
                entry.insert(read(handle));
            }
            more = cursor.advance().map_err(corrupt)?;
        }
        Ok(Partitions {
            index,
            layout,
            internal_keys,
            order,
            common_prefix,
            entries,
            filters,
            checkpoints: OnceLock::new(),
        })
    }

    /// How many entries (partition handles) the index holds.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// Whether the index has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Whether separators are internal keys (user key and 8-byte tag).
    pub fn internal_keys(&self) -> bool {
        self.internal_keys
    }

    /// A cursor before the first entry (the block was walked when read).
    pub(super) fn cursor(&self) -> Cursor<'_> {
        let cursor = Cursor::new(&self.index, self.layout);
        let cursor = cursor.and_then(|c| c.with_common_prefix(self.common_prefix));
        cursor.unwrap_or_else(|_| {
            // The block parsed when the table opened; it has not changed.
            Cursor::new(&[0, 0, 0, 0], Layout::Plain).expect("an empty block")
        })
    }

    /// Each entry's partition handle and its filter (or why it does not
    /// read), in the index's order.
    pub fn filters(&self) -> Vec<(BlockHandle, Result<&FilterBits<'a>, &Error>)> {
        let mut out = Vec::with_capacity(self.entries);
        let mut walk = self.walk();
        while let Some(entry) = walk.filter() {
            out.push(entry);
            walk.advance();
        }
        out
    }

    /// Each distinct partition the entries name, in file order, and its
    /// filter (or why it does not read).
    pub fn distinct(&self) -> impl Iterator<Item = (BlockHandle, Result<&FilterBits<'a>, &Error>)> {
        self.filters.iter().map(|(h, f)| (*h, f.as_ref()))
    }

    /// A walk over the entries, from the first.
    pub(crate) fn walk(&self) -> PartitionWalk<'_, 'a> {
        let mut cursor = self.cursor();
        let valid = cursor.seek_to_first().unwrap_or(false);
        PartitionWalk {
            partitions: self,
            cursor,
            valid,
        }
    }

    /// The filter of the partition at `handle`, as read when the table opened.
    pub(super) fn filter(&self, handle: BlockHandle) -> Result<&FilterBits<'a>, &Error> {
        match self.filters.get(&handle) {
            Some(filter) => filter.as_ref(),
            None => Err(&NOT_IN_INDEX),
        }
    }

    /// The partition RocksDB probes for user key `key` at the largest
    /// sequence number: the first entry not below the key by RocksDB's
    /// seek, else the last; `None` where the index does not read there, or
    /// the table's comparator is one this crate does not know (the filter
    /// then rules nothing out). A reader of a smaller sequence number may
    /// take a later entry whose separator's user key is `key` too, which
    /// [`Table::key_may_match`](super::Table::key_may_match) also asks.
    pub fn partition_for(&self, key: &[u8]) -> Option<BlockHandle> {
        self.seek(key)?.handle()
    }

    /// A cursor on the entry `GetFilterPartitionHandle` takes for `key`:
    /// the first not below it, else the last; `None` where there is none.
    pub(super) fn seek(&self, key: &[u8]) -> Option<Cursor<'_>> {
        let (internal, order) = (self.internal_keys, self.order?);
        let cursor = self.cursor();
        let checkpoints = self.checkpoints.get_or_init(|| {
            Box::new(cursor.checkpoints(|a, b| index_key_cmp(a, b, internal, order)))
        });
        let mut cursor = cursor.with_checkpoints(checkpoints);
        let found = match cursor.seek(|sep| order_to_seek(sep, key, internal, order)) {
            Ok(true) => true,
            Ok(false) | Err(_) => cursor.seek_to_last().unwrap_or(false),
        };
        found.then_some(cursor)
    }

    /// Whether `probe` may be in the partition a lookup of `key` picks
    /// (the key itself, or its prefix: the partition is chosen by the key).
    /// Which partition RocksDB's seek picks when a separator's user key is
    /// the key itself depends on the reader's sequence number: every
    /// partition it may pick is asked, so that no reader's pick is missed.
    ///
    /// Under a comparator this crate does not know, no partition can be
    /// sought: the key may match where any partition's filter says so.
    pub(super) fn may_match(&self, key: &[u8], probe: &[u8]) -> bool {
        let Some(order) = self.order else {
            return self.distinct().any(|(handle, bits)| {
                handle.size == 0 || bits.map_or(true, |b| b.may_match(probe))
            });
        };
        let Some(mut cursor) = self.seek(key) else {
            return true;
        };
        // Separators of one user key at several timestamps, or several
        // sequence numbers, may each be a reader's pick.
        let several = self.internal_keys || order.timestamp_size() > 0;
        loop {
            let Some(handle) = cursor.handle() else {
                return true;
            };
            // A partition of size 0 is out of range; one RocksDB cannot
            // read rules nothing out.
            if handle.size != 0
                && self
                    .filter(handle)
                    .map_or(true, |bits| bits.may_match(probe))
            {
                return true;
            }
            let separator = user_key_if(cursor.key(), self.internal_keys);
            let same_user_key = several && order.strip(separator) == key;
            if !same_user_key || !cursor.advance().unwrap_or(false) {
                return false;
            }
        }
    }
}

/// A walk over a partitioned filter's index, an entry at a time.
pub(crate) struct PartitionWalk<'p, 'a> {
    pub(super) partitions: &'p Partitions<'a>,
    pub(super) cursor: Cursor<'p>,
    pub(super) valid: bool,
}

impl<'p, 'a> PartitionWalk<'p, 'a> {
    /// The current entry's partition and its filter; `None` past the end.
    pub(crate) fn filter(&self) -> Option<(BlockHandle, Result<&'p FilterBits<'a>, &'p Error>)> {
        let handle = self.cursor.handle().filter(|_| self.valid)?;
        Some((handle, self.partitions.filter(handle)))
    }

    /// Whether the current entry's separator is not below the stored user
    /// key `key` (with its timestamp, if any) at its largest sequence
    /// number; under a comparator this crate does not know, whether the
    /// separator's user key is `key` without its timestamp.
    pub(crate) fn holds(&self, key: &[u8]) -> bool {
        let separator = user_key_if(self.cursor.key(), self.partitions.internal_keys);
        self.valid
            && match self.partitions.order {
                Some(order) => order.compare(separator, key) != Ordering::Less,
                None => separator == key,
            }
    }

    /// The current entry's separator key, as stored.
    pub(crate) fn separator(&self) -> Option<&[u8]> {
        self.valid.then(|| self.cursor.key())
    }

    /// Moves to the next entry.
    pub(crate) fn advance(&mut self) {
        self.valid = self.valid && self.cursor.advance().unwrap_or(false);
    }
}

/// Why a handle has no filter: not one the index names.
static NOT_IN_INDEX: Error = Error::CorruptBlock {
    block: BlockKind::FilterIndex,
    offset: 0,
    what: Corruption::NotAHandle,
};

/// An index entry's key (`separator`, an internal key where `internal`)
/// against the key RocksDB seeks for user key `key` (without a timestamp):
/// the user keys without timestamps in the table's order, then the
/// timestamp newest first, then the tag descending. The seek key's
/// timestamp is the newest there is, its tag the largest sequence number
/// with type 0x16.
pub(super) fn order_to_seek(
    separator: &[u8],
    key: &[u8],
    internal: bool,
    order: KeyOrder,
) -> Ordering {
    let (ukey, tag) = split_tag(separator, internal);
    let stripped = order.strip(ukey);
    let timestamp = &ukey[stripped.len()..];
    let seek_tag = seek_tag(0x16);
    order
        .compare_without_timestamp(stripped, key)
        .then_with(|| match timestamp.iter().all(|&b| b == 0xff) {
            true => Ordering::Equal,
            false => Ordering::Greater,
        })
        .then_with(|| match tag.try_into() {
            Ok(tag) => seek_tag.cmp(&u64::from_le_bytes(tag)),
            Err(_) => Ordering::Equal,
        })
}

/// An index separator's user key and its 8-byte tag (none where the keys
/// are user keys, or the separator is too short for one).
fn split_tag(separator: &[u8], internal: bool) -> (&[u8], &[u8]) {
    match separator.len().checked_sub(8) {
        Some(split) if internal => separator.split_at(split),
        _ => (separator, &[]),
    }
}

/// Two index entries' keys in the order [`order_to_seek`] compares one
/// against a seek key (user keys without timestamps, then the timestamp
/// newest first as that seek tells it, then the tag descending, a key too
/// short for a tag as at the seek's own): every seek's order is monotone
/// in it, so a block's checkpoints can be searched by it.
pub(super) fn index_key_cmp(a: &[u8], b: &[u8], internal: bool, order: KeyOrder) -> Ordering {
    fn parts(separator: &[u8], internal: bool, order: KeyOrder) -> (&[u8], bool, u64) {
        let (ukey, tag) = split_tag(separator, internal);
        let stripped = order.strip(ukey);
        let newest = ukey[stripped.len()..].iter().all(|&b| b == 0xff);
        let tag = match tag.try_into() {
            Ok(tag) => u64::from_le_bytes(tag),
            Err(_) => seek_tag(0x16),
        };
        (stripped, !newest, tag)
    }
    let (ka, fa, ta) = parts(a, internal, order);
    let (kb, fb, tb) = parts(b, internal, order);
    order
        .compare_without_timestamp(ka, kb)
        .then(fa.cmp(&fb))
        .then(tb.cmp(&ta))
}
