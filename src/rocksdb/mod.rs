//! RocksDB's block-based tables (SST files written by RocksDB 7.8 and
//! earlier), read far enough to answer for their filters as RocksDB does:
//! the footer (legacy and format_version 1 to 5), block trailers with every
//! checksum type (CRC-32C, xxHash32, xxHash64, XXH3), the metaindex, the
//! properties block, and full and partitioned filters with each
//! implementation (LegacyBloom, FastLocalBloom, Standard128Ribbon).
//!
//! ```text
//! data blocks | filter (full, or partitions then their index) | index | properties | metaindex | footer
//! footer (53 bytes): checksum type (1) | metaindex handle | index handle | padding to 41 | format_version (4) | magic (8)
//! ```
//!
//! What a filter answers is what RocksDB's `Get` decides from it: a key
//! ruled out is absent; a filter RocksDB cannot read (an unknown marker, a
//! block whose checksum fails) rules nothing out.
//!
//! ```no_run
//! use leveldb_filter::rocksdb::Table;
//! let bytes = std::fs::read("000012.sst")?;
//! let sst = Table::open(&bytes)?;
//! println!("format_version {}", sst.footer().format_version);
//! assert!(sst.key_may_match(b"a key the table holds"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod build;
mod check;
mod filter;
mod get;
mod ribbon;
mod xxph3;

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

pub use crate::format::{EntryKind, KeyEntry};
pub use build::{FastLocalBloomBuilder, LegacyBloomBuilder};
pub use check::{FilterCheck, FilterReport, Verdict};
pub use ribbon::RibbonBuilder;

use check::Prefix;
pub use filter::FilterBits;
pub use xxph3::hash64;

// RocksDB's full-filter builders as `FilterPolicy`s (see `RibbonBuilder`):
// `create_filter` appends the builder's bytes, `key_may_match` reads any
// full filter as RocksDB does, the name is the one RocksDB stores.
macro_rules! full_filter_policies {
    ($($builder:ty),*) => {$(
        impl crate::FilterPolicy for $builder {
            fn name(&self) -> &str {
                "rocksdb.BuiltinBloomFilter"
            }
            fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
                dst.extend_from_slice(&self.build(keys.iter().copied()));
            }
            fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
                FilterBits::parse(filter).may_match(key)
            }
        }
    )*};
}
full_filter_policies!(FastLocalBloomBuilder, LegacyBloomBuilder, RibbonBuilder);

use crate::format::{checked_block, find_meta, for_each_user_key, read_block, uncompress};
use crate::format::{seek_tag, user_key_if, Corruption, Field, Limit};
use crate::format::{uncompressed_limit, Cursor, Layout, Source};
use crate::format::{varint64, BlockHandle, BlockKind, Compression, KeyOrder};
pub use crate::format::{ChecksumType, Footer, FooterProblem, ROCKSDB_MAGIC};
use crate::Error;

/// The magic number of format_version 0, LevelDB's.
pub const LEGACY_MAGIC: u64 = crate::format::TABLE_MAGIC;

/// Whether `bytes` are a RocksDB table: its footer magic (format_version 1
/// and later), or LevelDB's (format_version 0) with a RocksDB filter entry
/// in the metaindex (`fullfilter.` or `partitionedfilter.`). Where the
/// footer must also read, [`TableFormat::of`](crate::TableFormat::of)
/// decides.
pub fn is_rocksdb_table<'a>(file: impl Into<Source<'a>>) -> bool {
    let file = file.into();
    let magic = file
        .len()
        .checked_sub(8)
        .and_then(|at| file.read(at, 8).ok());
    if magic.is_some_and(|magic| magic[..] == ROCKSDB_MAGIC.to_le_bytes()) {
        return true;
    }
    names_rocksdb_filter(file)
}

/// Whether the file opens as a RocksDB table whose metaindex names a full
/// or partitioned filter: behind LevelDB's magic, what tells RocksDB's
/// legacy footer from LevelDB's table.
pub(crate) fn names_rocksdb_filter(file: Source<'_>) -> bool {
    Table::open(file).is_ok_and(|sst| {
        sst.filter_name().is_some_and(|name| {
            name.starts_with("fullfilter.") || name.starts_with("partitionedfilter.")
        })
    })
}

/// The filter names RocksDB 7.8 reads (`<prefix><name>` in the metaindex).
const BUILTIN_NAMES: [&str; 7] = [
    "rocksdb.BuiltinBloomFilter",
    "rocksdb.internal.LegacyBloomFilter",
    "rocksdb.internal.FastLocalBloomFilter",
    "rocksdb.internal.Standard128RibbonFilter",
    "rocksdb.internal.DeprecatedBlockBasedBloomFilter",
    "bloomfilter",
    "ribbonfilter",
];

/// A RocksDB table's filter, as RocksDB 7.8 finds it in the metaindex.
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
    index: Cow<'a, [u8]>,
    layout: Layout,
    /// Whether separators are internal keys (user key and 8-byte tag).
    internal_keys: bool,
    /// The table's key order, where this crate knows its comparator.
    order: Option<KeyOrder>,
    /// Whether the block may store its keys' common prefix once.
    common_prefix: bool,
    entries: usize,
    /// Each distinct partition the entries name, read and checked once.
    filters: BTreeMap<BlockHandle, Result<FilterBits<'a>, Error>>,
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
    fn read(
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
    fn cursor(&self) -> Cursor<'_> {
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
    fn filter(&self, handle: BlockHandle) -> Result<&FilterBits<'a>, &Error> {
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
    /// [`Table::key_may_match`] also asks.
    pub fn partition_for(&self, key: &[u8]) -> Option<BlockHandle> {
        self.seek(key)?.handle()
    }

    /// A cursor on the entry `GetFilterPartitionHandle` takes for `key`:
    /// the first not below it, else the last; `None` where there is none.
    fn seek(&self, key: &[u8]) -> Option<Cursor<'_>> {
        let mut cursor = self.cursor();
        let (internal, order) = (self.internal_keys, self.order?);
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
    fn may_match(&self, key: &[u8], probe: &[u8]) -> bool {
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
    partitions: &'p Partitions<'a>,
    cursor: Cursor<'p>,
    valid: bool,
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
fn order_to_seek(separator: &[u8], key: &[u8], internal: bool, order: KeyOrder) -> Ordering {
    let (ukey, tag) = match internal {
        true => match separator.len().checked_sub(8) {
            Some(split) => separator.split_at(split),
            None => (separator, &[][..]),
        },
        false => (separator, &[][..]),
    };
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

/// The properties RocksDB's reader acts on, read once when the table opens.
#[derive(Clone, Debug, Default)]
struct Props<'a> {
    block: &'a [u8],
    index_type: u32,
    index_user_keys: bool,
    index_delta: bool,
    whole_key_filtering: bool,
    prefix_extractor: Option<&'a [u8]>,
    /// `rocksdb.comparator`: the name of the comparator that orders the keys.
    comparator: Option<&'a [u8]>,
    /// `rocksdb.user.defined.timestamps.persisted` (RocksDB 8.8+): 0 where
    /// the keys were stored without their timestamps.
    timestamps_persisted: bool,
    /// The size of `rocksdb.timestamp_min`, the table's smallest timestamp.
    timestamp_min_len: Option<usize>,
    /// `rocksdb.data.block.restart.interval` (RocksDB 11.0+), which data
    /// blocks of separated keys and values need.
    data_restart_interval: u64,
}

impl<'a> Props<'a> {
    /// Walks the properties block as `ReadTablePropertiesHelper` does: up to
    /// an entry that does not read, keys in strictly increasing order (else
    /// RocksDB fails the table: "properties unsorted").
    fn read(block: &'a [u8], offset: u64) -> Result<Self, Error> {
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::Properties,
            offset,
            what,
        };
        let mut props = Props {
            block,
            whole_key_filtering: true,
            timestamps_persisted: true,
            ..Props::default()
        };
        // An entry that does not read ends the properties, RocksDB keeping
        // those before it; keys out of order fail the table.
        let mut cursor = Cursor::new(block, Layout::Plain).map_err(corrupt)?;
        let mut last = Vec::new();
        let mut more = cursor.seek_to_first().unwrap_or(false);
        while more {
            let (key, value) = (cursor.key(), cursor.value());
            if !last.is_empty() && key <= &last[..] {
                return Err(corrupt(Corruption::PropertiesUnsorted));
            }
            // `GetUint64Property`: a varint64, 0 where it does not parse.
            let number = || varint64(value).map_or(0, |(n, _)| n);
            match key {
                b"rocksdb.block.based.table.index.type" => {
                    // `DecodeFixed32` of the value, whatever its length.
                    let mut fixed = [0; 4];
                    let n = value.len().min(4);
                    fixed[..n].copy_from_slice(&value[..n]);
                    props.index_type = u32::from_le_bytes(fixed);
                }
                b"rocksdb.index.key.is.user.key" => props.index_user_keys = number() != 0,
                b"rocksdb.index.value.is.delta.encoded" => props.index_delta = number() != 0,
                b"rocksdb.data.block.restart.interval" => props.data_restart_interval = number(),
                b"rocksdb.block.based.table.whole.key.filtering" => {
                    props.whole_key_filtering = value != b"0";
                }
                b"rocksdb.prefix.extractor.name" => props.prefix_extractor = Some(value),
                b"rocksdb.comparator" => props.comparator = Some(value),
                b"rocksdb.user.defined.timestamps.persisted" => {
                    props.timestamps_persisted = number() != 0;
                }
                b"rocksdb.timestamp_min" => props.timestamp_min_len = Some(value.len()),
                _ => {}
            }
            last.clear();
            last.extend_from_slice(key);
            more = cursor.advance().unwrap_or(false);
        }
        Ok(props)
    }
}

/// A RocksDB table file: footer, metaindex, properties and filter, checked.
///
/// A table is `Send + Sync`: an engine opens it once and reads it from any
/// thread (its index cache is behind a lock).
#[derive(Debug)]
pub struct Table<'a> {
    file: Source<'a>,
    footer: Footer,
    metaindex: &'a [u8],
    props: Props<'a>,
    /// The table's compression dictionary (`rocksdb.compression_dict`),
    /// with which its Zlib, LZ4 and Zstd data blocks were compressed.
    dictionary: Option<&'a [u8]>,
    filter_name: Option<String>,
    filter: Result<Option<SstFilter<'a>>, Error>,
    /// The (top-level) index block, uncompressed, and how it was stored,
    /// read once, when first needed.
    index: OnceLock<Result<Stored<'a>, Error>>,
    /// A two-level index's partitions, each read once however many lookups
    /// need it; emptied when they would hold more than a block may
    /// uncompress to. Behind a lock, so that threads share the table.
    partitions: Mutex<PartitionCache<'a>>,
}

impl Clone for Table<'_> {
    /// The same table, its index partition cache copied.
    fn clone(&self) -> Self {
        Table {
            file: self.file,
            footer: self.footer,
            metaindex: self.metaindex,
            props: self.props.clone(),
            dictionary: self.dictionary,
            filter_name: self.filter_name.clone(),
            filter: self.filter.clone(),
            index: self.index.clone(),
            partitions: Mutex::new(self.partition_cache().clone()),
        }
    }
}

/// A block's contents, uncompressed, and how it was stored.
type Stored<'a> = (Cow<'a, [u8]>, Compression);

/// Index partitions read by lookups and walks, by handle, and the bytes
/// they hold; shared, so that no borrow of the cache outlives a lookup.
#[derive(Clone, Debug, Default)]
struct PartitionCache<'a> {
    blocks: HashMap<BlockHandle, Arc<Stored<'a>>>,
    bytes: usize,
}

impl<'a> Table<'a> {
    /// Reads the footer, metaindex and properties (whose errors are the
    /// table's: RocksDB would not open it) and the filter (whose errors are
    /// kept: RocksDB then reads without it).
    pub fn open(file: impl Into<Source<'a>>) -> Result<Table<'a>, Error> {
        let file = file.into();
        let (footer, metaindex) = Footer::read_with_metaindex(file)?;
        let meta_error = |what| Error::CorruptBlock {
            block: BlockKind::Metaindex,
            offset: footer.metaindex.offset,
            what,
        };
        // RocksDB seeks the metaindex for the entries it needs; it does not
        // walk the others, which need not read.
        Cursor::new(metaindex, Layout::Plain).map_err(meta_error)?;
        let find = |name: &[u8]| find_meta(metaindex, name);
        let mut props = Props {
            whole_key_filtering: true,
            timestamps_persisted: true,
            ..Props::default()
        };
        // `SeekToPropertiesBlock`: the current name, then the old one.
        if let Some(value) = find(b"rocksdb.properties").or_else(|| find(b"rocksdb.stats")) {
            let (handle, _) =
                BlockHandle::decode(value).ok_or(meta_error(Corruption::PropertiesNotAHandle))?;
            let block = read_block(file, &footer, BlockKind::Properties, handle)?;
            props = Props::read(block, handle.offset)?;
        }
        let mut sst = Table {
            file,
            footer,
            metaindex,
            props,
            // RocksDB reads the dictionary when it opens the table.
            dictionary: match find(b"rocksdb.compression_dict") {
                None => None,
                Some(value) => {
                    let (handle, _) =
                        BlockHandle::decode(value).ok_or(meta_error(Corruption::NotAHandle))?;
                    Some(read_block(file, &footer, BlockKind::Dictionary, handle)?)
                }
            },
            filter_name: None,
            filter: Ok(None),
            index: OnceLock::new(),
            partitions: Mutex::default(),
        };
        // `PrefetchIndexAndFilterBlocks`: for each prefix, the first entry
        // the seek finds, if it names a builtin filter by a handle that
        // decodes; else the next prefix.
        for prefix in ["fullfilter.", "partitionedfilter.", "filter."] {
            let mut cursor = Cursor::new(metaindex, Layout::Plain).map_err(meta_error)?;
            if cursor.seek(|key| key.cmp(prefix.as_bytes())) != Ok(true) {
                continue;
            }
            let Some(name) = cursor.key().strip_prefix(prefix.as_bytes()) else {
                continue;
            };
            if !BUILTIN_NAMES.iter().any(|b| b.as_bytes() == name) {
                continue;
            }
            let Some((handle, _)) = BlockHandle::decode(cursor.value()) else {
                continue;
            };
            sst.filter_name = Some(String::from_utf8_lossy(cursor.key()).into_owned());
            sst.filter = sst.read_filter(prefix, handle).map(Some);
            break;
        }
        sst.prefetch_partitions()?;
        Ok(sst)
    }

    /// What RocksDB's open reads ahead of lookups (`CacheDependencies`, as
    /// a table cache opens a table): every partition of a partitioned
    /// filter, its index first, and of a two-level index. One that does not
    /// read fails the table, as it fails RocksDB's open; a full filter that
    /// does not read leaves the table without a filter. Index partitions are
    /// checked while each follows the one before in the file (as RocksDB
    /// writes them), so that no block is read twice.
    fn prefetch_partitions(&self) -> Result<(), Error> {
        let partitioned = self
            .filter_name
            .as_deref()
            .is_some_and(|n| n.starts_with("partitionedfilter."));
        match &self.filter {
            Err(Error::LimitExceeded { .. }) => {}
            Err(e) if partitioned => return Err(e.clone()),
            Ok(Some(SstFilter::Partitioned(partitions))) => {
                for (_, filter) in partitions.distinct() {
                    if let Err(e) = filter {
                        return Err(e.clone());
                    }
                }
            }
            _ => {}
        }
        if self.index_type() != 2 {
            return Ok(());
        }
        let (top, _) = self.top_index()?;
        let (mut cursor, corrupt) = self.index_cursor(top, self.footer.index.offset)?;
        let mut end = 0;
        let mut more = cursor.seek_to_first().map_err(&corrupt)?;
        while more {
            let handle = cursor.handle().ok_or(corrupt(Corruption::NotAHandle))?;
            if after(&mut end, handle, &corrupt).is_err() {
                break;
            }
            // Kept for the lookups and walks that will need it.
            self.index_partition(handle)?;
            more = cursor.advance().map_err(&corrupt)?;
        }
        Ok(())
    }

    fn read_filter(&self, prefix: &str, handle: BlockHandle) -> Result<SstFilter<'a>, Error> {
        let (file, footer) = (self.file, self.footer);
        Ok(match prefix {
            "fullfilter." => SstFilter::Full(FilterBits::parse(read_block(
                file,
                &footer,
                BlockKind::Filter,
                handle,
            )?)),
            "partitionedfilter." => {
                // The partition index is an index block, read as RocksDB
                // reads one: uncompressed where it was stored compressed.
                let (index, _) = self.block(BlockKind::FilterIndex, handle)?;
                let layout = Layout::Index {
                    delta: self.props.index_delta,
                    first_key: false,
                    escape: self.footer.format_version >= 8,
                };
                let read = |handle| {
                    read_block(file, &footer, BlockKind::Filter, handle).map(FilterBits::parse)
                };
                SstFilter::Partitioned(Partitions::read(
                    index,
                    handle.offset,
                    layout,
                    (!self.props.index_user_keys, self.common_prefix()),
                    self.key_order(),
                    read,
                    file.len(),
                )?)
            }
            _ => SstFilter::BlockBased(read_block(file, &footer, BlockKind::Filter, handle)?),
        })
    }

    /// The footer.
    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    /// A property's raw value (the first entry of that name).
    pub fn property(&self, name: &str) -> Option<&'a [u8]> {
        let mut cursor = Cursor::new(self.props.block, Layout::Plain).ok()?;
        let mut more = cursor.seek_to_first().ok()?;
        while more {
            if cursor.key() == name.as_bytes() {
                return Some(cursor.value());
            }
            more = cursor.advance().ok()?;
        }
        None
    }

    /// The compression manager the table was written with (format_version
    /// 7 and later: the first field of the property `rocksdb.compression`,
    /// `BuiltinV2` for RocksDB's own compressions), if it names one.
    pub fn compression_manager(&self) -> Option<&'a [u8]> {
        if self.footer.format_version < 7 {
            return None;
        }
        let value = self.property("rocksdb.compression")?;
        let end = value.iter().position(|&b| b == b';')?;
        Some(&value[..end])
    }

    /// A numeric property (a varint64).
    pub fn property_number(&self, name: &str) -> Option<u64> {
        varint64(self.property(name)?).map(|(n, _)| n)
    }

    /// Whether the metaindex names a block `name`, found as RocksDB's
    /// `FindMetaBlock` finds it.
    pub fn has_meta_block(&self, name: &str) -> bool {
        find_meta(self.metaindex, name.as_bytes()).is_some()
    }

    /// The metaindex key of the filter RocksDB reads (`fullfilter.<name>`, ...).
    pub fn filter_name(&self) -> Option<&str> {
        self.filter_name.as_deref()
    }

    /// The filter, `Ok(None)` for a table without one, or why it cannot be read.
    pub fn filter(&self) -> Result<Option<&SstFilter<'a>>, &Error> {
        self.filter.as_ref().map(Option::as_ref)
    }

    /// Whether the table's filter holds whole keys (the property
    /// `rocksdb.block.based.table.whole.key.filtering`, on unless it says 0).
    pub fn whole_key_filtering(&self) -> bool {
        self.props.whole_key_filtering
    }

    /// The prefix extractor the table was written with (its property
    /// `rocksdb.prefix.extractor.name`), if any: then the filter holds the
    /// keys' prefixes too.
    pub fn prefix_extractor(&self) -> Option<&str> {
        let name = std::str::from_utf8(self.props.prefix_extractor?).ok()?;
        (name != "nullptr" && !name.is_empty()).then_some(name)
    }

    /// The name of the comparator that orders the table's keys (the
    /// property `rocksdb.comparator`), if the table names one.
    pub fn comparator(&self) -> Option<&'a [u8]> {
        self.props.comparator
    }

    /// The order of the table's keys, where this crate knows its
    /// comparator (a table that names none is bytewise, as LevelDB's);
    /// with timestamps only where the table stores them.
    pub fn key_order(&self) -> Option<KeyOrder> {
        let order = match self.props.comparator {
            None => KeyOrder::Bytewise,
            Some(name) => KeyOrder::of(std::str::from_utf8(name).ok()?)?,
        };
        Some(match self.props.timestamps_persisted {
            true => order,
            false => order.without_timestamps(),
        })
    }

    /// The size of the timestamp that ends each stored user key (0: none):
    /// the comparator's, where this crate knows it; else the size of the
    /// smallest timestamp the table records (`rocksdb.timestamp_min`, which
    /// RocksDB writes for any comparator with timestamps). Filters hold
    /// keys without it.
    pub fn timestamp_size(&self) -> usize {
        if !self.props.timestamps_persisted {
            return 0;
        }
        match self.key_order() {
            Some(order) => order.timestamp_size(),
            None => self.props.timestamp_min_len.unwrap_or(0),
        }
    }

    /// A stored user key without its timestamp.
    pub(crate) fn strip_timestamp<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        crate::format::without_timestamp(key, self.timestamp_size())
    }

    /// The order of the table's keys, or the error that names the
    /// comparator this crate does not know.
    fn known_order(&self) -> Result<KeyOrder, Error> {
        self.key_order().ok_or_else(|| Error::UnknownComparator {
            name: String::from_utf8_lossy(self.props.comparator.unwrap_or_default()).into_owned(),
        })
    }

    /// The index type (the property `rocksdb.block.based.table.index.type`,
    /// a fixed32): 0 binary search, 1 hash search, 2 two-level, 3 binary
    /// search with first keys.
    pub fn index_type(&self) -> u32 {
        self.props.index_type
    }

    /// How the index's entries are laid out: delta-encoded values by the
    /// property, first keys with index type 3.
    fn index_layout(&self) -> Layout {
        Layout::Index {
            delta: self.props.index_delta,
            first_key: self.index_type() == 3,
            escape: self.footer.format_version >= 8,
        }
    }

    /// Whether blocks may store their keys' common prefix once
    /// (format_version 8).
    fn common_prefix(&self) -> bool {
        self.footer.format_version >= 8
    }

    /// A data or index block's contents, its checksum checked, uncompressed.
    fn block(
        &self,
        kind: BlockKind,
        handle: BlockHandle,
    ) -> Result<(Cow<'a, [u8]>, Compression), Error> {
        let (contents, type_byte) = checked_block(self.file, &self.footer, kind, handle)?;
        let dict = match (self.dictionary, kind) {
            (Some(dict), BlockKind::Data) => dict,
            _ => &[][..],
        };
        let (compression, contents) = uncompress(
            self.file.len(),
            kind,
            handle,
            contents,
            (type_byte, self.footer.format_version),
            dict,
        )
        .map_err(|e| match (e, self.compression_manager()) {
            // Types 0x80 and up belong to the table's compression manager.
            (Error::Unsupported { .. }, Some(manager)) if type_byte >= 0x80 => {
                Error::CustomCompression {
                    block: kind,
                    offset: handle.offset,
                    type_byte,
                    manager: String::from_utf8_lossy(manager).into_owned(),
                }
            }
            (e, _) => e,
        })?;
        Ok((contents, compression))
    }

    /// The index block (the top level's, for a two-level index), read on
    /// the first call and kept.
    fn top_index(&self) -> Result<(&[u8], Compression), Error> {
        if !(0..=3).contains(&self.index_type()) {
            return Err(Error::Unsupported {
                what: Field::IndexType,
                found: u64::from(self.index_type()),
            });
        }
        let (block, compression) = self
            .index
            .get_or_init(|| self.block(BlockKind::Index, self.footer.index))
            .as_ref()
            .map_err(Clone::clone)?;
        Ok((block, *compression))
    }

    /// A cursor over an index block at `offset`, and the error for what it meets.
    fn index_cursor<'b>(
        &self,
        block: &'b [u8],
        offset: u64,
    ) -> Result<(Cursor<'b>, impl Fn(Corruption) -> Error), Error> {
        let corrupt = move |what| Error::CorruptBlock {
            block: BlockKind::Index,
            offset,
            what,
        };
        let cursor = Cursor::new(block, self.index_layout())
            .and_then(|c| c.with_common_prefix(self.common_prefix()))
            .map_err(corrupt)?;
        Ok((cursor, corrupt))
    }

    /// Whether index keys are internal keys (the property
    /// `rocksdb.index.key.is.user.key` 0 or absent), else user keys.
    fn index_keys_are_internal(&self) -> bool {
        !self.props.index_user_keys
    }

    /// Calls `each` with every data block's handle, in the index's order
    /// (both levels of a two-level index), which must be the file's: each
    /// block after the one before, as RocksDB writes them, so that no block
    /// is read twice. Returns the compressions of the index blocks read.
    fn for_each_data_block(
        &self,
        mut each: impl FnMut(BlockHandle, &[u8]) -> Result<(), Error>,
    ) -> Result<BTreeSet<Compression>, Error> {
        let (top, compression) = self.top_index()?;
        let mut compressions = BTreeSet::from([compression]);
        let (mut cursor, corrupt) = self.index_cursor(top, self.footer.index.offset)?;
        let two_level = self.index_type() == 2;
        let (mut data_end, mut partition_end) = (0, 0);
        let mut more = cursor.seek_to_first().map_err(&corrupt)?;
        while more {
            let handle = cursor.handle().ok_or(corrupt(Corruption::NotAHandle))?;
            if !two_level {
                after(&mut data_end, handle, &corrupt)?;
                each(handle, cursor.key())?;
            } else {
                after(&mut partition_end, handle, &corrupt)?;
                let partition = self.index_partition(handle)?;
                compressions.insert(partition.1);
                let (mut entries, corrupt) = self.index_cursor(&partition.0, handle.offset)?;
                let mut more = entries.seek_to_first().map_err(&corrupt)?;
                while more {
                    let handle = entries.handle().ok_or(corrupt(Corruption::NotAHandle))?;
                    after(&mut data_end, handle, &corrupt)?;
                    each(handle, entries.key())?;
                    more = entries.advance().map_err(&corrupt)?;
                }
            }
            more = cursor.advance().map_err(&corrupt)?;
        }
        Ok(compressions)
    }

    /// The data blocks (by offset) whose index entry's key is the separator
    /// of a partition of `partitions`: where RocksDB cut filter partitions
    /// with the index's (before `decouple_partitioned_filters`), each ends
    /// with the data block whose entry ends an index partition, whatever the
    /// comparator. One entry a data block at most.
    pub(crate) fn blocks_ending_partitions(
        &self,
        partitions: &Partitions<'_>,
    ) -> Result<HashMap<u64, Vec<u8>>, Error> {
        let mut separators = std::collections::HashSet::new();
        let mut walk = partitions.walk();
        while let Some(separator) = walk.separator() {
            separators.insert(separator.to_vec());
            walk.advance();
        }
        let mut ends = HashMap::new();
        self.for_each_data_block(|handle, key| {
            if separators.contains(key) {
                ends.insert(handle.offset, key.to_vec());
            }
            Ok(())
        })?;
        Ok(ends)
    }

    /// Walks every key of the table, data block by data block, calling
    /// `each` with the user key (internal keys without their 8-byte tag)
    /// and the offset of its data block. Each block is read once: an index
    /// that names blocks out of the file's order is an error.
    pub fn for_each_key(&self, mut each: impl FnMut(&[u8], u64)) -> Result<KeyStats, Error> {
        let mut walk = KeyStats::default();
        let mut compressions = BTreeSet::new();
        let (order, mut last) = (self.key_order(), None::<Vec<u8>>);
        let index_compressions = self.for_each_data_block(|handle, _| {
            let (contents, compression) = self.block(BlockKind::Data, handle)?;
            compressions.insert(compression);
            walk.data_blocks += 1;
            let (prefixed, interval) = (self.common_prefix(), self.props.data_restart_interval);
            walk.keys += for_each_user_key(&contents, handle, prefixed, interval, |key| {
                if let (Some(order), Some(previous)) = (order, last.as_mut()) {
                    if walk.out_of_order.is_none() && order.compare(previous, key).is_gt() {
                        walk.out_of_order = Some((previous.clone(), key.to_vec()));
                    }
                    previous.clear();
                    previous.extend_from_slice(key);
                } else if order.is_some() {
                    last = Some(key.to_vec());
                }
                each(key, handle.offset)
            })?;
            Ok(())
        })?;
        compressions.extend(index_compressions);
        walk.compressions = compressions.into_iter().collect();
        Ok(walk)
    }

    /// The data block RocksDB's index points a lookup of user key `key`
    /// (without a timestamp) to, the entry its seek finds, or `None` past
    /// the last key; [`Error::UnknownComparator`] where the table's keys are
    /// ordered by a comparator this crate does not know. The index is read
    /// once per table, and each partition of a two-level index once however
    /// many lookups need it.
    pub fn data_block_for(&self, key: &[u8]) -> Result<Option<BlockHandle>, Error> {
        let (internal, known) = (self.index_keys_are_internal(), self.known_order()?);
        let order = |separator: &[u8]| order_to_seek(separator, key, internal, known);
        let (top, _) = self.top_index()?;
        let (mut cursor, corrupt) = self.index_cursor(top, self.footer.index.offset)?;
        if !cursor.seek(order).map_err(&corrupt)? {
            return Ok(None);
        }
        if self.index_type() != 2 {
            return Ok(cursor.handle());
        }
        // `PartitionedIndexIterator`: seek the partition; where the key is
        // past its last entry, the first entry of the next partition.
        let mut first = true;
        loop {
            let partition = cursor.handle().ok_or(corrupt(Corruption::NotAHandle))?;
            let block = self.index_partition(partition)?;
            let (mut entries, in_partition) = self.index_cursor(&block.0, partition.offset)?;
            let found = match first {
                true => entries.seek(order),
                false => entries.seek_to_first(),
            };
            let found = found
                .map_err(in_partition)?
                .then(|| entries.handle())
                .flatten();
            if found.is_some() {
                return Ok(found);
            }
            first = false;
            if !cursor.advance().map_err(&corrupt)? {
                return Ok(None);
            }
        }
    }

    /// The index partition at `handle` and how it was stored, read (and
    /// kept) on its first use.
    fn index_partition(&self, handle: BlockHandle) -> Result<Arc<Stored<'a>>, Error> {
        if let Some(block) = self.partition_cache().blocks.get(&handle) {
            return Ok(Arc::clone(block));
        }
        // Read without the lock: another thread may read it too, and the
        // later insert wins; both hold the same bytes.
        let block = Arc::new(self.block(BlockKind::Index, handle)?);
        let mut cache = self.partition_cache();
        let cost = block.0.len().max(64);
        if cache.bytes.saturating_add(cost) > uncompressed_limit(self.file.len()) {
            *cache = PartitionCache::default();
        }
        cache.bytes += cost;
        cache.blocks.insert(handle, Arc::clone(&block));
        Ok(block)
    }

    /// The index partition cache, locked. A thread that panicked holding
    /// it left whole entries (each insert is one step), so a poisoned
    /// lock's cache is still sound.
    fn partition_cache(&self) -> std::sync::MutexGuard<'_, PartitionCache<'a>> {
        self.partitions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The bytes of index partitions this table holds for its lookups (at
    /// most what one block may uncompress to, for the file's size).
    pub fn cached_bytes(&self) -> u64 {
        self.partition_cache().bytes as u64
    }

    /// The false-positive rate RocksDB's `Get`s meet on keys like the
    /// table's own, as LevelDB's [`measure_fpr`](crate::leveldb::measure_fpr)
    /// measures it: each distinct user key with its last byte one higher,
    /// where the table does not hold it and it lies inside the table's key
    /// range, probed as [`key_may_match`](Self::key_may_match) does.
    pub fn measure_fpr(&self) -> Result<crate::format::MeasuredFpr, Error> {
        let mut measured = crate::format::MeasuredFpr::default();
        let mut neighbours = crate::format::Neighbours::default();
        self.for_each_key(|key, _| {
            let probed = neighbours.key(key, |neighbour| {
                measured.probed += 1;
                measured.passed += u64::from(self.key_may_match(neighbour));
                Ok::<(), std::convert::Infallible>(())
            });
            let Ok(()) = probed;
        })?;
        // What is left lies past the last key: a `Get` does not ask.
        Ok(measured)
    }

    /// Whether the data block at `handle` holds an entry (a value, a
    /// deletion or any other) of user key `key` (without a timestamp): a
    /// `Get` that reads the block RocksDB's index points it to stops at this
    /// table when it does.
    pub fn block_holds_key(&self, handle: BlockHandle, key: &[u8]) -> Result<bool, Error> {
        let (contents, _) = self.block(BlockKind::Data, handle)?;
        let (prefixed, interval) = (self.common_prefix(), self.props.data_restart_interval);
        let order = self.key_order().unwrap_or(KeyOrder::Bytewise);
        let mut found = false;
        for_each_user_key(&contents, handle, prefixed, interval, |k| {
            found |= order.strip(k) == key
        })?;
        Ok(found)
    }

    /// What RocksDB's `Get` of user key `key` (without a timestamp) does at
    /// this table, as far as its index and filter decide: past the last
    /// key, or the data block it reads (or skips, where the filter rules
    /// the key out). Under a comparator this crate does not know no block
    /// can be sought: [`Lookup::Unordered`], absent only where every
    /// filter the table has rules the key out, so that a key the table
    /// holds is never answered absent.
    pub fn lookup(&self, key: &[u8]) -> Result<Lookup, Error> {
        if self.key_order().is_none() {
            return Ok(Lookup::Unordered {
                may_match: self.key_may_match(key),
            });
        }
        Ok(match self.data_block_for(key)? {
            None => Lookup::PastLastKey,
            Some(handle) => Lookup::Block {
                handle,
                may_match: self.key_may_match(key),
            },
        })
    }

    /// Whether RocksDB's `Get` of user key `key` may find it in this table,
    /// judging by the filter alone (`false`: the filter rules it out). A
    /// table that filters prefixes alone is probed with the key's prefix,
    /// by the table's fixed, capped or no-op prefix extractor (any other
    /// answers "may match").
    pub fn key_may_match(&self, key: &[u8]) -> bool {
        // Without whole keys in the filter, RocksDB probes the key's prefix
        // (with the table's own extractor, where the key is in its domain).
        let probe = match self.whole_key_filtering() {
            true => key,
            false => match Prefix::of(self.prefix_extractor()).and_then(|p| p.of_key(key)) {
                Some(prefix) => prefix,
                None => return true,
            },
        };
        match &self.filter {
            Ok(Some(SstFilter::Full(bits))) => bits.may_match(probe),
            Ok(Some(SstFilter::Partitioned(partitions))) => partitions.may_match(key, probe),
            _ => true,
        }
    }
}

/// What a table's index and filter decide for a `Get` of a key
/// ([`Table::lookup`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The key sorts past the table's last key: the table cannot hold it.
    PastLastKey,
    /// The data block the index points the key to, and whether the filter
    /// lets the `Get` read it (`false`: the key is absent).
    Block {
        /// The data block.
        handle: BlockHandle,
        /// Whether the filter may hold the key.
        may_match: bool,
    },
    /// The table's comparator is one this crate does not know: no block
    /// can be sought, and the filters are asked whole.
    Unordered {
        /// Whether any of the table's filters may hold the key.
        may_match: bool,
    },
}

/// Requires `handle` to start at or after `end`, then moves `end` past it
/// and its trailer.
fn after(
    end: &mut u64,
    handle: BlockHandle,
    corrupt: impl Fn(Corruption) -> Error,
) -> Result<(), Error> {
    if handle.offset < *end {
        return Err(corrupt(Corruption::HandlesOutOfOrder));
    }
    *end = handle
        .offset
        .saturating_add(handle.size)
        .saturating_add(crate::format::BLOCK_TRAILER_LEN);
    Ok(())
}

/// What [`Table::for_each_key`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyStats {
    /// Data blocks the index names.
    pub data_blocks: u64,
    /// Keys (entries) in them.
    pub keys: u64,
    /// The compressions of the data and index blocks, in order.
    pub compressions: Vec<Compression>,
    /// The first two neighbouring user keys out of the table's order,
    /// where this crate knows its comparator: RocksDB's iterators take
    /// such a table for corrupt.
    pub out_of_order: Option<(Vec<u8>, Vec<u8>)>,
}
