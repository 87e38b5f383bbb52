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
//! use leveldb_filter::rocksdb::SstFile;
//! let bytes = std::fs::read("000012.sst")?;
//! let sst = SstFile::open(&bytes)?;
//! println!("format_version {}", sst.footer().format_version);
//! assert!(sst.key_may_match(b"a key the table holds"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod blocks;
mod build;
mod check;
mod filter;
mod xxph3;

use std::cmp::Ordering;

pub use build::{FastLocalBloomBuilder, LegacyBloomBuilder};
pub use check::{FilterCheck, FilterReport, TableCheck};

use check::Prefix;
pub use filter::FilterBits;
pub use xxph3::hash64;

use std::collections::BTreeSet;

use crate::error::{Corruption, Field};
use crate::table::{stored_block, varint64, BlockHandle, BlockIter, BlockKind, Compression};
use crate::Error;
use blocks::{for_each_user_key, index_entries, uncompress};

/// The magic number that ends a RocksDB block-based table with a
/// format_version >= 1 footer.
pub const ROCKSDB_MAGIC: u64 = 0x88e2_41b7_85f4_cff7;
/// The magic number of format_version 0, LevelDB's.
pub const LEGACY_MAGIC: u64 = crate::table::TABLE_MAGIC;

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

/// How a table's blocks are checksummed (the footer's first byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChecksumType {
    /// 0: none.
    None,
    /// 1: masked CRC-32C, as LevelDB.
    Crc32c,
    /// 2: xxHash32, seed 0.
    XxHash32,
    /// 3: the low 32 bits of xxHash64, seed 0.
    XxHash64,
    /// 4: the low 32 bits of XXH3 (64-bit) of the contents, the type byte
    /// mixed in after (RocksDB 7.8's default).
    Xxh3,
}

impl ChecksumType {
    fn from_byte(byte: u8) -> Option<ChecksumType> {
        Some(match byte {
            0 => ChecksumType::None,
            1 => ChecksumType::Crc32c,
            2 => ChecksumType::XxHash32,
            3 => ChecksumType::XxHash64,
            4 => ChecksumType::Xxh3,
            _ => return None,
        })
    }

    /// The checksum of a block's contents and its type byte, as stored in
    /// its trailer (`ComputeBuiltinChecksum`); `None` for no checksum.
    pub fn checksum(self, contents: &[u8], kind: u8) -> Option<u32> {
        let with_kind = || [contents, &[kind]].concat();
        Some(match self {
            ChecksumType::None => return None,
            ChecksumType::Crc32c => {
                let crc = crc32c::crc32c_append(crc32c::crc32c(contents), &[kind]);
                crc.rotate_right(15).wrapping_add(0xa282_ead8)
            }
            ChecksumType::XxHash32 => xxhash_rust::xxh32::xxh32(&with_kind(), 0),
            ChecksumType::XxHash64 => xxhash_rust::xxh64::xxh64(&with_kind(), 0) as u32,
            ChecksumType::Xxh3 => {
                let h = xxhash_rust::xxh3::xxh3_64(contents) as u32;
                h ^ u32::from(kind).wrapping_mul(0x6b90_83d9)
            }
        })
    }
}

impl std::fmt::Display for ChecksumType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ChecksumType::None => "none",
            ChecksumType::Crc32c => "crc32c",
            ChecksumType::XxHash32 => "xxhash32",
            ChecksumType::XxHash64 => "xxhash64",
            ChecksumType::Xxh3 => "xxh3",
        })
    }
}

/// A RocksDB table's footer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footer {
    /// 0 (the legacy footer, LevelDB's) to 5.
    pub format_version: u32,
    /// How blocks are checksummed.
    pub checksum: ChecksumType,
    /// The metaindex block.
    pub metaindex: BlockHandle,
    /// The index block.
    pub index: BlockHandle,
}

impl Footer {
    /// Reads the footer at the end of `file`.
    pub fn read(file: &[u8]) -> Result<Footer, Error> {
        let len = file.len();
        if len < crate::table::FOOTER_LEN {
            return Err(Error::TruncatedFooter { len: len as u64 });
        }
        let magic = u64::from_le_bytes(file[len - 8..].try_into().expect("8 bytes"));
        let (checksum, handles, format_version) = match magic {
            LEGACY_MAGIC => (ChecksumType::Crc32c, &file[len - 48..len - 8], 0),
            ROCKSDB_MAGIC if len < 53 => return Err(Error::TruncatedFooter { len: len as u64 }),
            ROCKSDB_MAGIC => {
                let footer = &file[len - 53..];
                let version = u32::from_le_bytes(footer[41..45].try_into().expect("4 bytes"));
                let checksum = ChecksumType::from_byte(footer[0]).ok_or(Error::Unsupported {
                    what: Field::ChecksumType,
                    found: u64::from(footer[0]),
                })?;
                if !(1..=5).contains(&version) {
                    return Err(Error::Unsupported {
                        what: Field::FormatVersion,
                        found: u64::from(version),
                    });
                }
                (checksum, &footer[1..41], version)
            }
            found => return Err(Error::BadMagic { found }),
        };
        let (metaindex, rest) = BlockHandle::decode(handles).ok_or(Error::BadFooterHandle)?;
        let (index, _) = BlockHandle::decode(rest).ok_or(Error::BadFooterHandle)?;
        Ok(Footer {
            format_version,
            checksum,
            metaindex,
            index,
        })
    }
}

/// A RocksDB table's filter, as RocksDB 7.8 finds it in the metaindex.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum SstFilter<'a> {
    /// `fullfilter.<name>`: one filter for the whole table.
    Full(FilterBits<'a>),
    /// `partitionedfilter.<name>`: the partitions' index; each key's
    /// partition is found as RocksDB finds it.
    Partitioned(Partitions<'a>),
    /// `filter.<name>`: the obsolete block-based filter, which RocksDB 7.8
    /// ignores (every key may match; LevelDB's reader reads it).
    BlockBased,
}

/// The index of a partitioned filter: a separator key and a partition per
/// entry, in key order.
#[derive(Clone, Debug)]
pub struct Partitions<'a> {
    /// (separator, partition) pairs.
    pub entries: Vec<(Vec<u8>, BlockHandle)>,
    /// Whether separators are internal keys (user key and 8-byte tag).
    pub internal_keys: bool,
    /// Each entry's partition, read and checked once, when the table opens.
    filters: Vec<Result<FilterBits<'a>, Error>>,
}

impl<'a> Partitions<'a> {
    /// The partition RocksDB probes for `key`: the first whose separator is
    /// >= the key (the last when none is), as `GetFilterPartitionHandle`.
    pub fn partition_for(&self, key: &[u8]) -> Option<BlockHandle> {
        let (_, handle) = self.entries.get(self.entry_for(key)?)?;
        Some(*handle)
    }

    /// The filter of entry `i`'s partition, or why it cannot be read.
    pub fn partition(&self, i: usize) -> Option<Result<&FilterBits<'a>, &Error>> {
        Some(self.filters.get(i)?.as_ref())
    }

    /// The index of the entry [`partition_for`](Self::partition_for) picks.
    fn entry_for(&self, key: &[u8]) -> Option<usize> {
        let at = (0..self.entries.len()).position(|i| self.holds(i, key));
        at.or(self.entries.len().checked_sub(1))
    }

    /// Whether entry `i`'s separator is not below a lookup of `key`.
    pub(crate) fn holds(&self, i: usize, key: &[u8]) -> bool {
        not_below(&self.entries[i].0, key, self.internal_keys)
    }

    /// Whether `probe` may be in the partition a lookup of `key` picks
    /// (the key itself, or its prefix: the partition is chosen by the key).
    fn may_match(&self, key: &[u8], probe: &[u8]) -> bool {
        let Some(i) = self.entry_for(key) else {
            return true;
        };
        if self.entries[i].1.size == 0 {
            return false;
        }
        // A partition RocksDB cannot read rules nothing out.
        self.filters[i]
            .as_ref()
            .map_or(true, |bits| bits.may_match(probe))
    }
}

/// Whether an index entry's key (`separator`, an internal key where
/// `internal`) is not below the key RocksDB seeks for user key `key`.
fn not_below(separator: &[u8], key: &[u8], internal: bool) -> bool {
    if internal {
        compare_internal_with_seek(separator, key) != Ordering::Less
    } else {
        separator >= key
    }
}

/// An internal key (user key and 8-byte tag) against the key RocksDB seeks
/// for user key `user`: the user keys bytewise, then the tag descending; the
/// seek key's tag is the largest sequence number with type 0x16.
fn compare_internal_with_seek(internal: &[u8], user: &[u8]) -> Ordering {
    let Some(split) = internal.len().checked_sub(8) else {
        return internal.cmp(user);
    };
    let (ukey, tag) = internal.split_at(split);
    let tag = u64::from_le_bytes(tag.try_into().expect("8 bytes"));
    let seek_tag = ((1u64 << 56) - 1) << 8 | 0x16;
    ukey.cmp(user).then(seek_tag.cmp(&tag))
}

/// A RocksDB table file: footer, metaindex, properties and filter, checked.
#[derive(Clone, Debug)]
pub struct SstFile<'a> {
    file: &'a [u8],
    footer: Footer,
    properties: Entries,
    filter_name: Option<String>,
    filter: Result<Option<SstFilter<'a>>, Error>,
    /// The (top-level) index's entries and how the block was stored, read
    /// once, when first needed.
    index: std::cell::OnceCell<Result<(IndexEntries, Compression), Error>>,
}

impl<'a> SstFile<'a> {
    /// Reads the footer, metaindex and properties (whose errors are the
    /// table's: RocksDB would not open it) and the filter (whose errors are
    /// kept: RocksDB then reads without it).
    pub fn open(file: &'a [u8]) -> Result<SstFile<'a>, Error> {
        let footer = Footer::read(file)?;
        let meta = read_block(
            file,
            footer.checksum,
            BlockKind::Metaindex,
            footer.metaindex,
        )?;
        let metaindex = entries(meta, BlockKind::Metaindex, footer.metaindex.offset)?;
        let handle_of = |name: &[u8]| {
            let (_, value) = metaindex.iter().find(|(key, _)| key == name)?;
            Some(BlockHandle::decode(value).map(|(h, _)| h))
        };
        let mut properties = Vec::new();
        for name in [&b"rocksdb.properties"[..], b"rocksdb.stats"] {
            if let Some(handle) = handle_of(name) {
                let handle = handle.ok_or(Error::CorruptBlock {
                    block: BlockKind::Metaindex,
                    offset: footer.metaindex.offset,
                    what: Corruption::PropertiesNotAHandle,
                })?;
                let block = read_block(file, footer.checksum, BlockKind::Properties, handle)?;
                properties = entries(block, BlockKind::Properties, handle.offset)?;
                break;
            }
        }
        let mut sst = SstFile {
            file,
            footer,
            properties,
            filter_name: None,
            filter: Ok(None),
            index: std::cell::OnceCell::new(),
        };
        for prefix in ["fullfilter.", "partitionedfilter.", "filter."] {
            let found = metaindex.iter().find(|(key, _)| {
                key.strip_prefix(prefix.as_bytes())
                    .is_some_and(|name| BUILTIN_NAMES.iter().any(|b| b.as_bytes() == name))
            });
            let Some((key, value)) = found else { continue };
            sst.filter_name = Some(String::from_utf8_lossy(key).into_owned());
            sst.filter = sst.read_filter(file, prefix, value);
            break;
        }
        Ok(sst)
    }

    fn read_filter(
        &self,
        file: &'a [u8],
        prefix: &str,
        value: &[u8],
    ) -> Result<Option<SstFilter<'a>>, Error> {
        let corrupt = Error::CorruptBlock {
            block: BlockKind::Metaindex,
            offset: self.footer.metaindex.offset,
            what: Corruption::FilterEntryNotAHandle,
        };
        let (handle, _) = BlockHandle::decode(value).ok_or(corrupt)?;
        let checksum = self.footer.checksum;
        Ok(Some(match prefix {
            "fullfilter." => SstFilter::Full(FilterBits::parse(read_block(
                file,
                checksum,
                BlockKind::Filter,
                handle,
            )?)),
            "partitionedfilter." => {
                let block = read_block(file, checksum, BlockKind::FilterIndex, handle)?;
                let delta = self.property_number("rocksdb.index.value.is.delta.encoded") == Some(1);
                let entries = index_entries(block, delta).ok_or(Error::CorruptBlock {
                    block: BlockKind::FilterIndex,
                    offset: handle.offset,
                    what: Corruption::MalformedEntry,
                })?;
                let internal_keys =
                    self.property_number("rocksdb.index.key.is.user.key") != Some(1);
                let filters = entries
                    .iter()
                    .map(|&(_, handle)| {
                        read_block(file, checksum, BlockKind::Filter, handle).map(FilterBits::parse)
                    })
                    .collect();
                SstFilter::Partitioned(Partitions {
                    entries,
                    internal_keys,
                    filters,
                })
            }
            _ => SstFilter::BlockBased,
        }))
    }

    /// The footer.
    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    /// The properties block's entries, in order.
    pub fn properties(&self) -> &[(Vec<u8>, Vec<u8>)] {
        &self.properties
    }

    /// A property's raw value.
    pub fn property(&self, name: &str) -> Option<&[u8]> {
        let (_, value) = self
            .properties
            .iter()
            .find(|(key, _)| key == name.as_bytes())?;
        Some(value)
    }

    /// A numeric property (a varint64).
    pub fn property_number(&self, name: &str) -> Option<u64> {
        varint64(self.property(name)?).map(|(n, _)| n)
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
        self.property("rocksdb.block.based.table.whole.key.filtering") != Some(b"0")
    }

    /// The prefix extractor the table was written with (its property
    /// `rocksdb.prefix.extractor.name`), if any: then the filter holds the
    /// keys' prefixes too.
    pub fn prefix_extractor(&self) -> Option<&str> {
        let name = std::str::from_utf8(self.property("rocksdb.prefix.extractor.name")?).ok()?;
        (name != "nullptr" && !name.is_empty()).then_some(name)
    }

    /// The index type (the property `rocksdb.block.based.table.index.type`,
    /// a fixed32): 0 binary search, 1 hash search, 2 two-level, 3 binary
    /// search with first keys.
    pub fn index_type(&self) -> u32 {
        self.property("rocksdb.block.based.table.index.type")
            .and_then(|v| Some(u32::from_le_bytes(v.try_into().ok()?)))
            .unwrap_or(0)
    }

    /// An index block's entries (the index, or a partition of a two-level
    /// index), uncompressed and checked.
    fn index_block(&self, handle: BlockHandle) -> Result<(IndexEntries, Compression), Error> {
        let (contents, compression) = self.block(BlockKind::Index, handle)?;
        if self.index_type() == 3 {
            return Err(Error::Unsupported {
                what: Field::IndexType,
                found: 3,
            });
        }
        let delta = self.property_number("rocksdb.index.value.is.delta.encoded") == Some(1);
        let entries = index_entries(&contents, delta).ok_or(Error::CorruptBlock {
            block: BlockKind::Index,
            offset: handle.offset,
            what: Corruption::MalformedIndexEntry,
        })?;
        Ok((entries, compression))
    }

    /// A data or index block's contents, its checksum checked, uncompressed.
    fn block(
        &self,
        kind: BlockKind,
        handle: BlockHandle,
    ) -> Result<(std::borrow::Cow<'a, [u8]>, Compression), Error> {
        let (contents, type_byte) = checked_block(self.file, self.footer.checksum, kind, handle)?;
        let (compression, contents) = uncompress(
            self.file.len(),
            kind,
            handle,
            contents,
            type_byte,
            self.footer.format_version,
        )?;
        Ok((contents, compression))
    }

    /// The index block's (the top level's, for a two-level index) entries
    /// and compression, read on the first call and kept.
    fn top_index(&self) -> Result<&(IndexEntries, Compression), Error> {
        self.index
            .get_or_init(|| self.index_block(self.footer.index))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether index keys are user keys (the property
    /// `rocksdb.index.key.is.user.key`), else internal keys.
    fn index_keys_are_user_keys(&self) -> bool {
        self.property_number("rocksdb.index.key.is.user.key") == Some(1)
    }

    /// The data blocks' handles in order, from the index (both levels of a
    /// two-level index), and the compressions of the index blocks read.
    fn data_blocks(&self) -> Result<(Vec<BlockHandle>, BTreeSet<Compression>), Error> {
        let (top, compression) = self.top_index()?;
        let mut compressions = BTreeSet::from([*compression]);
        if self.index_type() != 2 {
            return Ok((top.iter().map(|&(_, h)| h).collect(), compressions));
        }
        let mut blocks = Vec::new();
        for &(_, partition) in top {
            let (entries, compression) = self.index_block(partition)?;
            compressions.insert(compression);
            blocks.extend(entries.into_iter().map(|(_, h)| h));
        }
        Ok((blocks, compressions))
    }

    /// Walks every key of the table, data block by data block, calling
    /// `each` with the user key (internal keys without their 8-byte tag)
    /// and the offset of its data block.
    pub fn for_each_key(&self, mut each: impl FnMut(&[u8], u64)) -> Result<KeyWalk, Error> {
        let (blocks, mut compressions) = self.data_blocks()?;
        let mut walk = KeyWalk {
            data_blocks: blocks.len() as u64,
            ..KeyWalk::default()
        };
        for handle in blocks {
            let (contents, compression) = self.block(BlockKind::Data, handle)?;
            compressions.insert(compression);
            walk.keys += for_each_user_key(&contents, handle, |key| each(key, handle.offset))?;
        }
        walk.compressions = compressions.into_iter().collect();
        Ok(walk)
    }

    /// The data block RocksDB's index points a lookup of user key `key` to
    /// (the first entry whose key is not less than the key), or `None` past
    /// the last key. The index is read once per table; a
    /// two-level index's partition, on each lookup.
    pub fn data_block_for(&self, key: &[u8]) -> Result<Option<BlockHandle>, Error> {
        let internal = !self.index_keys_are_user_keys();
        let seek = |entries: &[(Vec<u8>, BlockHandle)]| {
            let mut entries = entries.iter();
            let found = entries.find(|(separator, _)| not_below(separator, key, internal));
            found.map(|&(_, handle)| handle)
        };
        let (top, _) = self.top_index()?;
        let Some(found) = seek(top) else {
            return Ok(None);
        };
        if self.index_type() != 2 {
            return Ok(Some(found));
        }
        let (entries, _) = self.index_block(found)?;
        Ok(seek(&entries))
    }

    /// Whether RocksDB's `Get` of user key `key` may find it in this table,
    /// judging by the filter alone (`false`: the filter rules it out). A
    /// table that filters prefixes alone is probed with the key's prefix,
    /// by the table's fixed or capped prefix extractor (any other answers
    /// "may match").
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

/// A block's contents, its trailer checked; meta and filter blocks are never
/// compressed.
fn read_block(
    file: &[u8],
    checksum: ChecksumType,
    kind: BlockKind,
    handle: BlockHandle,
) -> Result<&[u8], Error> {
    let (contents, type_byte) = checked_block(file, checksum, kind, handle)?;
    if type_byte != 0 && kind != BlockKind::Filter {
        return Err(Error::CorruptBlock {
            block: kind,
            offset: handle.offset,
            what: Corruption::MetaBlockCompressed,
        });
    }
    Ok(contents)
}

/// A block's stored contents and type byte, once its trailer's checksum
/// matches.
fn checked_block(
    file: &[u8],
    checksum: ChecksumType,
    kind: BlockKind,
    handle: BlockHandle,
) -> Result<(&[u8], u8), Error> {
    let (contents, trailer) = stored_block(file, kind, handle)?;
    let expected = u32::from_le_bytes(trailer[1..5].try_into().expect("4 bytes"));
    if let Some(found) = checksum.checksum(contents, trailer[0]) {
        if found != expected {
            return Err(Error::ChecksumMismatch {
                block: kind,
                offset: handle.offset,
                expected,
                found,
            });
        }
    }
    Ok((contents, trailer[0]))
}

/// What [`SstFile::for_each_key`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyWalk {
    /// Data blocks the index names.
    pub data_blocks: u64,
    /// Keys (entries) in them.
    pub keys: u64,
    /// The compressions of the data and index blocks, in order.
    pub compressions: Vec<Compression>,
}

/// An index block's (separator key, block handle) pairs, in order.
type IndexEntries = Vec<(Vec<u8>, BlockHandle)>;

/// A block's entries: (key, value) pairs in order.
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Every entry of a metaindex or properties block.
fn entries(block: &[u8], kind: BlockKind, offset: u64) -> Result<Entries, Error> {
    let mut iter = BlockIter::with_budget(block, block.len() as u64);
    iter.seek_to_first();
    let mut out = Vec::new();
    while iter.valid() {
        out.push((iter.key().to_vec(), iter.value().to_vec()));
        iter.advance();
    }
    match iter.error() {
        Some(what) => Err(Error::CorruptBlock {
            block: kind,
            offset,
            what,
        }),
        None => Ok(out),
    }
}
