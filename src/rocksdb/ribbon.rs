//! Standard128Ribbon, built byte for byte as RocksDB's
//! `Standard128RibbonBitsBuilder` builds it (table/block_based/filter_policy.cc,
//! util/ribbon_alg.h, util/ribbon_impl.h, util/ribbon_config.cc): each key's 64-bit hash is a row of a linear system
//! over GF(2), 128 coefficients wide from a start slot, whose solution is
//! stored column by column; a key may match where its row times the
//! solution gives its expected result bits.
//!
//! A filter is a function of the set of hashes, the first of them (which
//! picks the first seed tried and a rounding bias), the number of slots
//! (from the count) and the length (from the bits per key): the order of
//! the other hashes does not change a byte.
//!
//! ```
//! use leveldb_filter::rocksdb::{FilterBits, RibbonBuilder};
//! let keys: Vec<Vec<u8>> = (0..1000u32).map(|i| i.to_le_bytes().to_vec()).collect();
//! let filter = RibbonBuilder::new(10.0).build(keys.iter().map(Vec::as_slice));
//! assert_eq!(filter.len(), 885); // 1,024 slots, 7 or 6 columns each
//! let bits = FilterBits::parse(&filter);
//! assert_eq!(bits.implementation(), "Standard128Ribbon");
//! assert!(keys.iter().all(|key| bits.may_match(key)));
//! ```

use super::builders::{
    distinct, fast_local_build, fast_local_len, fast_local_probes, millibits, sanitized,
};
use super::xxph3::hash64;
use crate::arch::{prefetch, Kernel, Work};

/// Slots per block, the width of a coefficient row.
const COEFF_BITS: usize = 128;

/// Entries past which RocksDB builds a Bloom filter (`kMaxRibbonEntries`).
const MAX_ENTRIES: usize = 950_000_000;

/// Seeds tried before a Bloom filter is built instead.
const SEEDS: u32 = 256;

/// One seed's hashing of a key hash into a row of the system
/// (`StandardHasher` over `StandardRehasherAdapter`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hasher {
    raw_seed: u32,
    starts: u64,
}

/// A row: its start slot, 128 coefficients from there (the first always
/// 1), and the 32 result bits a key expects.
pub(crate) struct Row {
    pub(crate) start: usize,
    pub(crate) coeffs: u128,
    pub(crate) result: u32,
}

impl Hasher {
    /// The hasher of ordinal seed `seed` (0 to 255, what the filter
    /// stores) for `slots` slots, `slots - 127` of which can start a row.
    pub(crate) fn new(seed: u32, slots: usize) -> Hasher {
        let mut raw = u64::from(seed).wrapping_mul(0xc782_19a2_3eea_dd03);
        raw ^= (raw & 0xf0f0_f0f0_f0f0_f0f0) >> 4;
        Hasher {
            raw_seed: raw as u32,
            starts: (slots - (COEFF_BITS - 1)) as u64,
        }
    }

    /// The row of a key hashed (by XXPH3) to `key_hash`.
    pub(crate) fn row(&self, key_hash: u64) -> Row {
        let h = (key_hash ^ u64::from(self.raw_seed)).wrapping_mul(0x6193_d459_236a_3a0d);
        let a = h.wrapping_mul(0xc28f_8282_2b65_0bed);
        Row {
            start: ((u128::from(h) * u128::from(self.starts)) >> 64) as usize,
            coeffs: ((u128::from(a) << 64) ^ u128::from(a ^ 0xc367_844a_6e52_731d)) | 1,
            result: a.swap_bytes() as u32,
        }
    }
}

/// The parity of a row's bits: its halves' XOR's, one 64-bit population
/// count (or, without the instruction, a fold LLVM turns into the parity
/// flag's few steps).
#[inline(always)]
fn parity(v: u128) -> u32 {
    ((v as u64) ^ (v >> 64) as u64).count_ones() & 1
}

/// How a solution of `blocks` blocks in `data_len` bytes lays out its
/// columns (`InternalConfigure`): every block has `upper_cols` columns but
/// the first `upper_start_block`, which have one fewer; at most 32.
pub(crate) fn layout(blocks: usize, data_len: usize) -> (usize, usize) {
    let segments = data_len / 16;
    if blocks == 0 {
        return (0, 0);
    }
    let upper_cols = segments.div_ceil(blocks);
    if upper_cols > 32 {
        // The bytes past 32 columns a block are never read.
        return (32, 0);
    }
    (upper_cols, upper_cols * blocks - segments)
}

/// `BloomMath::StandardFpRate`.
fn standard_fp_rate(bits_per_key: f64, probes: u32) -> f64 {
    let k = f64::from(probes);
    (1.0 - (-k / bits_per_key).exp()).powf(k)
}

/// `BloomMath::CacheLocalFpRate` for 512-bit cache lines: the rate of a
/// line one standard deviation fuller and one emptier than the mean,
/// averaged.
fn cache_local_fp_rate(bits_per_key: f64, probes: u32) -> f64 {
    if bits_per_key <= 0.0 {
        return 1.0;
    }
    let keys_per_line = 512.0 / bits_per_key;
    let sd = keys_per_line.sqrt();
    let crowded = standard_fp_rate(512.0 / (keys_per_line + sd), probes);
    let uncrowded = standard_fp_rate(512.0 / (keys_per_line - sd), probes);
    (crowded + uncrowded) / 2.0
}

/// `BandingConfigHelperData<kOneIn20, 128, false>::kKnownToAddByPow2`:
/// the keys that `2^i` slots take with a 1 in 20 chance of no seed.
const KNOWN_TO_ADD: [f64; 18] = [
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 248.851, 499.532, 1001.26, 2003.97, 4005.59, 8000.39,
    15966.6, 31828.1, 63447.3, 126506.0,
];

/// `FactorForLarge`: slots per key past the table, growing with log2.
fn factor_for_large(log2: f64) -> f64 {
    let last = KNOWN_TO_ADD.len() - 1;
    let final_known = (1u32 << last) as f64 / KNOWN_TO_ADD[last];
    final_known - last as f64 * 0.0038 + log2 * 0.0038
}

/// `GetNumToAddForPow2`.
fn keys_for_pow2(log2: u32) -> f64 {
    match KNOWN_TO_ADD.get(log2 as usize) {
        Some(&known) => known,
        None => (1u64 << log2) as f64 / factor_for_large(f64::from(log2)),
    }
}

/// `BandingConfigHelper1MaybeSupported::GetNumSlots`: slots for `n` keys,
/// interpolated between the powers of two whose key counts bracket it.
fn slots_for(n: u32) -> u32 {
    if n == 0 {
        return 0;
    }
    // RocksDB's constant, not quite log2(e): it only picks the bracket.
    #[allow(clippy::approx_constant)]
    let log2 = f64::from(n).ln() * 1.442_695_040_9;
    let mut at = (log2 + 0.5) as u32;
    let mut lower = keys_for_pow2(at);
    if at == 0 || lower == 0.0 {
        return 2 * COEFF_BITS as u32;
    }
    let upper;
    if f64::from(n) < lower {
        upper = lower;
        at -= 1;
        lower = keys_for_pow2(at);
    } else {
        upper = keys_for_pow2(at + 1);
    }
    let portion = (f64::from(n) - lower) / (upper - lower);
    let lower_slots = (1u64 << at) as f64;
    (portion * lower_slots + lower_slots + 0.999_999_999) as u32
}

/// The slots of a filter of `n` entries: rounded up to whole blocks, at
/// least two (`NumEntriesToNumSlots`, `RoundUpNumSlots`).
pub(crate) fn num_slots(n: u32) -> usize {
    let slots = (slots_for(n) as usize).next_multiple_of(COEFF_BITS);
    slots.max(2 * COEFF_BITS)
}

/// `GetBytesForOneInFpRate`: the solution's bytes for `slots` slots and a
/// false-positive rate of 1 in `one_in`: `log2(one_in)` columns, the blocks
/// from `upper_start_block` on one more, in the proportion that makes the
/// rate, the cut nudged by `bias` (the first hash's upper 32 bits).
fn solution_bytes(slots: usize, one_in: f64, bias: u32) -> usize {
    let fp = 1.0 / one_in;
    if !(one_in > 1.0 && fp < 1.0) {
        return 16;
    }
    if one_in > f64::from(u32::MAX) {
        return slots * 4;
    }
    let lower_cols = (one_in as u32).ilog2() as i32;
    let lower_fp = 2f64.powi(-lower_cols);
    let upper_fp = 2f64.powi(-(lower_cols + 1));
    let lower_portion = (fp - upper_fp) / (lower_fp - upper_fp);
    let bias = (f64::from(bias) + 0.5) / 4_294_967_296.0;
    let starts = (slots - (COEFF_BITS - 1)) as f64;
    let upper_start_block = ((lower_portion * starts + bias) / COEFF_BITS as f64) as usize;
    let blocks = slots / COEFF_BITS;
    let segments = blocks * lower_cols as usize + (blocks - upper_start_block);
    segments * 16
}

/// The false-positive rate RocksDB aims at for `bits_per_key`, as 1 in
/// this many: FastLocalBloom's at those bits per key.
fn one_in_for(bits_per_key: f64) -> f64 {
    let bits = sanitized(bits_per_key);
    1.0 / cache_local_fp_rate(bits, fast_local_probes(millibits(bits_per_key)))
}

/// [`one_in_for`] at each thousandth of a bit per key from 1 to 100, with
/// the thousandths, in the order of the aims (which falls a little where
/// another probe count starts), computed once: the aims a stored size is
/// searched among.
fn aims() -> &'static [(f64, u32)] {
    static TABLE: std::sync::OnceLock<Vec<(f64, u32)>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut aims: Vec<(f64, u32)> = (1000..=100_000)
            .map(|m| (one_in_for(f64::from(m) / 1000.0), m))
            .collect();
        aims.sort_by(|a, b| a.0.total_cmp(&b.0));
        aims
    })
}

/// The bits per key (smallest and largest, in thousandths) at which RocksDB
/// sizes a Ribbon filter of `slots` slots whose first entry is `first` to
/// `len` bytes, metadata included; `None` where none does (a size from the
/// allocator, `optimize_filters_for_memory`, or another writer's). The size
/// grows with the aim: the aims that give it are found by bisection.
pub(crate) fn sized_by(first: u64, slots: usize, len: usize) -> Option<(f64, f64)> {
    let aims = aims();
    let bytes = |one_in: f64| solution_bytes(slots, one_in, (first >> 32) as u32) + 5;
    let lo = aims.partition_point(|&(one_in, _)| bytes(one_in) < len);
    let hi = aims.partition_point(|&(one_in, _)| bytes(one_in) <= len);
    let fits = aims[lo..hi].iter().map(|&(_, m)| m);
    let (min, max) = fits.fold(None, |range, m| match range {
        None => Some((m, m)),
        Some((a, b)) => Some((m.min(a), m.max(b))),
    })?;
    Some((f64::from(min) / 1000.0, f64::from(max) / 1000.0))
}

/// RocksDB's Standard128Ribbon filter (`NewRibbonFilterPolicy`), byte for
/// byte, with its fallbacks to FastLocalBloom: for over 950 million keys,
/// for fewer than 1,024 slots where Bloom is smaller, and where none of 256
/// seeds solves the system.
///
/// It is a [`FilterPolicy`](crate::FilterPolicy) too (as the other
/// builders are), for an engine that writes RocksDB-compatible tables and
/// holds its policy as `Arc<dyn FilterPolicy>`: `create_filter` appends the
/// filter of the keys, `key_may_match` reads any full filter as RocksDB
/// reads it, and the name is the one RocksDB stores (after `fullfilter.`
/// in the metaindex).
///
/// ```
/// use std::sync::Arc;
/// use leveldb_filter::FilterPolicy;
/// use leveldb_filter::rocksdb::RibbonBuilder;
///
/// let policy: Arc<dyn FilterPolicy> = Arc::new(RibbonBuilder::new(10.0));
/// let keys: Vec<Vec<u8>> = (0..5000u32).map(|i| format!("key{i}").into_bytes()).collect();
/// let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
/// let mut filter = Vec::new();
/// policy.create_filter(&keys, &mut filter);
/// assert_eq!(policy.name(), "rocksdb.BuiltinBloomFilter");
/// assert_eq!(filter[filter.len() - 5], 0xfe); // Ribbon's marker
/// assert!(keys.iter().all(|key| policy.key_may_match(key, &filter)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RibbonBuilder {
    millibits_per_key: u32,
    one_in: f64,
}

impl RibbonBuilder {
    /// As `NewRibbonFilterPolicy(bits_per_key)` builds where it builds
    /// Ribbon (below its `bloom_before_level`: all but a flush by default):
    /// the false-positive rate of FastLocalBloom at these bits per key, in
    /// about 30% less space. Bits per key as RocksDB sanitizes them: none
    /// below 0.5, then at least 1 and below 100.
    pub fn new(bits_per_key: f64) -> Self {
        RibbonBuilder {
            millibits_per_key: millibits(bits_per_key),
            one_in: one_in_for(bits_per_key),
        }
    }

    /// Bits per key in thousandths, as RocksDB rounds them (those of the
    /// Bloom filter it falls back to).
    pub fn millibits_per_key(&self) -> u32 {
        self.millibits_per_key
    }

    /// The false-positive rate aimed at, as 1 in this many.
    pub fn one_in_fp_rate(&self) -> f64 {
        self.one_in
    }

    /// The filter's bytes (the solution, or a Bloom filter, then 5 bytes of
    /// metadata) for `keys` in the order the table adds them (a key whose
    /// hash equals the one before is added once); empty for no keys, or a
    /// policy of under half a bit per key, for which RocksDB writes none.
    pub fn build<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> Vec<u8> {
        self.build_hashes(&distinct(keys, hash64))
    }

    /// [`build`](Self::build) from the entries RocksDB's builder holds:
    /// XXPH3 hashes, none equal to the one before it.
    pub(crate) fn build_hashes(&self, hashes: &[u64]) -> Vec<u8> {
        let Some(&first) = hashes.first() else {
            return Vec::new();
        };
        if self.millibits_per_key == 0 {
            return Vec::new();
        }
        let bloom = || fast_local_build(self.millibits_per_key, hashes);
        if hashes.len() > MAX_ENTRIES {
            return bloom();
        }
        let slots = num_slots(hashes.len() as u32);
        let len = solution_bytes(slots, self.one_in, (first >> 32) as u32) + 5;
        let bloom_len = fast_local_len(hashes.len() as u64, self.millibits_per_key) as usize + 5;
        if slots < 1024 && bloom_len < len {
            return bloom();
        }
        solve(hashes, slots, len).unwrap_or_else(bloom)
    }
}

/// The filter of `hashes` in `slots` slots and `len` bytes (metadata
/// included), by the first seed from the first hash's low byte on that
/// solves the system; `None` where none of 256 does.
pub(crate) fn solve(hashes: &[u64], slots: usize, len: usize) -> Option<Vec<u8>> {
    let first = *hashes.first()?;
    let mut banding = Banding::new(slots);
    let start = first as u32 & 0xff;
    let mut sorted = Vec::new();
    let seed = (0..SEEDS).map(|i| (start + i) % SEEDS).find(|&seed| {
        if seed != start {
            banding.clear();
        }
        let hasher = Hasher::new(seed, slots);
        if hashes.len() < SORT_FROM {
            return banding.add_all(hasher, hashes);
        }
        by_block(hasher, hashes, slots / COEFF_BITS, &mut sorted);
        banding.add_all(hasher, &sorted)
    })?;
    let mut filter = vec![0; len];
    let (solution, meta) = filter.split_at_mut(len - 5);
    Kernel::for_work(Work::Create(hashes.len())).with_popcnt(|| banding.back_substitute(solution));
    let blocks = (slots / COEFF_BITS) as u32;
    meta[0] = 0xfe;
    meta[1] = seed as u8;
    meta[2..].copy_from_slice(&blocks.to_le_bytes()[..3]);
    Some(filter)
}

/// Keys from which a system's rows are added in the order of their start
/// blocks: where the slots outgrow the caches, rows in hash order reach for
/// a slot out of cache each (the solution does not depend on the order in
/// which rows are added, only on their set).
const SORT_FROM: usize = 1 << 15;

/// `hashes` into `out` in the order of their rows' start blocks under
/// `hasher` (a counting sort), for a system of `blocks` blocks.
fn by_block(hasher: Hasher, hashes: &[u64], blocks: usize, out: &mut Vec<u64>) {
    let block = |h: u64| (hasher.row(h).start / COEFF_BITS).min(blocks - 1);
    let mut ends = vec![0usize; blocks];
    for &h in hashes {
        ends[block(h)] += 1;
    }
    let mut total = 0;
    for end in &mut ends {
        total += *end;
        *end = total - *end;
    }
    out.clear();
    out.resize(hashes.len(), 0);
    for &h in hashes {
        let at = &mut ends[block(h)];
        out[*at] = h;
        *at += 1;
    }
}

/// The system in echelon form as rows are added (`StandardBanding`): each
/// slot holds no row, or one whose first coefficient is at that slot.
struct Banding {
    coeffs: Vec<u128>,
    results: Vec<u32>,
}

impl Banding {
    fn new(slots: usize) -> Banding {
        Banding {
            coeffs: vec![0; slots],
            results: vec![0; slots],
        }
    }

    /// Empties the system, for another seed.
    fn clear(&mut self) {
        self.coeffs.fill(0);
        self.results.fill(0);
    }

    /// Adds every hash's row (`BandingAddRange`) to an empty system: false
    /// at the first row that contradicts the others.
    fn add_all(&mut self, hasher: Hasher, hashes: &[u64]) -> bool {
        let Some((&first, rest)) = hashes.split_first() else {
            return true;
        };
        // Each row's slot is asked for while the row before it is added:
        // past the caches, the system's slots are where its time goes.
        let mut row = hasher.row(first);
        for &h in rest {
            let next = hasher.row(h);
            prefetch(&self.coeffs, next.start);
            prefetch(&self.results, next.start);
            if !self.add(row) {
                return false;
            }
            row = next;
        }
        self.add(row)
    }

    /// `BandingAdd`: the row reduced by the rows at its leading slots until
    /// it leads at an empty slot (stored), or vanishes: consistent only
    /// where its 32 result bits vanish too (a repeated key).
    fn add(&mut self, row: Row) -> bool {
        let (mut at, mut coeffs, mut result) = (row.start, row.coeffs, row.result);
        loop {
            let stored = self.coeffs[at];
            if stored == 0 {
                self.coeffs[at] = coeffs;
                self.results[at] = result;
                return true;
            }
            coeffs ^= stored;
            result ^= self.results[at];
            if coeffs == 0 {
                return result == 0;
            }
            let skip = coeffs.trailing_zeros();
            at += skip as usize;
            coeffs >>= skip;
        }
    }

    /// `InterleavedBackSubst`: the solution, from the last slot to the
    /// first, written block by block into `out`, each block's columns as
    /// 16-byte segments (bit `k` of a segment: slot `k` of the block).
    #[inline(always)]
    fn back_substitute(&self, out: &mut [u8]) {
        let blocks = self.coeffs.len() / COEFF_BITS;
        let (upper_cols, upper_start_block) = layout(blocks, out.len());
        let mut state = [0u128; 32];
        let mut segment = upper_cols * blocks - upper_start_block;
        for block in (0..blocks).rev() {
            let cols = upper_cols - usize::from(block < upper_start_block);
            let slots = block * COEFF_BITS..(block + 1) * COEFF_BITS;
            for (&coeffs, &result) in self.coeffs[slots.clone()]
                .iter()
                .zip(&self.results[slots])
                .rev()
            {
                for (j, column) in state[..cols].iter_mut().enumerate() {
                    let shifted = *column << 1;
                    let bit = (parity(shifted & coeffs) ^ (result >> j)) & 1;
                    *column = shifted | u128::from(bit);
                }
            }
            segment -= cols;
            for (j, column) in state[..cols].iter().enumerate() {
                let at = 16 * (segment + j);
                out[at..at + 16].copy_from_slice(&column.to_le_bytes());
            }
        }
    }
}

/// `Standard128RibbonBitsReader::MayMatch` of one key against a solution
/// of `blocks` blocks by ordinal seed `seed`.
#[inline(always)]
pub(crate) fn single(data: &[u8], seed: u8, blocks: u32, key: &[u8]) -> bool {
    RibbonReader::new(data, seed, blocks).may_match(hash64(key))
}

/// `Standard128RibbonBitsReader::MayMatch` over a solution: the key's
/// 128-bit coefficient row against the solution's columns at its start;
/// each column's parity must equal a bit of the key's expected result.
/// Every column is computed and the answer taken once (RocksDB stops at
/// the first column that differs, a branch an absent key mispredicts).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RibbonReader<'a> {
    data: &'a [u8],
    hasher: Hasher,
    upper_cols: usize,
    upper_start_block: usize,
}

impl<'a> RibbonReader<'a> {
    /// The reader of a solution of `blocks` blocks by ordinal seed `seed`.
    #[inline]
    pub(crate) fn new(data: &'a [u8], seed: u8, blocks: u32) -> Self {
        let blocks = blocks.max(2) as usize;
        let (upper_cols, upper_start_block) = layout(blocks, data.len());
        RibbonReader {
            data,
            hasher: Hasher::new(u32::from(seed), blocks * COEFF_BITS),
            upper_cols,
            upper_start_block,
        }
    }

    /// The columns of a block, and its first segment.
    #[inline(always)]
    fn block(&self, block: usize) -> (usize, usize) {
        let cols = self.upper_cols - usize::from(block < self.upper_start_block);
        let first = block * self.upper_cols - block.min(self.upper_start_block);
        (cols, first)
    }

    /// The byte offset of the first segment a key hashed to `h` reads, for
    /// a batch to ask for ahead.
    #[inline]
    pub(crate) fn segment_at(&self, h: u64) -> usize {
        16 * self.block(self.hasher.row(h).start / COEFF_BITS).1
    }

    /// Whether a key hashed (by XXPH3) to `h` may be in the filter; "may
    /// match" for a solution shorter than its layout (RocksDB would read
    /// past it).
    #[inline(always)]
    pub(crate) fn may_match(&self, h: u64) -> bool {
        if self.upper_cols == 0 {
            return true;
        }
        let row = self.hasher.row(h);
        let (block, bit) = (row.start / COEFF_BITS, (row.start % COEFF_BITS) as u32);
        let (cols, first) = self.block(block);
        // A row that starts a block reads its own block's columns; one
        // that starts inside reads on into the next block's.
        let (high, high_mask) = match bit {
            0 => (0, 0),
            _ => (cols, row.coeffs >> (COEFF_BITS as u32 - bit)),
        };
        let low_mask = row.coeffs << bit;
        let Some(segments) = self.data.get(16 * first..16 * (first + cols + high)) else {
            return true;
        };
        let segment = |i: usize| {
            let bytes: [u8; 16] = segments[16 * i..16 * i + 16].try_into().unwrap_or([0; 16]);
            u128::from_le_bytes(bytes)
        };
        let mut parities = 0u64;
        for i in 0..cols {
            let v = (segment(i) & low_mask) ^ (segment(high + i) & high_mask);
            parities |= u64::from(parity(v)) << i;
        }
        (parities ^ u64::from(row.result)) & ((1u64 << cols) - 1) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`sized_by`] bisects the aims: the size must grow with the aim.
    #[test]
    fn the_size_grows_with_the_aim() {
        for slots in [256, 1024, 10368, 1 << 20] {
            for bias in [0, u32::MAX] {
                let sizes: Vec<usize> = aims()
                    .iter()
                    .map(|&(one_in, _)| solution_bytes(slots, one_in, bias))
                    .collect();
                assert!(sizes.windows(2).all(|w| w[0] <= w[1]), "{slots} slots");
            }
        }
    }

    /// The sizes RocksDB 7.8.3 gave (its `CalculateSpace`, 10 bits per key,
    /// no first entry): [`sized_by`] finds 10 among the bits per key that
    /// give each.
    #[test]
    fn sizes_are_traced_back_to_their_bits_per_key() {
        for (n, len) in [
            (181, 229),
            (300, 341),
            (1000, 885),
            (2087, 1861),
            (10_000, 8805),
        ] {
            let slots = num_slots(n);
            let (lo, hi) = sized_by(0, slots, len).expect("a size RocksDB gives");
            assert!(lo <= 10.0 && 10.0 <= hi, "{n} keys: {lo}..{hi}");
            assert_eq!(solution_bytes(slots, one_in_for(10.0), 0) + 5, len);
        }
    }
}
