//! What a table's own keys say about its filter: rebuilding the filter block
//! as LevelDB's `TableBuilder` would, inferring the writer's settings, probing
//! as LevelDB's table lookup does, and per-filter statistics.

use std::cmp::Ordering;
use std::fmt;

use crate::table::{BlockKind, Compression, Table, BLOCK_TRAILER_LEN};
use crate::{
    BlockHandle, BloomFilterPolicy, Error, FilterBlock, FilterBlockBuilder, FilterBlockReader,
    FilterPolicy, HashVariant, LEVELDB_LEGACY_NAME, LEVELDB_NAME, ROCKSDB_LEGACY_NAME,
};

/// How a table's keys are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyFormat {
    /// The keys as the user gave them: tables written directly by a `TableBuilder`.
    User,
    /// A database's internal keys: the user key and an 8-byte tag (sequence
    /// number and type). The filter holds the user keys.
    Internal,
}

impl fmt::Display for KeyFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyFormat::User => "user",
            KeyFormat::Internal => "internal",
        })
    }
}

/// The user key of an internal key: all but its last 8 bytes (LevelDB asserts
/// there are 8; a shorter key is taken as empty here).
pub fn user_key(internal_key: &[u8]) -> &[u8] {
    &internal_key[..internal_key.len().saturating_sub(8)]
}

/// LevelDB's `InternalFilterPolicy`: filters a database's tables by user key.
/// It strips the 8-byte tag from every key before the inner policy sees it,
/// and keeps the inner policy's name, as LevelDB does.
#[derive(Clone, Debug)]
pub struct InternalKeyPolicy<P>(pub P);

impl<P: FilterPolicy> FilterPolicy for InternalKeyPolicy<P> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        let user_keys: Vec<&[u8]> = keys.iter().map(|k| user_key(k)).collect();
        self.0.create_filter(&user_keys, dst);
    }
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        self.0.key_may_match(user_key(key), filter)
    }
}

/// A data block's keys.
#[derive(Clone, Debug)]
pub struct DataBlock {
    /// Where the block is.
    pub handle: BlockHandle,
    /// How it was stored.
    pub compression: Compression,
    /// Its keys, in order.
    pub keys: Vec<Vec<u8>>,
}

impl Table<'_> {
    /// Reads every data block the index points to, in order; the blocks must
    /// follow each other in the file without overlapping.
    pub fn data_blocks(&self) -> Result<Vec<DataBlock>, Error> {
        let mut end = 0;
        let mut budget = crate::table::key_budget(self.file().len());
        self.index()
            .iter()
            .map(|entry| {
                if entry.handle.offset < end {
                    return Err(Error::CorruptBlock {
                        block: BlockKind::Index,
                        offset: self.index_handle().offset,
                        what: "data block handles overlap or go backwards",
                    });
                }
                let block = self.read_block(BlockKind::Data, entry.handle)?;
                let mut keys = Vec::new();
                crate::block_entries(&block.contents, |key, _| {
                    budget = budget
                        .checked_sub(key.len())
                        .ok_or(crate::table::KEYS_TOO_LONG)?;
                    keys.push(key.to_vec());
                    Ok(())
                })
                .map_err(|what| Error::CorruptBlock {
                    block: BlockKind::Data,
                    offset: entry.handle.offset,
                    what,
                })?;
                end = entry.handle.offset + entry.handle.size + BLOCK_TRAILER_LEN;
                Ok(DataBlock {
                    handle: entry.handle,
                    compression: block.compression,
                    keys,
                })
            })
            .collect()
    }
}

/// Whether the keys look like a database's internal keys: each at least 8
/// bytes with a type of 0 (deletion) or 1 (value), user keys ascending and
/// sequence numbers descending within a user key.
pub fn looks_internal(blocks: &[DataBlock]) -> bool {
    let mut keys = blocks.iter().flat_map(|b| &b.keys).peekable();
    if keys.peek().is_none() {
        return false;
    }
    let mut previous: Option<&[u8]> = None;
    for key in keys {
        if key.len() < 8 || key[key.len() - 8] > 1 {
            return false;
        }
        if previous.is_some_and(|p| compare_internal(p, key) != Ordering::Less) {
            return false;
        }
        previous = Some(key);
    }
    true
}

/// LevelDB's `InternalKeyComparator` over the bytewise comparator: user keys
/// ascending, then tags (sequence and type) descending.
pub fn compare_internal(a: &[u8], b: &[u8]) -> Ordering {
    let tag = |k: &[u8]| -> u64 {
        let t = &k[k.len().saturating_sub(8)..];
        let mut bytes = [0u8; 8];
        bytes[..t.len()].copy_from_slice(t);
        u64::from_le_bytes(bytes)
    };
    user_key(a)
        .cmp(user_key(b))
        .then_with(|| tag(b).cmp(&tag(a)))
}

/// Rebuilds a filter block from a table's data blocks as LevelDB's
/// `TableBuilder` makes it: `StartBlock(0)`, then each block's keys followed by
/// `StartBlock` at the offset after the block and its trailer.
///
/// # Panics
/// If the blocks are not in ascending offset order, as
/// [`Table::data_blocks`] guarantees they are.
pub fn rebuild_filter_block<P: FilterPolicy>(blocks: &[DataBlock], policy: P) -> Vec<u8> {
    let mut builder = FilterBlockBuilder::new(policy);
    builder.start_block(0);
    for block in blocks {
        for key in &block.keys {
            builder.add_key(key);
        }
        builder.start_block(block.handle.offset + block.handle.size + BLOCK_TRAILER_LEN);
    }
    builder.finish().to_vec()
}

/// The number of keys in each filter a `TableBuilder` would make from these
/// blocks (0 for an empty filter).
pub fn keys_per_filter(blocks: &[DataBlock]) -> Vec<usize> {
    /// A policy whose filter is the number of keys, as a fixed32.
    struct Counting;
    impl FilterPolicy for Counting {
        fn name(&self) -> &str {
            "counting"
        }
        fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
            dst.extend_from_slice(&(keys.len() as u32).to_le_bytes());
        }
        fn key_may_match(&self, _: &[u8], _: &[u8]) -> bool {
            true
        }
    }
    let block = rebuild_filter_block(blocks, Counting);
    // Only a table past 4 GiB of filters could make offsets that wrap.
    let Ok(parsed) = FilterBlock::parse(&block) else {
        return Vec::new();
    };
    parsed
        .filters()
        .map(|f| {
            f.get(..4)
                .map_or(0, |n| u32::from_le_bytes([n[0], n[1], n[2], n[3]]) as usize)
        })
        .collect()
}

/// The hash variants a writer may have used, from the policy name; `None` for a
/// policy this crate does not know.
pub fn variants_for_name(name: &str) -> Option<&'static [HashVariant]> {
    match name {
        LEVELDB_NAME => Some(&[HashVariant::Unsigned]),
        // LevelDB <= 1.17 (signed on x86) and goleveldb (unsigned).
        LEVELDB_LEGACY_NAME => Some(&[HashVariant::Signed, HashVariant::Unsigned]),
        ROCKSDB_LEGACY_NAME => Some(&[HashVariant::Signed]),
        _ => None,
    }
}

/// The bits-per-key settings that give every stored filter its length and k
/// byte for its number of keys; `counts` and `filters` pair up by index.
pub fn bits_per_key_candidates(counts: &[usize], filters: &[&[u8]]) -> Vec<usize> {
    let constraints: Vec<(usize, usize, u8)> = counts
        .iter()
        .zip(filters)
        .filter(|(&n, f)| n > 0 && f.len() >= 2)
        .map(|(&n, f)| (n, f.len() - 1, f[f.len() - 1]))
        .collect();
    // The constraint with the most keys pins bits per key down the closest:
    // n * b bits round up to its byte count (or to the 64-bit minimum).
    let Some(&(n, bytes, _)) = constraints.iter().max_by_key(|c| c.0) else {
        return Vec::new();
    };
    let (lo, hi) = if bytes == 8 {
        (0, 64 / n)
    } else {
        (8 * (bytes - 1) / n + 1, 8 * bytes / n)
    };
    (lo..=hi)
        .filter(|&b| {
            let policy = BloomFilterPolicy::new(b);
            constraints.iter().all(|&(n, bytes, k)| {
                n.saturating_mul(b).max(64).div_ceil(8) == bytes && policy.k() == usize::from(k)
            })
        })
        .collect()
}

/// What to take as given rather than infer.
#[derive(Clone, Copy, Debug, Default)]
pub struct VerifyOptions {
    /// The key format; inferred when `None`.
    pub key_format: Option<KeyFormat>,
    /// The hash variant; inferred from the name and the keys when `None`.
    pub variant: Option<HashVariant>,
    /// Bits per key; inferred from the filters' sizes when `None`.
    pub bits_per_key: Option<usize>,
}

/// Which hash variants rebuild a table's filter block exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VariantFound {
    /// Only the unsigned one.
    Unsigned,
    /// Only the signed one.
    Signed,
    /// Both: no key has a byte >= 0x80 where the variants differ, so this
    /// table cannot tell them apart.
    Either,
}

impl fmt::Display for VariantFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VariantFound::Unsigned => "unsigned",
            VariantFound::Signed => "signed",
            VariantFound::Either => "unsigned-or-signed",
        })
    }
}

/// The outcome of [`verify_filter`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The metaindex names no filter block.
    NoFilter,
    /// The filter's policy is not one this crate builds.
    UnknownPolicy {
        /// Its name.
        name: String,
    },
    /// The rebuilt block is byte for byte the stored one.
    Match {
        /// The policy name.
        name: String,
        /// The hash variant(s) that rebuild it.
        variant: VariantFound,
        /// The key format.
        key_format: KeyFormat,
        /// The bits per key that rebuild it.
        bits_per_key: usize,
    },
    /// No setting rebuilds the stored block.
    Mismatch {
        /// The policy name.
        name: String,
        /// What differs, for the likeliest settings.
        difference: String,
    },
}

/// Rebuilds a table's filter block from its keys and data-block offsets and
/// compares it byte for byte with the stored one, trying each key format and
/// hash variant the table could have been written with unless `options` fixes
/// them.
pub fn verify_filter(
    table: &Table<'_>,
    blocks: &[DataBlock],
    options: VerifyOptions,
) -> Result<Verdict, Error> {
    let Some(filter) = table.filter_block()? else {
        return Ok(Verdict::NoFilter);
    };
    let name = filter.name.clone();
    let Some(named_variants) = variants_for_name(&name) else {
        return Ok(Verdict::UnknownPolicy { name });
    };
    let variants: Vec<HashVariant> = match options.variant {
        Some(v) => vec![v],
        None => named_variants.to_vec(),
    };
    let formats = match options.key_format {
        Some(f) => vec![f],
        None if looks_internal(blocks) => vec![KeyFormat::Internal, KeyFormat::User],
        None => vec![KeyFormat::User, KeyFormat::Internal],
    };
    let stored = &filter.block.contents[..];
    let mismatch = |difference: String| Verdict::Mismatch {
        name: name.clone(),
        difference,
    };
    let parsed = match FilterBlock::parse(stored) {
        Ok(parsed) => parsed,
        Err(e) => {
            return Ok(mismatch(format!(
                "the stored filter block is malformed: {e}"
            )))
        }
    };
    let counts = keys_per_filter(blocks);
    let filters: Vec<&[u8]> = parsed.filters().collect();
    let bits_per_key = match options.bits_per_key {
        Some(b) => b,
        None => {
            let candidates = bits_per_key_candidates(&counts, &filters);
            // Several settings can give the same bytes (the 64-bit minimum,
            // k's rounding); prefer LevelDB's customary 10, else the smallest.
            match candidates.iter().find(|&&b| b == 10).or(candidates.first()) {
                Some(&b) => b,
                None if counts.iter().all(|&n| n == 0) => 10,
                None => {
                    return Ok(mismatch(
                        "no bits-per-key setting explains the filters' sizes and k".into(),
                    ))
                }
            }
        }
    };
    let rebuild = |format: KeyFormat, variant: HashVariant| {
        let policy = BloomFilterPolicy::new(bits_per_key).with_hash(variant);
        match format {
            KeyFormat::User => rebuild_filter_block(blocks, policy),
            KeyFormat::Internal => rebuild_filter_block(blocks, InternalKeyPolicy(policy)),
        }
    };
    for &format in &formats {
        let matching: Vec<HashVariant> = variants
            .iter()
            .copied()
            .filter(|&v| rebuild(format, v) == stored)
            .collect();
        let variant = match matching[..] {
            [] => continue,
            [HashVariant::Unsigned] => VariantFound::Unsigned,
            [HashVariant::Signed] => VariantFound::Signed,
            _ => VariantFound::Either,
        };
        return Ok(Verdict::Match {
            name,
            variant,
            key_format: format,
            bits_per_key,
        });
    }
    let rebuilt = rebuild(formats[0], variants[0]);
    let Ok(rebuilt) = FilterBlock::parse(&rebuilt) else {
        return Ok(mismatch("the rebuilt block's offsets pass 4 GiB".into()));
    };
    let difference = if rebuilt.len() != parsed.len() {
        format!("{} filters stored, {} rebuilt", parsed.len(), rebuilt.len())
    } else {
        match parsed.filters().zip(rebuilt.filters()).position(|(a, b)| a != b) {
            Some(i) => format!(
                "first differing filter {i} ({} keys; {} bytes stored, {} rebuilt with {} keys, {:?} hash, {bits_per_key} bits per key)",
                counts.get(i).copied().unwrap_or(0),
                filters[i].len(),
                rebuilt.filter(i).map_or(0, <[u8]>::len),
                formats[0],
                variants[0],
            ),
            None => "the filters agree but the blocks differ (offsets or trailer)".into(),
        }
    };
    Ok(mismatch(difference))
}

/// What LevelDB's table lookup decides for a key before it reads a data block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// The key sorts after the index's last entry: not in the table.
    PastLastKey,
    /// The index points to the data block at `offset`; `may_match` is the
    /// filter's answer (`true` when the table has no usable filter).
    Block {
        /// Offset of the data block.
        offset: u64,
        /// Whether LevelDB would read the block.
        may_match: bool,
    },
}

/// LevelDB's `Table::InternalGet` up to the data-block read: seeks the index for
/// the first separator >= the key (bytewise; for internal keys, the lookup key
/// with the largest sequence number), then asks the filter.
pub fn probe<P: FilterPolicy>(
    table: &Table<'_>,
    filter: Option<&FilterBlockReader<'_, P>>,
    key_format: KeyFormat,
    key: &[u8],
) -> Probe {
    let lookup: Vec<u8> = match key_format {
        KeyFormat::User => key.to_vec(),
        KeyFormat::Internal => {
            // kMaxSequenceNumber << 8 | kValueTypeForSeek (1)
            let tag: u64 = ((1u64 << 56) - 1) << 8 | 1;
            [key, &tag.to_le_bytes()[..]].concat()
        }
    };
    let index = table.index();
    let at = index.partition_point(|e| match key_format {
        KeyFormat::User => e.key[..] < lookup[..],
        KeyFormat::Internal => compare_internal(&e.key, &lookup) == Ordering::Less,
    });
    let Some(entry) = index.get(at) else {
        return Probe::PastLastKey;
    };
    let may_match = filter.is_none_or(|f| f.key_may_match(entry.handle.offset, &lookup));
    Probe::Block {
        offset: entry.handle.offset,
        may_match,
    }
}

/// Statistics of one Bloom filter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BloomStats {
    /// Keys the table put in it.
    pub keys: usize,
    /// Bits in its array.
    pub bits: usize,
    /// Its k byte.
    pub k: u8,
    /// Bits set.
    pub bits_set: usize,
}

impl BloomStats {
    /// Statistics of `filter`, which holds `keys` keys.
    pub fn new(filter: &[u8], keys: usize) -> Self {
        let (k, array) = filter.split_last().map_or((0, &[][..]), |(&k, a)| (k, a));
        BloomStats {
            keys,
            bits: array.len() * 8,
            k,
            bits_set: array.iter().map(|b| b.count_ones() as usize).sum(),
        }
    }

    /// Bits per key.
    pub fn bits_per_key(&self) -> f64 {
        self.bits as f64 / self.keys as f64
    }

    /// Share of the bits that are set.
    pub fn share_set(&self) -> f64 {
        self.bits_set as f64 / self.bits as f64
    }

    /// False-positive rate estimated from the bits set, as Guava's
    /// `BloomFilter.expectedFpp`: share set to the power k.
    pub fn estimated_fpr(&self) -> f64 {
        self.share_set().powi(i32::from(self.k))
    }

    /// Number of distinct keys estimated from the bits set, as Guava's
    /// `approximateElementCount`: -ln(1 - share set) * bits / k, rounded.
    pub fn estimated_keys(&self) -> f64 {
        (-(-self.share_set()).ln_1p() * self.bits as f64 / f64::from(self.k)).round()
    }
}
