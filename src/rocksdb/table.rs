//! A RocksDB table opened as RocksDB's `BlockBasedTable::Open` opens it:
//! footer, metaindex, properties, compression dictionary and filter read
//! and checked; the index read when first needed, its partitions kept.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use super::keys::after;
use super::partitions::{Partitions, SstFilter};
use super::props::Props;
use super::{FilterBits, Footer};
use crate::format::{checked_block, find_meta, read_block, uncompress};
use crate::format::{uncompressed_limit, Checkpoints, Cursor, Layout, Source};
use crate::format::{varint64, BlockHandle, BlockKind, Compression, KeyOrder};
use crate::format::{Corruption, Field};
use crate::Error;

/// The filter names RocksDB reads (`<prefix><name>` in the metaindex).
const BUILTIN_NAMES: [&str; 7] = [
    "rocksdb.BuiltinBloomFilter",
    "rocksdb.internal.LegacyBloomFilter",
    "rocksdb.internal.FastLocalBloomFilter",
    "rocksdb.internal.Standard128RibbonFilter",
    "rocksdb.internal.DeprecatedBlockBasedBloomFilter",
    "bloomfilter",
    "ribbonfilter",
];

/// A RocksDB table file: footer, metaindex, properties and filter, checked.
///
/// A table is `Send + Sync`: an engine opens it once and reads it from any
/// thread (its index cache is behind a lock).
#[derive(Debug)]
pub struct Table<'a> {
    pub(super) file: Source<'a>,
    pub(super) footer: Footer,
    pub(super) metaindex: &'a [u8],
    pub(super) props: Props<'a>,
    /// The table's compression dictionary (`rocksdb.compression_dict`),
    /// with which its Zlib, LZ4 and Zstd data blocks were compressed.
    pub(super) dictionary: Option<&'a [u8]>,
    pub(super) filter_name: Option<String>,
    pub(super) filter: Result<Option<SstFilter<'a>>, Error>,
    /// The (top-level) index block, uncompressed, and how it was stored,
    /// read once, when first needed.
    pub(super) index: OnceLock<Result<Stored<'a>, Error>>,
    /// The index block's checkpoints, made by the first lookup.
    pub(super) index_checkpoints: OnceLock<Checkpoints>,
    /// A two-level index's partitions, each read once however many lookups
    /// need it; emptied when they would hold more than a block may
    /// uncompress to. Behind a lock, so that threads share the table.
    pub(super) partitions: Mutex<PartitionCache<'a>>,
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
            index_checkpoints: self.index_checkpoints.clone(),
            partitions: Mutex::new(self.partition_cache().clone()),
        }
    }
}

/// A block's contents, uncompressed, and how it was stored.
pub(super) type Stored<'a> = (Cow<'a, [u8]>, Compression);

/// An index partition as kept: its block, and its checkpoints, made by
/// the first lookup that seeks it.
#[derive(Debug)]
pub(super) struct Partition<'a> {
    pub(super) stored: Stored<'a>,
    pub(super) checkpoints: OnceLock<Checkpoints>,
}

/// Index partitions read by lookups and walks, by handle, and the bytes
/// they hold; shared, so that no borrow of the cache outlives a lookup.
#[derive(Clone, Debug, Default)]
pub(super) struct PartitionCache<'a> {
    pub(super) blocks: HashMap<BlockHandle, Arc<Partition<'a>>>,
    pub(super) bytes: usize,
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
            index_checkpoints: OnceLock::new(),
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
    pub(super) fn prefetch_partitions(&self) -> Result<(), Error> {
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

    pub(super) fn read_filter(
        &self,
        prefix: &str,
        handle: BlockHandle,
    ) -> Result<SstFilter<'a>, Error> {
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

    /// Whether the metaindex names a full or partitioned filter: behind
    /// LevelDB's magic, what tells RocksDB's legacy footer from LevelDB's.
    pub(crate) fn names_full_filter(&self) -> bool {
        self.filter_name().is_some_and(|name| {
            name.starts_with("fullfilter.") || name.starts_with("partitionedfilter.")
        })
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
    pub(super) fn known_order(&self) -> Result<KeyOrder, Error> {
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
    pub(super) fn index_layout(&self) -> Layout {
        Layout::Index {
            delta: self.props.index_delta,
            first_key: self.index_type() == 3,
            escape: self.footer.format_version >= 8,
        }
    }

    /// Whether blocks may store their keys' common prefix once
    /// (format_version 8).
    pub(super) fn common_prefix(&self) -> bool {
        self.footer.format_version >= 8
    }

    /// A data or index block's contents, its checksum checked, uncompressed.
    pub(super) fn block(
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
    pub(super) fn top_index(&self) -> Result<(&[u8], Compression), Error> {
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
    pub(super) fn index_cursor<'b>(
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
    pub(super) fn index_keys_are_internal(&self) -> bool {
        !self.props.index_user_keys
    }

    /// The index partition at `handle` and how it was stored, read (and
    /// kept) on its first use.
    pub(super) fn index_partition(&self, handle: BlockHandle) -> Result<Arc<Partition<'a>>, Error> {
        if let Some(block) = self.partition_cache().blocks.get(&handle) {
            return Ok(Arc::clone(block));
        }
        // Read without the lock: another thread may read it too, and the
        // later insert wins; both hold the same bytes.
        let block = Arc::new(Partition {
            stored: self.block(BlockKind::Index, handle)?,
            checkpoints: OnceLock::new(),
        });
        let mut cache = self.partition_cache();
        if let Some(read) = cache.blocks.get(&handle) {
            // Another thread read it meanwhile: one copy is kept.
            return Ok(Arc::clone(read));
        }
        // Twice the block: its checkpoints hold at most its size again.
        let cost = block.stored.0.len().saturating_mul(2).max(64);
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
    pub(super) fn partition_cache(&self) -> std::sync::MutexGuard<'_, PartitionCache<'a>> {
        self.partitions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The bytes the table holds beyond its file's kept blocks: its
    /// index, once read, where it is stored compressed (else it borrows the
    /// file's bytes), and the index partitions its lookups read (at most
    /// what one block may uncompress to, for the file's size).
    pub fn held_bytes(&self) -> u64 {
        let index = match self.index.get() {
            Some(Ok((Cow::Owned(index), _))) => index.len(),
            _ => 0,
        } + self.index_checkpoints.get().map_or(0, Checkpoints::bytes);
        (index + self.partition_cache().bytes) as u64
    }
}
