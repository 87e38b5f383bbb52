//! What a table's own keys say about its filter: one pass that counts them per
//! filter, the writer's settings inferred from the stored filters' sizes, the
//! stored filter block checked against a rebuild, probes as LevelDB's table
//! lookup makes them, and per-filter statistics.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use leveldb_filter::leveldb::Table;
//! use leveldb_filter::leveldb::{measure_fpr, probe, verify_filter, KeyFormat, Probe, Verdict, VerifyOptions};
//! use leveldb_filter::BloomFilterPolicy;
//!
//! let bytes = std::fs::read("000005.ldb")?;
//! let table = Table::open(&bytes)?;
//! let stats = table.key_stats()?; // one pass over the keys
//! if let Verdict::Match { key_format, .. } = verify_filter(&table, &stats, VerifyOptions::default())? {
//!     let policy = BloomFilterPolicy::new(10);
//!     // A user key, as an engine's Get asks for it.
//!     if let Probe::Block { offset, may_match } = probe(&table, Some(&policy), key_format, b"key")? {
//!         println!("block at {offset}: {}", if may_match { "read it" } else { "skip it" });
//!     }
//!     let measured = measure_fpr(&table, &policy, key_format)?;
//!     println!("false positives on neighbouring keys: {:.3}%", 100.0 * measured.rate());
//! }
//! # Ok(()) }
//! ```
//!
//! Nothing here holds a table's keys. Each pass reads one data block at a
//! time, and a rebuilt filter is hashed key by key into an array the size of
//! the stored filter, once the keys' count has said that the setting tried
//! makes a filter of that size: a setting that would make a larger filter is
//! a mismatch, decided before anything is allocated for it.

use std::cmp::Ordering;
use std::fmt;
use std::ops::ControlFlow;

use super::Table;
use crate::arch::Kernel;
use crate::format::Corruption;
use crate::format::{Block, BlockHandle, BlockKind, Compression, BLOCK_TRAILER_LEN};
use crate::internal_key::user_key;
use crate::{BloomFilterPolicy, Error, FilterBlock, FilterBlockReader, HashVariant};

/// How a table's keys are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
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

/// What one pass over a table's data blocks finds ([`Table::key_stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyStats {
    /// Number of data blocks.
    pub data_blocks: usize,
    /// Number of keys.
    pub keys: usize,
    /// How the data blocks were stored, each way once, in order.
    pub compressions: Vec<Compression>,
    /// The number of keys in each filter a `TableBuilder` would cut from these
    /// blocks (0 for an empty filter).
    pub keys_per_filter: Vec<usize>,
    /// Whether the keys look like a database's internal keys: each at least 8
    /// bytes with a type of 0 (deletion) or 1 (value), user keys ascending and
    /// sequence numbers descending within a user key.
    pub looks_internal: bool,
    /// The first and last keys, as stored (empty for a table without keys).
    pub key_range: (Vec<u8>, Vec<u8>),
    /// The first two neighbouring keys (as stored) out of order: neither
    /// strictly ascending bytewise (user keys) nor, where every key has an
    /// internal key's shape, in LevelDB's internal-key order over the
    /// bytewise comparator. LevelDB's iterators take such a table for
    /// corrupt; a table written under another comparator can be so.
    pub out_of_order: Option<(Vec<u8>, Vec<u8>)>,
    /// Per key format (user, internal): whether some key's last `len % 4`
    /// bytes hold a byte >= 0x80, the only keys the hash variants tell apart.
    variant_keys: [bool; 2],
}

impl KeyStats {
    /// Whether some key, read in `format`, hashes differently under the two
    /// [`HashVariant`]s: without one, a table cannot tell which wrote it.
    pub fn tells_variants_apart(&self, format: KeyFormat) -> bool {
        self.variant_keys[format as usize]
    }
}

impl Table<'_> {
    /// One pass over the data blocks, one block in memory at a time: their
    /// number, keys, compressions, keys per filter and key format.
    pub fn key_stats(&self) -> Result<KeyStats, Error> {
        let mut pass = StatsPass {
            stats: KeyStats {
                looks_internal: true,
                ..KeyStats::default()
            },
            pending: 0,
            previous: Vec::new(),
            unordered: [None, None],
            shaped: true,
        };
        let _ = walk(self, &mut pass)?;
        let mut stats = pass.stats;
        stats.looks_internal &= stats.keys > 0;
        stats.key_range.1 = pass.previous;
        let [bytewise, internal] = pass.unordered;
        stats.out_of_order = match pass.shaped {
            _ if bytewise.is_none() => None,
            true => internal,
            false => bytewise,
        };
        Ok(stats)
    }
}

/// What a walk over a table's keys feeds ([`walk`]); `Break` ends it early.
trait FilterSink {
    /// A data block, before its keys.
    fn block(&mut self, _block: &Block<'_>) {}
    /// A key of the filter being gathered.
    fn key(&mut self, key: &[u8]) -> ControlFlow<String>;
    /// Filter `index` is cut: it holds the keys given since the last cut.
    fn cut(&mut self, index: usize) -> ControlFlow<String>;
}

/// Feeds a table's keys to `sink` as LevelDB's `TableBuilder` feeds its
/// filter block builder: `StartBlock(0)`, each data block's keys, then
/// `StartBlock` at the offset after the block and its trailer, which cuts a
/// filter for each 2 KiB boundary passed, and `Finish`, which cuts the keys
/// left. Data blocks lie inside the file, so
/// there are at most as many filters as 2 KiB pieces of the file.
fn walk(table: &Table<'_>, sink: &mut impl FilterSink) -> Result<ControlFlow<String>, Error> {
    let mut cut = 0;
    // Whether keys were given since the last cut: `Finish` cuts them.
    let mut pending = false;
    for block in table.data_blocks() {
        let block = block?;
        sink.block(&block);
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::Data,
            offset: block.handle.offset,
            what,
        };
        let mut entries = block.entries();
        while let Some((key, _)) = entries.next_entry().map_err(corrupt)? {
            pending = true;
            if let ControlFlow::Break(difference) = sink.key(key) {
                return Ok(ControlFlow::Break(difference));
            }
        }
        let end = block.handle.offset + block.handle.size + BLOCK_TRAILER_LEN;
        while cut < (end >> FilterBlock::BASE_LG) as usize {
            pending = false;
            if let ControlFlow::Break(difference) = sink.cut(cut) {
                return Ok(ControlFlow::Break(difference));
            }
            cut += 1;
        }
    }
    Ok(match pending {
        true => sink.cut(cut),
        false => ControlFlow::Continue(()),
    })
}

/// [`Table::key_stats`]'s pass.
struct StatsPass {
    stats: KeyStats,
    /// Keys since the last cut.
    pending: usize,
    /// The last key.
    previous: Vec<u8>,
    /// The first neighbours out of order bytewise, and out of internal-key
    /// order while every key so far has an internal key's shape.
    unordered: [Option<(Vec<u8>, Vec<u8>)>; 2],
    /// Whether every key so far has an internal key's shape.
    shaped: bool,
}

impl FilterSink for StatsPass {
    fn block(&mut self, block: &Block<'_>) {
        let stats = &mut self.stats;
        stats.data_blocks += 1;
        if let Err(at) = stats.compressions.binary_search(&block.compression) {
            stats.compressions.insert(at, block.compression);
        }
    }

    fn key(&mut self, key: &[u8]) -> ControlFlow<String> {
        let stats = &mut self.stats;
        stats.keys += 1;
        self.pending += 1;
        let high_tail = |k: &[u8]| k[k.len() - k.len() % 4..].iter().any(|&b| b >= 0x80);
        stats.variant_keys[KeyFormat::User as usize] |= high_tail(key);
        stats.variant_keys[KeyFormat::Internal as usize] |= high_tail(user_key(key));
        let shaped = key.len() >= 8 && key[key.len() - 8] <= 1;
        let follows = |unordered: &mut Option<_>, ordered: bool| {
            if !ordered && unordered.is_none() {
                *unordered = Some((self.previous.clone(), key.to_vec()));
            }
        };
        if stats.keys > 1 {
            follows(&mut self.unordered[0], self.previous[..] < *key);
            if self.shaped && shaped {
                let ordered = compare_internal(&self.previous, key) == Ordering::Less;
                follows(&mut self.unordered[1], ordered);
            }
        }
        self.shaped &= shaped;
        stats.looks_internal = self.shaped && self.unordered[1].is_none();
        if stats.keys == 1 {
            stats.key_range.0 = key.to_vec();
        }
        self.previous.clear();
        self.previous.extend_from_slice(key);
        ControlFlow::Continue(())
    }

    fn cut(&mut self, _: usize) -> ControlFlow<String> {
        self.stats
            .keys_per_filter
            .push(std::mem::take(&mut self.pending));
        ControlFlow::Continue(())
    }
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

/// The hash variants a writer may have used, from the policy name; `None` for a
/// policy this crate does not know.
pub fn variants_for_name(name: &str) -> Option<&'static [HashVariant]> {
    match name {
        BloomFilterPolicy::LEVELDB_NAME => Some(&[HashVariant::Unsigned]),
        // LevelDB <= 1.17 (signed on x86) and goleveldb (unsigned).
        BloomFilterPolicy::LEVELDB_LEGACY_NAME => {
            Some(&[HashVariant::Signed, HashVariant::Unsigned])
        }
        BloomFilterPolicy::ROCKSDB_LEGACY_NAME => Some(&[HashVariant::Signed]),
        _ => None,
    }
}

/// The length of the filter LevelDB's Bloom policy makes for `keys` keys at
/// `bits_per_key` (0: no filter for no keys), computed, not built.
fn rebuilt_len(keys: usize, bits_per_key: usize) -> usize {
    match keys {
        0 => 0,
        n => n.saturating_mul(bits_per_key).max(64).div_ceil(8) + 1,
    }
}

/// The first stored filter whose length or k byte `bits_per_key` does not
/// give for its number of keys, said in words.
fn size_difference(
    counts: &[usize],
    stored: &FilterBlock<'_>,
    bits_per_key: usize,
) -> Option<String> {
    let k = BloomFilterPolicy::new(bits_per_key).k();
    counts
        .iter()
        .zip(stored.filters())
        .enumerate()
        .find_map(|(i, (&n, filter))| {
            let want = rebuilt_len(n, bits_per_key);
            if filter.len() != want {
                Some(format!(
                    "filter {i} ({n} keys) is {} bytes, {bits_per_key} bits per key make {want}",
                    filter.len()
                ))
            } else if n > 0 && usize::from(filter[want - 1]) != k {
                Some(format!(
                    "filter {i} ({n} keys) has k = {}, {bits_per_key} bits per key make k = {k}",
                    filter[want - 1]
                ))
            } else {
                None
            }
        })
}

/// The bits-per-key settings that give every stored filter its length and k
/// byte for its number of keys; `counts` and the stored filters pair up by
/// index. A filter that holds keys is at least 9 bytes whatever the setting:
/// a shorter one rules every setting out.
pub fn bits_per_key_candidates(counts: &[usize], stored: &FilterBlock<'_>) -> Vec<usize> {
    // The filter with the most keys pins bits per key down the closest:
    // n * b bits round up to its byte count (or to the 64-bit minimum).
    let mut most: Option<(usize, usize)> = None;
    for (&n, filter) in counts.iter().zip(stored.filters()) {
        if n == 0 {
            continue;
        }
        if filter.len() < 2 {
            return Vec::new();
        }
        if most.is_none_or(|(m, _)| n > m) {
            most = Some((n, filter.len() - 1));
        }
    }
    let Some((n, bytes)) = most else {
        return Vec::new();
    };
    let (lo, hi) = if bytes == 8 {
        (0, 64 / n)
    } else {
        (8 * (bytes - 1) / n + 1, 8 * bytes / n)
    };
    // At most 65 settings, each checked against every filter.
    (lo..=hi)
        .filter(|&b| size_difference(counts, stored, b).is_none())
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
#[non_exhaustive]
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
#[non_exhaustive]
pub enum Verdict {
    /// The metaindex names no filter block.
    NoFilter,
    /// The filter's policy is not one this crate builds.
    UnknownPolicy {
        /// Its name, as read from the file.
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
        /// The policy name, as read from the file.
        name: String,
        /// What differs, for the likeliest settings.
        difference: String,
    },
}

/// Rebuilds a table's filter block from its keys and data-block offsets, as
/// LevelDB's `TableBuilder` would, and compares it byte for byte with the
/// stored one, trying each key format and hash variant the table could have
/// been written with unless `options` fixes them. `stats` are the table's
/// own ([`Table::key_stats`]).
///
/// Memory: one data block and one filter (no larger than the stored one) at a
/// time. Work: a pass over the keys for each setting tried, at most four.
pub fn verify_filter(
    table: &Table<'_>,
    stats: &KeyStats,
    options: VerifyOptions,
) -> Result<Verdict, Error> {
    let Some(filter) = table.filter_block() else {
        return Ok(Verdict::NoFilter);
    };
    let name = filter.name.clone();
    let Some(named_variants) = variants_for_name(&name) else {
        return Ok(Verdict::UnknownPolicy { name });
    };
    let mismatch = |difference: String| {
        Ok(Verdict::Mismatch {
            name: name.clone(),
            difference,
        })
    };
    let stored = match FilterBlock::parse(&filter.block.contents) {
        Ok(parsed) => parsed,
        Err(e) => return mismatch(format!("the stored filter block is malformed: {e}")),
    };
    if stored.base_lg() != FilterBlock::BASE_LG {
        return mismatch(format!(
            "the stored base_lg is {}, LevelDB writes {}",
            stored.base_lg(),
            FilterBlock::BASE_LG
        ));
    }
    let counts = &stats.keys_per_filter;
    if counts.len() != stored.len() {
        return mismatch(format!(
            "{} filters stored, {} rebuilt",
            stored.len(),
            counts.len()
        ));
    }
    let bits_per_key = match options.bits_per_key {
        Some(b) => b,
        None => {
            let candidates = bits_per_key_candidates(counts, &stored);
            // Several settings can give the same bytes (the 64-bit minimum,
            // k's rounding); prefer LevelDB's customary 10, else the smallest.
            match candidates.iter().find(|&&b| b == 10).or(candidates.first()) {
                Some(&b) => b,
                None if counts.iter().all(|&n| n == 0) => 10,
                None => {
                    return mismatch(
                        "no bits-per-key setting explains the filters' sizes and k".into(),
                    )
                }
            }
        }
    };
    if let Some(difference) = size_difference(counts, &stored, bits_per_key) {
        return mismatch(difference);
    }
    let formats = match options.key_format {
        Some(f) => vec![f],
        None if stats.looks_internal => vec![KeyFormat::Internal, KeyFormat::User],
        None => vec![KeyFormat::User, KeyFormat::Internal],
    };
    let variants = options.variant.map_or(named_variants.to_vec(), |v| vec![v]);
    let mut first_difference = None;
    for format in formats {
        // Where no key tells the variants apart, they rebuild the same: one
        // rebuild answers for all.
        let alike = !stats.tells_variants_apart(format);
        let tried = if alike { &variants[..1] } else { &variants[..] };
        let mut matching = Vec::new();
        for &variant in tried {
            let policy = BloomFilterPolicy::new(bits_per_key).with_hash(variant);
            let mut pass = RebuildPass {
                stored,
                counts,
                policy: &policy,
                format,
                array: Vec::new(),
                hashes: Vec::new(),
                cuts: 0,
            };
            match walk(table, &mut pass)? {
                ControlFlow::Continue(()) => matching.push(variant),
                ControlFlow::Break(difference) => {
                    first_difference.get_or_insert(difference);
                }
            }
        }
        if alike && !matching.is_empty() {
            matching = variants.clone();
        }
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
    mismatch(first_difference.unwrap_or_default())
}

/// A rebuild compared with the stored filters, filter by filter: each
/// filter's keys hashed as they come, their bits set at the cut (as
/// [`FilterBlockBuilder`](crate::FilterBlockBuilder) sets them) in an array
/// of the stored filter's size (which `size_difference` has found to be
/// what the setting makes for the filter's keys).
struct RebuildPass<'s> {
    stored: FilterBlock<'s>,
    counts: &'s [usize],
    policy: &'s BloomFilterPolicy,
    format: KeyFormat,
    array: Vec<u8>,
    /// The hashes of the keys of the filter being gathered.
    hashes: Vec<u32>,
    /// Filters cut so far: the index of the one being gathered.
    cuts: usize,
}

impl FilterSink for RebuildPass<'_> {
    fn key(&mut self, key: &[u8]) -> ControlFlow<String> {
        if self.hashes.is_empty() {
            let filter = self.stored.filter(self.cuts).unwrap_or_default();
            if filter.len() < 2 {
                // `size_difference` rules this out; said, not assumed.
                return ControlFlow::Break(format!(
                    "filter {} holds keys but is {} bytes",
                    self.cuts,
                    filter.len()
                ));
            }
        }
        let key = match self.format {
            KeyFormat::User => key,
            KeyFormat::Internal => user_key(key),
        };
        self.hashes.push(self.policy.key_hash(key).value());
        ControlFlow::Continue(())
    }

    fn cut(&mut self, index: usize) -> ControlFlow<String> {
        if !self.hashes.is_empty() {
            let filter = self.stored.filter(index).unwrap_or_default();
            self.array.clear();
            self.array.resize(filter.len().saturating_sub(1), 0);
            Kernel::detect().insert_hashes(&self.hashes, self.policy.k(), &mut self.array);
            self.hashes.clear();
            if filter.split_last().map(|(_, bits)| bits) != Some(&self.array[..]) {
                return ControlFlow::Break(format!(
                    "first differing filter {index} ({} keys, {} bytes; rebuilt with {} keys, {} hash, {} bits per key)",
                    self.counts.get(index).copied().unwrap_or(0),
                    filter.len(),
                    self.format,
                    self.policy.hash_variant(),
                    self.policy.bits_per_key(),
                ));
            }
        }
        self.cuts += 1;
        ControlFlow::Continue(())
    }
}

/// False positives measured on a table's own keys ([`measure_fpr`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeasuredFpr {
    /// Neighbours probed: keys not in the table, each a key of the table
    /// with its last byte one higher.
    pub probed: u64,
    /// Those the filter let through.
    pub passed: u64,
}

impl MeasuredFpr {
    /// The share that passed (`NaN` when none was probed).
    pub fn rate(&self) -> f64 {
        self.passed as f64 / self.probed as f64
    }
}

/// The false-positive rate LevelDB's lookups meet on keys like the table's
/// own: for each distinct (user) key whose last byte is below 0xff, the key
/// with that byte one higher, when the table does not hold it, probed as
/// [`probe`] does. Keys that differ in their last byte are what tables of
/// sequential keys are asked for, and where LevelDB's hash is weakest: the
/// rate can be many times what the bits set suggest
/// ([`BloomStats::estimated_fpr`]). One pass over the data blocks, one block
/// at a time.
pub fn measure_fpr(
    table: &Table<'_>,
    policy: &BloomFilterPolicy,
    key_format: KeyFormat,
) -> Result<MeasuredFpr, Error> {
    let mut sink = NeighbourSink {
        neighbours: Neighbours::default(),
        prober: NeighbourProber {
            table,
            policy,
            key_format,
            measured: MeasuredFpr::default(),
        },
        error: None,
    };
    let _ = walk(table, &mut sink)?;
    if let Some(e) = sink.error {
        return Err(e);
    }
    // Those past the last key too: the index's last separator may be
    // above them, and LevelDB's lookup then asks the filter.
    let mut prober = sink.prober;
    for neighbour in sink.neighbours.rest() {
        prober.probe(&neighbour)?;
    }
    Ok(prober.measured)
}

/// The keys [`measure_fpr`] probes: each of a table's keys with its last
/// byte one higher, waiting until the table's keys (in order) pass them,
/// so that one the table holds is not counted.
#[derive(Default)]
pub(crate) struct Neighbours {
    pending: std::collections::BTreeSet<Vec<u8>>,
    /// The last key given: a key's versions come one after another.
    last: Vec<u8>,
}

impl Neighbours {
    /// The table's next key: `probe` takes each neighbour below it, which
    /// the table does not hold (its first error ends the pass).
    pub(crate) fn key<E>(
        &mut self,
        key: &[u8],
        mut probe: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.last.is_empty() && self.last == key {
            return Ok(());
        }
        while self.pending.first().is_some_and(|n| n.as_slice() < key) {
            if let Some(neighbour) = self.pending.pop_first() {
                probe(&neighbour)?;
            }
        }
        self.pending.remove(key);
        if let Some((&last, rest)) = key.split_last().filter(|(&last, _)| last < 0xff) {
            self.pending.insert([rest, &[last + 1]].concat());
        }
        self.last.clear();
        self.last.extend_from_slice(key);
        Ok(())
    }

    /// The neighbours past the table's last key, in order.
    pub(crate) fn rest(self) -> impl Iterator<Item = Vec<u8>> {
        self.pending.into_iter()
    }
}

/// [`measure_fpr`]'s pass over a LevelDB table's keys.
struct NeighbourSink<'t, 'a, 'p> {
    neighbours: Neighbours,
    prober: NeighbourProber<'t, 'a, 'p>,
    error: Option<Error>,
}

/// [`measure_fpr`]'s probes of the neighbours, as LevelDB's lookup makes them.
struct NeighbourProber<'t, 'a, 'p> {
    table: &'t Table<'a>,
    policy: &'p BloomFilterPolicy,
    key_format: KeyFormat,
    measured: MeasuredFpr,
}

impl NeighbourProber<'_, '_, '_> {
    fn probe(&mut self, neighbour: &[u8]) -> Result<(), Error> {
        if let Probe::Block { may_match, .. } =
            probe(self.table, Some(self.policy), self.key_format, neighbour)?
        {
            self.measured.probed += 1;
            self.measured.passed += u64::from(may_match);
        }
        Ok(())
    }
}

impl FilterSink for NeighbourSink<'_, '_, '_> {
    fn key(&mut self, key: &[u8]) -> ControlFlow<String> {
        let key = match self.prober.key_format {
            KeyFormat::User => key,
            KeyFormat::Internal => user_key(key),
        };
        let prober = &mut self.prober;
        match self
            .neighbours
            .key(key, |neighbour| prober.probe(neighbour))
        {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                self.error = Some(e);
                ControlFlow::Break(String::new())
            }
        }
    }

    fn cut(&mut self, _index: usize) -> ControlFlow<String> {
        ControlFlow::Continue(())
    }
}

/// What LevelDB's table lookup decides for a key before it reads a data block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// The index has no entry >= the key: not in the table.
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

/// LevelDB's `Table::InternalGet` up to the data-block read: seeks the index
/// block as LevelDB does (binary search over its restart points, then entry by
/// entry) for the first separator >= the key (bytewise; for internal keys, the
/// lookup key with the largest sequence number), then asks the table's filter
/// block, read with `policy` (the Bloom policy that wrote it; `None` for a
/// table whose filter this crate cannot read: every key may match). An index
/// that the seek finds corrupt, or whose entry is not a block handle, is the
/// error LevelDB's lookup returns.
///
/// `key` is a user key in both formats: a database's tables filter user keys
/// (LevelDB's `InternalFilterPolicy`), and the probe asks the filter for the
/// user key whatever the format, so that the format and the policy cannot
/// disagree.
pub fn probe(
    table: &Table<'_>,
    policy: Option<&BloomFilterPolicy>,
    key_format: KeyFormat,
    key: &[u8],
) -> Result<Probe, Error> {
    let Some(handle) = index_seek(table, key_format, key)? else {
        return Ok(Probe::PastLastKey);
    };
    let filter = policy.zip(table.filter_block());
    let may_match = filter.is_none_or(|(policy, filter)| {
        FilterBlockReader::for_few_lookups(policy, &filter.block.contents)
            .key_may_match(handle.offset, key)
    });
    Ok(Probe::Block {
        offset: handle.offset,
        may_match,
    })
}

/// Whether the table holds an entry (a value or a deletion) of user key
/// `key` where LevelDB's `Table::InternalGet` looks: in the data block the
/// index picks, at the first entry not before the lookup key. A `Get` that
/// reads this table stops here when it does.
pub fn holds_key(table: &Table<'_>, key_format: KeyFormat, key: &[u8]) -> Result<bool, Error> {
    Ok(entry_type(table, key_format, key)?.is_some())
}

/// The type byte of the entry of user key `key` that LevelDB's
/// `Table::InternalGet` meets (see [`holds_key`]): 1 a value, 0 a deletion
/// (for a table of user keys, always 1); `None` where it meets none.
pub fn entry_type(
    table: &Table<'_>,
    key_format: KeyFormat,
    key: &[u8],
) -> Result<Option<u8>, Error> {
    let Some(handle) = index_seek(table, key_format, key)? else {
        return Ok(None);
    };
    let block = table.read_block(BlockKind::Data, handle)?;
    let mut entries = block.entries();
    let lookup = lookup_key(key_format, key);
    match key_format {
        KeyFormat::User => entries.seek(&lookup, <[u8]>::cmp),
        KeyFormat::Internal => entries.seek(&lookup, compare_internal),
    }
    if let Some(what) = entries.error() {
        return Err(Error::CorruptBlock {
            block: BlockKind::Data,
            offset: handle.offset,
            what,
        });
    }
    if !entries.valid() {
        return Ok(None);
    }
    let found = entries.key();
    Ok(match key_format {
        KeyFormat::User => (found == key).then_some(1),
        KeyFormat::Internal => {
            (found.len() >= 8 && user_key(found) == key).then(|| found[found.len() - 8])
        }
    })
}

/// The key a lookup of user key `key` seeks: for internal keys, with the
/// largest sequence number, so that it sorts before every entry of `key`.
fn lookup_key(key_format: KeyFormat, key: &[u8]) -> Vec<u8> {
    match key_format {
        KeyFormat::User => key.to_vec(),
        KeyFormat::Internal => {
            // kMaxSequenceNumber << 8 | kValueTypeForSeek (1)
            let tag: u64 = ((1u64 << 56) - 1) << 8 | 1;
            [key, &tag.to_le_bytes()[..]].concat()
        }
    }
}

/// The data block LevelDB's index seek picks for `key`; `None` past the
/// last key.
fn index_seek(
    table: &Table<'_>,
    key_format: KeyFormat,
    key: &[u8],
) -> Result<Option<BlockHandle>, Error> {
    let lookup = lookup_key(key_format, key);
    let mut index = table.index_block().entries();
    match key_format {
        KeyFormat::User => index.seek(&lookup, <[u8]>::cmp),
        KeyFormat::Internal => index.seek(&lookup, compare_internal),
    }
    let corrupt = |what| Error::CorruptBlock {
        block: BlockKind::Index,
        offset: table.index_handle().offset,
        what,
    };
    if !index.valid() {
        return match index.error() {
            Some(what) => Err(corrupt(what)),
            None => Ok(None),
        };
    }
    let (handle, _) = BlockHandle::decode(index.value()).ok_or(corrupt(Corruption::NotAHandle))?;
    Ok(Some(handle))
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

#[cfg(test)]
mod tests {
    use super::Neighbours;

    /// A neighbour is probed once the keys pass it, unless the table holds
    /// it; a key ending in 0xff has none; those past the last key are left.
    #[test]
    fn neighbours_are_probed_when_passed_unless_held() {
        let mut neighbours = Neighbours::default();
        let mut probed = Vec::new();
        for key in [&b"a"[..], b"a", b"ab", b"b", b"c\xff", b"d"] {
            neighbours
                .key(key, |n| {
                    probed.push(n.to_vec());
                    Ok::<(), ()>(())
                })
                .unwrap();
        }
        assert_eq!(probed, [&b"ac"[..], b"c"]);
        assert_eq!(neighbours.rest().collect::<Vec<_>>(), [b"e".to_vec()]);
    }

    /// An empty key has no neighbour, and the neighbour of a key ending in
    /// 0xfe is the key ending in 0xff.
    #[test]
    fn an_empty_key_has_no_neighbour() {
        let mut neighbours = Neighbours::default();
        let mut probed = Vec::new();
        for key in [&b""[..], b"", b"x\xfe", b"y"] {
            neighbours
                .key(key, |n| {
                    probed.push(n.to_vec());
                    Ok::<(), ()>(())
                })
                .unwrap();
        }
        assert_eq!(probed, [b"x\xff".to_vec()]);
        assert_eq!(neighbours.rest().collect::<Vec<_>>(), [b"z".to_vec()]);
    }

    /// The probe's first error ends the pass.
    #[test]
    fn a_probe_error_ends_the_pass() {
        let mut neighbours = Neighbours::default();
        neighbours.key(b"a", |_| Ok::<(), u8>(())).unwrap();
        neighbours.key(b"ab", |_| Ok::<(), u8>(())).unwrap();
        assert_eq!(neighbours.key(b"z", |_| Err(7u8)), Err(7));
    }
}
