//! The Bloom filter of LevelDB's util/bloom.cc.
//!
//! A filter is `ceil(max(64, n * bits_per_key) / 8)` bytes of bit array followed
//! by one byte holding k, the number of probes. Each key is hashed once (seed
//! 0xbc9f1d34); probe j sets bit `(h + j * delta) % bits`, with `delta` the hash
//! rotated right by 17 bits and all arithmetic on 32 bits.

use crate::hash::{hash, HashVariant};
use crate::simd::{self, Kernel, LANES};
use crate::FilterPolicy;

const SEED: u32 = 0xbc9f1d34;

/// The name LevelDB >= 1.18 stores in the metaindex (`filter.<name>`).
pub const LEVELDB_NAME: &str = "leveldb.BuiltinBloomFilter2";
/// The name of LevelDB <= 1.17 (signed hash on x86) and of goleveldb (unsigned).
pub const LEVELDB_LEGACY_NAME: &str = "leveldb.BuiltinBloomFilter";
/// The name of RocksDB's legacy block-based filter (signed hash).
pub const ROCKSDB_LEGACY_NAME: &str = "rocksdb.BuiltinBloomFilter";

/// LevelDB's built-in Bloom filter policy, byte for byte.
///
/// [`BloomFilterPolicy::new`] is LevelDB >= 1.18's `NewBloomFilterPolicy`. The
/// other constructors build the filters that older writers left on disk; each
/// pairs a [`HashVariant`] with the policy name that writer used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloomFilterPolicy {
    bits_per_key: usize,
    k: usize,
    variant: HashVariant,
    name: &'static str,
}

impl BloomFilterPolicy {
    /// `leveldb.BuiltinBloomFilter2` with `bits_per_key` bits per key, as
    /// LevelDB's `NewBloomFilterPolicy(bits_per_key)`: k is
    /// `bits_per_key * 0.69` rounded down, clamped to `1..=30`.
    pub fn new(bits_per_key: usize) -> Self {
        let k = ((bits_per_key as f64 * 0.69) as usize).clamp(1, 30);
        BloomFilterPolicy {
            bits_per_key,
            k,
            variant: HashVariant::Unsigned,
            name: LEVELDB_NAME,
        }
    }

    /// `leveldb.BuiltinBloomFilter` as LevelDB <= 1.17 wrote it on x86: signed hash.
    pub fn leveldb_legacy(bits_per_key: usize) -> Self {
        Self::new(bits_per_key)
            .with_hash(HashVariant::Signed)
            .with_name(LEVELDB_LEGACY_NAME)
    }

    /// `leveldb.BuiltinBloomFilter` as goleveldb writes it: unsigned hash.
    pub fn goleveldb(bits_per_key: usize) -> Self {
        Self::new(bits_per_key).with_name(LEVELDB_LEGACY_NAME)
    }

    /// `rocksdb.BuiltinBloomFilter`, RocksDB's legacy block-based filter: signed hash.
    pub fn rocksdb_legacy(bits_per_key: usize) -> Self {
        Self::new(bits_per_key)
            .with_hash(HashVariant::Signed)
            .with_name(ROCKSDB_LEGACY_NAME)
    }

    /// The same policy with another hash variant; the name is unchanged.
    pub fn with_hash(mut self, variant: HashVariant) -> Self {
        self.variant = variant;
        self
    }

    /// The same policy under another name (what [`FilterPolicy::name`] returns,
    /// and so the metaindex key `filter.<name>` a table builder writes).
    pub fn with_name(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// Bits per key, as given.
    pub fn bits_per_key(&self) -> usize {
        self.bits_per_key
    }

    /// Number of probes per key that [`FilterPolicy::create_filter`] writes.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The hash variant.
    pub fn hash_variant(&self) -> HashVariant {
        self.variant
    }
}

impl FilterPolicy for BloomFilterPolicy {
    fn name(&self) -> &str {
        self.name
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        self.create_with(Kernel::detect(), keys, dst);
    }

    #[inline]
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        match BloomFilter::new(filter) {
            Ok(bloom) => bloom.contains_hash(hash(key, SEED, self.variant)),
            Err(answer) => answer,
        }
    }

    fn key_may_match_batch(&self, keys: &[&[u8]], filter: &[u8], out: &mut [bool]) {
        self.batch_with(Kernel::detect(), keys, filter, out);
    }
}

impl BloomFilterPolicy {
    /// `create_filter` on a given kernel.
    fn create_with(&self, kernel: Kernel, keys: &[&[u8]], dst: &mut Vec<u8>) {
        let bits = keys.len().saturating_mul(self.bits_per_key).max(64);
        let bytes = bits.div_ceil(8);
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(self.k as u8);
        let array = &mut dst[start..start + bytes];
        let modulus = Modulus::new(bytes * 8);
        let k = self.k;
        for_each_block(kernel, keys, self.variant, &modulus, k, |block, rows| {
            for (group, rows) in block.chunks(LANES).zip(rows.chunks(k)) {
                for row in rows {
                    for &pos in &row[..group.len()] {
                        array[pos as usize / 8] |= 1 << (pos % 8);
                    }
                }
            }
        });
    }

    /// `key_may_match_batch` on a given kernel.
    fn batch_with(&self, kernel: Kernel, keys: &[&[u8]], filter: &[u8], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer per key");
        match BloomFilter::new(filter) {
            Ok(bloom) => bloom.contains_batch(kernel, keys, self.variant, out),
            Err(answer) => out.fill(answer),
        }
    }
}

/// Calls `f(keys, rows)` for blocks of keys, `rows` holding k rows of
/// positions per group of 16 keys: each block's keys are hashed, then their
/// positions computed, then handed over, so that the SIMD work of a block's
/// groups overlaps. Few keys get a small block (its buffers are zeroed on
/// every call), many a large one.
fn for_each_block(
    kernel: Kernel,
    keys: &[&[u8]],
    variant: HashVariant,
    modulus: &Modulus,
    k: usize,
    f: impl FnMut(&[&[u8]], &[[u32; LANES]]),
) {
    if keys.len() <= 4 * LANES {
        blocks::<30>(kernel, keys, variant, modulus, k, f)
    } else {
        blocks::<96>(kernel, keys, variant, modulus, k, f)
    }
}

/// [`for_each_block`] with blocks of `ROWS` rows of positions (at least 30,
/// one group's rows at k = 30).
fn blocks<const ROWS: usize>(
    kernel: Kernel,
    keys: &[&[u8]],
    variant: HashVariant,
    modulus: &Modulus,
    k: usize,
    mut f: impl FnMut(&[&[u8]], &[[u32; LANES]]),
) {
    debug_assert!(k > 0, "callers handle k = 0");
    let groups = (ROWS / k).max(1);
    let mut hashes = [[0u32; LANES]; ROWS];
    let mut rows = [[0u32; LANES]; ROWS];
    for block in keys.chunks(groups * LANES) {
        let count = block.len().div_ceil(LANES);
        for (hashes, group) in hashes.iter_mut().zip(block.chunks(LANES)) {
            *hashes = simd::hash16(kernel, group, SEED, variant).unwrap_or_else(|| {
                let mut hashes = [0u32; LANES];
                for (h, key) in hashes.iter_mut().zip(group) {
                    *h = hash(key, SEED, variant);
                }
                hashes
            });
        }
        let rows = &mut rows[..count * k];
        if !simd::positions(kernel, &hashes[..count], modulus.bits, rows) {
            scalar_positions(&hashes[..count], modulus, rows);
        }
        f(block, rows);
    }
}

/// The scalar reference for [`simd::positions`].
fn scalar_positions(hashes: &[[u32; LANES]], modulus: &Modulus, rows: &mut [[u32; LANES]]) {
    let k = rows.len() / hashes.len();
    for (group, rows) in hashes.iter().zip(rows.chunks_mut(k)) {
        for (lane, &h) in group.iter().enumerate() {
            let delta = h.rotate_right(17);
            let mut h = h;
            for row in rows.iter_mut() {
                row[lane] = modulus.reduce(h) as u32;
                h = h.wrapping_add(delta);
            }
        }
    }
}

/// A filter's bytes read once for lookups: the bit array, k and the reduction.
struct BloomFilter<'a> {
    array: &'a [u8],
    k: u8,
    modulus: Modulus,
}

impl<'a> BloomFilter<'a> {
    /// The filter, or LevelDB's fixed answer for filters it does not probe:
    /// shorter than 2 bytes, `false`; a k byte above 30, `true`. (LevelDB reads
    /// k as a `char`: bytes >= 0x80 become huge as `size_t`, so every k byte
    /// above 30 is reserved for other encodings.)
    #[inline]
    fn new(filter: &'a [u8]) -> Result<Self, bool> {
        match filter.split_last() {
            Some((&k, array)) if !array.is_empty() => {
                if k > 30 {
                    return Err(true);
                }
                Ok(BloomFilter {
                    array,
                    k,
                    modulus: Modulus::new(array.len() * 8),
                })
            }
            _ => Err(false),
        }
    }

    #[inline]
    fn bit(&self, pos: usize) -> bool {
        self.array[pos / 8] & (1 << (pos % 8)) != 0
    }

    /// LevelDB's `KeyMayMatch` for a key whose Bloom hash is `h`.
    #[inline]
    fn contains_hash(&self, mut h: u32) -> bool {
        let delta = h.rotate_right(17);
        for _ in 0..self.k {
            if !self.bit(self.modulus.reduce(h)) {
                return false;
            }
            h = h.wrapping_add(delta);
        }
        true
    }

    /// Many keys, 16 at a time, probed without branching on the bits so that
    /// the loads of several keys are in flight at once.
    fn contains_batch(
        &self,
        kernel: Kernel,
        keys: &[&[u8]],
        variant: HashVariant,
        out: &mut [bool],
    ) {
        let k = usize::from(self.k);
        if k == 0 {
            // No probe can fail: LevelDB answers true.
            return out.fill(true);
        }
        let mut answers = out.chunks_mut(LANES);
        for_each_block(kernel, keys, variant, &self.modulus, k, |_, rows| {
            for rows in rows.chunks(k) {
                let Some(out) = answers.next() else { return };
                for (lane, answer) in out.iter_mut().enumerate() {
                    *answer = rows
                        .iter()
                        .fold(true, |all, row| all & self.bit(row[lane] as usize));
                }
            }
        });
    }
}

/// `h % bits` as LevelDB computes it, with `h` widened to `size_t`: from 2^32
/// bits on, the position is `h` itself. Below, Lemire's fastmod: with
/// `m = u64::MAX / bits + 1`, `h % bits` is the high 64 bits of
/// `(m * h mod 2^64) * bits`, exactly, for every 32-bit `h` and `bits`; one
/// division per filter instead of one per probe.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Modulus {
    /// The number of bits, or 0 for 2^32 bits and more.
    pub(crate) bits: u64,
    m: u64,
}

impl Modulus {
    #[inline]
    pub(crate) fn new(bits: usize) -> Self {
        match u32::try_from(bits) {
            Ok(bits) => Modulus {
                bits: u64::from(bits),
                m: (u64::MAX / u64::from(bits)).wrapping_add(1),
            },
            Err(_) => Modulus { bits: 0, m: 0 },
        }
    }

    #[inline]
    pub(crate) fn reduce(&self, h: u32) -> usize {
        if self.bits == 0 {
            return h as usize;
        }
        let low = self.m.wrapping_mul(u64::from(h));
        ((u128::from(low) * u128::from(self.bits)) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::{scalar_positions, Modulus, LANES};
    use crate::simd::Kernel;
    use crate::{hash, HashVariant};
    use quickcheck::{QuickCheck, TestResult};

    /// LevelDB's positions: `(h + j * delta) % bits`, h widened to 64 bits.
    fn naive(h: u32, bits: u64, k: usize) -> Vec<usize> {
        let delta = h.rotate_right(17);
        (0..k as u32)
            .map(|j| (u64::from(h.wrapping_add(j.wrapping_mul(delta))) % bits) as usize)
            .collect()
    }

    #[test]
    fn reduction_matches_leveldb_for_any_filter_size() {
        fn prop(h: u32, bytes: u64) -> TestResult {
            // Every size from 64 bits to past 2^32 bits (where LevelDB's
            // position is h itself).
            let bits = 64 + (bytes % (1 << 30)) * 8;
            let modulus = Modulus::new(bits as usize);
            let delta = h.rotate_right(17);
            let fast: Vec<usize> = (0..30u32)
                .map(|j| modulus.reduce(h.wrapping_add(j.wrapping_mul(delta))))
                .collect();
            TestResult::from_bool(fast == naive(h, bits, 30))
        }
        QuickCheck::new()
            .tests(20_000)
            .quickcheck(prop as fn(u32, u64) -> TestResult);
        for bits in [
            64,
            72,
            1 << 20,
            (1 << 32) - 8,
            1 << 32,
            (1 << 32) + 8,
            1 << 40,
        ] {
            let modulus = Modulus::new(bits as usize);
            for h in [
                0,
                1,
                0x7fff_ffff,
                0x8000_0000,
                0xdead_beef,
                u32::MAX - 1,
                u32::MAX,
            ] {
                assert_eq!(
                    modulus.reduce(h),
                    (u64::from(h) % bits) as usize,
                    "h {h:#x} bits {bits}"
                );
            }
        }
    }

    /// The kernel this CPU runs against the scalar one and LevelDB's formula:
    /// keys of one length (the SIMD hash) and of mixed lengths, both variants.
    #[test]
    fn kernels_agree_on_positions() {
        fn prop(keys: Vec<Vec<u8>>, same_len: u8, bytes: u32, signed: bool) -> TestResult {
            let mut keys: Vec<Vec<u8>> = keys.into_iter().take(LANES).collect();
            if same_len.is_multiple_of(2) {
                let len = usize::from(same_len % 40);
                for k in &mut keys {
                    k.resize(len, 0x9c);
                }
            }
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let variant = if signed {
                HashVariant::Signed
            } else {
                HashVariant::Unsigned
            };
            let bits = 64 + u64::from(bytes % (1 << 27)) * 8;
            let modulus = Modulus::new(bits as usize);
            let kernel = Kernel::detect();
            let mut hashes = [[0u32; LANES]; 1];
            for (h, key) in hashes[0].iter_mut().zip(&refs) {
                *h = hash(key, 0xbc9f1d34, variant);
            }
            if let Some(simd) = crate::simd::hash16(kernel, &refs, 0xbc9f1d34, variant) {
                if simd[..refs.len()] != hashes[0][..refs.len()] {
                    return TestResult::failed();
                }
            }
            let mut want = [[0u32; LANES]; 30];
            scalar_positions(&hashes, &modulus, &mut want);
            for (lane, key) in refs.iter().enumerate() {
                let naive = naive(hash(key, 0xbc9f1d34, variant), bits, 30);
                if (0..30).any(|j| want[j][lane] as usize != naive[j]) {
                    return TestResult::failed();
                }
            }
            let mut got = [[0u32; LANES]; 30];
            if !crate::simd::positions(kernel, &hashes, bits, &mut got) {
                return TestResult::from_bool(kernel == Kernel::Scalar || bits > 1 << 31);
            }
            TestResult::from_bool((0..30).all(|j| got[j][..refs.len()] == want[j][..refs.len()]))
        }
        QuickCheck::new()
            .tests(5_000)
            .quickcheck(prop as fn(Vec<Vec<u8>>, u8, u32, bool) -> TestResult);
    }

    /// The SIMD hash on 16 keys of every length, and of mixed lengths, tails
    /// with bytes >= 0x80, both variants.
    #[test]
    fn simd_hash_matches_scalar_on_every_length() {
        let kernel = Kernel::detect();
        for first in 0..=70usize {
            let keys: Vec<Vec<u8>> = (0..LANES)
                .map(|i| {
                    (0..(first + i * 7) % 71)
                        .map(|j| (i * 29 + j * 83 + 0x7e) as u8)
                        .collect()
                })
                .collect();
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            for variant in [HashVariant::Unsigned, HashVariant::Signed] {
                for n in [1, 5, LANES] {
                    if let Some(hashes) =
                        crate::simd::hash16(kernel, &refs[..n], 0xbc9f1d34, variant)
                    {
                        for (h, key) in hashes.iter().zip(&refs[..n]) {
                            assert_eq!(
                                *h,
                                hash(key, 0xbc9f1d34, variant),
                                "{key:02x?} {variant:?}"
                            );
                        }
                    }
                }
            }
        }
        let kernel = Kernel::detect();
        for len in 0..=70usize {
            let keys: Vec<Vec<u8>> = (0..LANES)
                .map(|i| (0..len).map(|j| (i * 37 + j * 101 + 0x70) as u8).collect())
                .collect();
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            for variant in [HashVariant::Unsigned, HashVariant::Signed] {
                let simd = crate::simd::hash16(kernel, &refs, 0xbc9f1d34, variant);
                assert_eq!(simd.is_some(), kernel == Kernel::Avx512, "len {len}");
                if let Some(hashes) = simd {
                    for (h, key) in hashes.iter().zip(&refs) {
                        assert_eq!(*h, hash(key, 0xbc9f1d34, variant), "len {len} {variant:?}");
                    }
                }
            }
        }
    }

    /// Whole filters and batch answers: the detected kernel and the scalar
    /// one give the same bytes and the same answers as one key at a time.
    #[test]
    fn kernels_agree_on_filters_and_batches() {
        use crate::{BloomFilterPolicy, FilterPolicy};
        fn prop(keys: Vec<Vec<u8>>, probes: Vec<Vec<u8>>, bits: u8, signed: bool) -> bool {
            let variant = if signed {
                HashVariant::Signed
            } else {
                HashVariant::Unsigned
            };
            let policy = BloomFilterPolicy::new(usize::from(bits % 51)).with_hash(variant);
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let (mut simd, mut scalar) = (vec![7], vec![7]);
            policy.create_with(Kernel::detect(), &refs, &mut simd);
            policy.create_with(Kernel::Scalar, &refs, &mut scalar);
            let probes: Vec<&[u8]> = probes
                .iter()
                .map(Vec::as_slice)
                .chain(refs.iter().copied())
                .collect();
            let one_by_one: Vec<bool> = probes
                .iter()
                .map(|p| policy.key_may_match(p, &simd[1..]))
                .collect();
            let (mut a, mut b) = (vec![false; probes.len()], vec![false; probes.len()]);
            policy.batch_with(Kernel::detect(), &probes, &simd[1..], &mut a);
            policy.batch_with(Kernel::Scalar, &probes, &simd[1..], &mut b);
            simd == scalar && a == one_by_one && b == one_by_one
        }
        QuickCheck::new()
            .tests(2_000)
            .quickcheck(prop as fn(Vec<Vec<u8>>, Vec<Vec<u8>>, u8, bool) -> bool);
    }

    /// A filter past the L2 cache (625 KB): the same bytes as LevelDB's
    /// formula on every kernel, the same answers batched or not.
    #[test]
    fn large_filters_agree_with_the_formula() {
        use crate::{BloomFilterPolicy, FilterPolicy};
        let keys: Vec<Vec<u8>> = (0u32..100_000)
            .map(|i| [i.to_le_bytes(), (i * 7).to_le_bytes(), [0x80, 1, 2, 0xff]].concat())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        for variant in [HashVariant::Unsigned, HashVariant::Signed] {
            let policy = BloomFilterPolicy::new(50).with_hash(variant);
            let bits = 100_000 * 50;
            let mut want = vec![0u8; bits / 8];
            for key in &refs {
                for pos in naive(hash(key, 0xbc9f1d34, variant), bits as u64, policy.k()) {
                    want[pos / 8] |= 1 << (pos % 8);
                }
            }
            want.push(policy.k() as u8);
            for kernel in [Kernel::detect(), Kernel::Scalar] {
                let mut filter = Vec::new();
                policy.create_with(kernel, &refs, &mut filter);
                assert!(filter == want, "{kernel:?} {variant:?}");
                let probes: Vec<&[u8]> = refs
                    .iter()
                    .step_by(50)
                    .copied()
                    .chain(refs.iter().map(|k| &k[1..]))
                    .collect();
                let mut batch = vec![false; probes.len()];
                policy.batch_with(kernel, &probes, &filter, &mut batch);
                for (probe, answer) in probes.iter().zip(&batch) {
                    assert_eq!(*answer, policy.key_may_match(probe, &filter));
                }
            }
        }
    }
}
