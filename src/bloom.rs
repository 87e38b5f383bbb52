//! The Bloom filter of LevelDB's util/bloom.cc.
//!
//! A filter is `ceil(max(64, n * bits_per_key) / 8)` bytes of bit array followed
//! by one byte holding k, the number of probes. Each key is hashed once (seed
//! 0xbc9f1d34); probe j sets bit `(h + j * delta) % bits`, with `delta` the hash
//! rotated right by 17 bits and all arithmetic on 32 bits.

use crate::hash::{hash, HashVariant};
use crate::simd::{self, Kernel};
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
///
/// With AVX-512, `create_filter` and `key_may_match_batch` work on windows of
/// up to 4096 keys on the stack: about 42 KiB for creating, 70 KiB for a
/// batch of 256 keys or more.
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
        self.single_with(Kernel::detect(), key, filter)
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
        if simd::insert(kernel, keys, self.variant, self.k, array) {
            return;
        }
        let modulus = Modulus::new(bytes * 8);
        // Eight hashes first, then their bits: eight independent chains of
        // multiplies in a row keep the core busier than one at a time.
        let mut hashes = [0u32; 8];
        for keys in keys.chunks(8) {
            for (h, key) in hashes.iter_mut().zip(keys) {
                *h = hash(key, SEED, self.variant);
            }
            for &h in &hashes[..keys.len()] {
                set_bits(array, modulus, self.k, h);
            }
        }
    }

    /// Sets keys' bits one at a time in a bit array of `bytes` bytes, as
    /// [`create_filter`](FilterPolicy::create_filter) sets them for a filter of
    /// that size: for checking a stored filter without holding its keys.
    pub(crate) fn bit_setter(&self, bytes: usize) -> BitSetter {
        BitSetter {
            modulus: Modulus::new(bytes.saturating_mul(8)),
            k: self.k,
            variant: self.variant,
        }
    }

    /// `key_may_match` on a given kernel.
    #[inline]
    fn single_with(&self, kernel: Kernel, key: &[u8], filter: &[u8]) -> bool {
        simd::key_may_match(
            kernel,
            key,
            self.variant,
            filter,
            || match BloomFilter::new(filter) {
                Ok(bloom) => bloom.contains_hash(hash(key, SEED, self.variant)),
                Err(answer) => answer,
            },
        )
    }

    /// `key_may_match_batch` on a given kernel.
    fn batch_with(&self, kernel: Kernel, keys: &[&[u8]], filter: &[u8], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer per key");
        // A few keys are answered faster one at a time: a batch's groups of
        // 16 cost as much for one key as for 16.
        if keys.len() < FEW_FOR_BATCH {
            for (key, answer) in keys.iter().zip(out) {
                *answer = self.single_with(kernel, key, filter);
            }
            return;
        }
        match BloomFilter::new(filter) {
            Ok(bloom) => bloom.contains_batch(kernel, keys, self.variant, out),
            Err(answer) => out.fill(answer),
        }
    }
}

/// A filter's bits set key by key ([`BloomFilterPolicy::bit_setter`]).
pub(crate) struct BitSetter {
    modulus: Modulus,
    k: usize,
    variant: HashVariant,
}

impl BitSetter {
    /// Sets `key`'s k bits in `array`, which has the size given to
    /// [`BloomFilterPolicy::bit_setter`].
    pub(crate) fn add(&self, array: &mut [u8], key: &[u8]) {
        set_bits(array, self.modulus, self.k, hash(key, SEED, self.variant));
    }
}

/// Sets the k bits of a key whose hash is `h`: LevelDB's double hashing.
#[inline]
fn set_bits(array: &mut [u8], modulus: Modulus, k: usize, h: u32) {
    let (mut h, delta) = (h, h.rotate_right(17));
    for _ in 0..k {
        let pos = modulus.reduce(h);
        array[pos / 8] |= 1 << (pos % 8);
        h = h.wrapping_add(delta);
    }
}

/// Below this many keys, a batch is looked up one key at a time.
const FEW_FOR_BATCH: usize = 16;

/// A filter's bytes read once for lookups: the bit array and k.
struct BloomFilter<'a> {
    array: &'a [u8],
    k: u8,
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
                Ok(BloomFilter { array, k })
            }
            _ => Err(false),
        }
    }

    #[inline]
    fn bit(&self, pos: usize) -> bool {
        self.array[pos / 8] & (1 << (pos % 8)) != 0
    }

    /// LevelDB's `KeyMayMatch` for a key whose Bloom hash is `h`: probe by
    /// probe, to the first bit not set.
    #[inline]
    fn contains_hash(&self, mut h: u32) -> bool {
        let modulus = Modulus::new(self.array.len() * 8);
        let delta = h.rotate_right(17);
        for _ in 0..self.k {
            if !self.bit(modulus.reduce(h)) {
                return false;
            }
            h = h.wrapping_add(delta);
        }
        true
    }

    /// Many keys against this filter. The scalar path probes every bit of
    /// every key without branching on them, so that the loads of several
    /// keys are in flight at once.
    fn contains_batch(
        &self,
        kernel: Kernel,
        keys: &[&[u8]],
        variant: HashVariant,
        out: &mut [bool],
    ) {
        let k = usize::from(self.k);
        if simd::contains(kernel, keys, variant, k, self.array, out) {
            return;
        }
        let modulus = Modulus::new(self.array.len() * 8);
        // Eight hashes first, as in `create_with`.
        let mut hashes = [0u32; 8];
        for (keys, out) in keys.chunks(8).zip(out.chunks_mut(8)) {
            for (h, key) in hashes.iter_mut().zip(keys) {
                *h = hash(key, SEED, variant);
            }
            for (&h, answer) in hashes.iter().zip(out) {
                let (mut h, delta) = (h, h.rotate_right(17));
                // No probe at all (k = 0) fails: LevelDB answers true.
                let mut all = true;
                for _ in 0..k {
                    all &= self.bit(modulus.reduce(h));
                    h = h.wrapping_add(delta);
                }
                *answer = all;
            }
        }
    }
}

/// `h % bits` as LevelDB computes it, with `h` widened to `size_t`: from 2^32
/// bits on, the position is `h` itself. Below, Lemire's fastmod: with
/// `m = u64::MAX / bits + 1`, `h % bits` is the high 64 bits of
/// `(m * h mod 2^64) * bits`, exactly, for every 32-bit `h` and `bits`; one
/// division per filter instead of one per probe.
#[derive(Clone, Copy, Debug)]
struct Modulus {
    /// The number of bits, or 0 for 2^32 bits and more.
    bits: u64,
    m: u64,
}

impl Modulus {
    #[inline]
    fn new(bits: usize) -> Self {
        match u32::try_from(bits) {
            Ok(bits) => Modulus {
                bits: u64::from(bits),
                m: (u64::MAX / u64::from(bits)).wrapping_add(1),
            },
            Err(_) => Modulus { bits: 0, m: 0 },
        }
    }

    #[inline]
    fn reduce(&self, h: u32) -> usize {
        if self.bits == 0 {
            return h as usize;
        }
        let low = self.m.wrapping_mul(u64::from(h));
        ((u128::from(low) * u128::from(self.bits)) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::Modulus;
    use crate::simd::{Kernel, LANES};
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

    /// The SIMD hash and probe positions against the scalar hash and
    /// LevelDB's formula: keys of one length and of mixed lengths, both
    /// variants, filters of any size the kernel takes.
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
            // 64 bits to 2^31 - 8, the largest multiple of 8 the kernel takes below 2^31.
            let bits = 64 + u64::from(bytes % ((1 << 28) - 8)) * 8;
            let kernel = Kernel::detect();
            let mut hashes = [0u32; LANES];
            for (h, key) in hashes.iter_mut().zip(&refs) {
                *h = hash(key, 0xbc9f1d34, variant);
            }
            if let Some(simd) = crate::simd::hash16(kernel, &refs, 0xbc9f1d34, variant) {
                if simd[..refs.len()] != hashes[..refs.len()] {
                    return TestResult::failed();
                }
            }
            let mut got = [[0u32; LANES]; 30];
            if !crate::simd::positions(kernel, &hashes, bits, &mut got) {
                return TestResult::from_bool(kernel != Kernel::Avx512);
            }
            TestResult::from_bool(hashes.iter().enumerate().all(|(lane, &h)| {
                let naive = naive(h, bits, 30);
                (0..30).all(|j| got[j][lane] as usize == naive[j])
            }))
        }
        QuickCheck::new()
            .tests(5_000)
            .quickcheck(prop as fn(Vec<Vec<u8>>, u8, u32, bool) -> TestResult);
    }

    /// The SIMD reduction where a quotient is closest to going wrong: h at
    /// and next to multiples of bits, and the largest sizes.
    #[test]
    fn simd_positions_are_exact_next_to_multiples() {
        let kernel = Kernel::detect();
        for bits in [
            64u64,
            72,
            1000,
            1 << 20,
            (1 << 31) - 8,
            1 << 31,
            0x7654_3210,
        ] {
            let mut values: Vec<u32> = vec![0, 1, u32::MAX, u32::MAX - 1];
            for q in [
                1u64,
                2,
                3,
                7,
                1 << 10,
                (1 << 32) / bits - 1,
                (1 << 32) / bits,
            ] {
                for offset in [-1i64, 0, 1] {
                    let h = (q * bits) as i64 + offset;
                    if (0..=i64::from(u32::MAX)).contains(&h) {
                        values.push(h as u32);
                    }
                }
            }
            for hashes in values.chunks(LANES) {
                let mut lanes = [0u32; LANES];
                lanes[..hashes.len()].copy_from_slice(hashes);
                let mut got = [[0u32; LANES]; 30];
                if !crate::simd::positions(kernel, &lanes, bits, &mut got) {
                    assert_ne!(kernel, Kernel::Avx512);
                    return;
                }
                for (lane, &h) in lanes.iter().enumerate() {
                    let naive = naive(h, bits, 30);
                    for (j, want) in naive.iter().enumerate() {
                        assert_eq!(
                            got[j][lane] as usize, *want,
                            "h {h:#x} bits {bits} probe {j}"
                        );
                    }
                }
            }
        }
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
        use crate::BloomFilterPolicy;
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
            let one_by_one = |kernel| -> Vec<bool> {
                probes
                    .iter()
                    .map(|p| policy.single_with(kernel, p, &simd[1..]))
                    .collect()
            };
            let reference = one_by_one(Kernel::Scalar);
            let (mut a, mut b) = (vec![false; probes.len()], vec![false; probes.len()]);
            policy.batch_with(Kernel::detect(), &probes, &simd[1..], &mut a);
            policy.batch_with(Kernel::Scalar, &probes, &simd[1..], &mut b);
            simd == scalar
                && a == reference
                && b == reference
                && Kernel::all_simd()
                    .into_iter()
                    .all(|kernel| one_by_one(kernel) == reference)
        }
        QuickCheck::new()
            .tests(2_000)
            .quickcheck(prop as fn(Vec<Vec<u8>>, Vec<Vec<u8>>, u8, bool) -> bool);
    }

    /// Filters and batches of keys of one length (the AVX2 kernel's work),
    /// every length 0..=80, both variants, any bits per key: every SIMD
    /// kernel this CPU runs makes the scalar code's bytes and answers.
    #[test]
    fn kernels_agree_on_keys_of_one_length() {
        use crate::BloomFilterPolicy;
        fn prop(len: u8, n: u16, seed: u64, bits: u8, signed: bool) -> bool {
            let (len, n) = (usize::from(len % 81), usize::from(n % 300));
            let mut x = seed | 1;
            let keys: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    (0..len)
                        .map(|_| {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            x as u8
                        })
                        .collect()
                })
                .collect();
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let variant = if signed {
                HashVariant::Signed
            } else {
                HashVariant::Unsigned
            };
            let policy = BloomFilterPolicy::new(usize::from(bits % 51)).with_hash(variant);
            let mut want = Vec::new();
            policy.create_with(Kernel::Scalar, &refs, &mut want);
            // Each key, and each key with its first byte changed (mostly absent).
            let others: Vec<Vec<u8>> = keys
                .iter()
                .filter(|k| !k.is_empty())
                .map(|k| [&[k[0] ^ 0x5a][..], &k[1..]].concat())
                .collect();
            let probes: Vec<&[u8]> = refs
                .iter()
                .copied()
                .chain(others.iter().map(Vec::as_slice))
                .collect();
            let answers: Vec<bool> = probes
                .iter()
                .map(|p| policy.single_with(Kernel::Scalar, p, &want))
                .collect();
            Kernel::all_simd().into_iter().all(|kernel| {
                let mut got = Vec::new();
                policy.create_with(kernel, &refs, &mut got);
                let mut batch = vec![false; probes.len()];
                policy.batch_with(kernel, &probes, &want, &mut batch);
                got == want && batch == answers
            })
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            assert!(Kernel::all_simd().contains(&Kernel::Avx2));
        }
        QuickCheck::new()
            .tests(3_000)
            .quickcheck(prop as fn(u8, u16, u64, u8, bool) -> bool);
    }

    /// Single lookups on any bytes: every k byte (0 to 30 probed, others
    /// answered), filters from empty on with bits set at random (small ones
    /// have probes on their last bytes, where the kernel reads the array's
    /// last 4 bytes), both variants; every SIMD kernel this CPU runs
    /// against the scalar one.
    #[test]
    fn kernels_agree_on_single_lookups() {
        use crate::BloomFilterPolicy;
        fn prop(array: Vec<u8>, k: u8, keys: Vec<Vec<u8>>, signed: bool) -> bool {
            let mut filter = array;
            filter.push(k % 40);
            let policy = BloomFilterPolicy::new(10).with_hash(if signed {
                HashVariant::Signed
            } else {
                HashVariant::Unsigned
            });
            keys.iter().all(|key| {
                [&filter[..], &filter[filter.len() - 1..]].iter().all(|f| {
                    let want = policy.single_with(Kernel::Scalar, key, f);
                    Kernel::all_simd()
                        .into_iter()
                        .all(|kernel| policy.single_with(kernel, key, f) == want)
                })
            })
        }
        QuickCheck::new()
            .tests(20_000)
            .quickcheck(prop as fn(Vec<u8>, u8, Vec<Vec<u8>>, bool) -> bool);
        // Dense and sparse arrays, so that both answers are common.
        let policy = BloomFilterPolicy::new(10);
        for fill in [0x00u8, 0xff, 0xf7, 0x7f, 0x5a] {
            for len in [0, 1, 3, 4, 5, 63, 1000] {
                let mut filter = vec![fill; len + 1];
                for k in 0..=32u8 {
                    filter[len] = k;
                    for i in 0..200u32 {
                        let key = i.wrapping_mul(0x9e37_79b9).to_le_bytes();
                        for kernel in Kernel::all_simd() {
                            assert_eq!(
                                policy.single_with(kernel, &key, &filter),
                                policy.single_with(Kernel::Scalar, &key, &filter),
                                "{kernel:?} fill {fill:#x} len {len} k {k} key {key:02x?}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The filter of `keys` and the answers for `probes`, for both hash
    /// variants, asserted the same on the detected kernel as on the scalar
    /// code; the answers, a vector per variant.
    fn kernels_agree(keys: &[&[u8]], probes: &[&[u8]], what: &str) -> Vec<Vec<bool>> {
        use crate::BloomFilterPolicy;
        [HashVariant::Unsigned, HashVariant::Signed]
            .into_iter()
            .map(|variant| {
                let policy = BloomFilterPolicy::new(10).with_hash(variant);
                let (mut simd, mut scalar) = (Vec::new(), Vec::new());
                policy.create_with(Kernel::detect(), keys, &mut simd);
                policy.create_with(Kernel::Scalar, keys, &mut scalar);
                assert!(simd == scalar, "{what} {variant:?}");
                let (mut a, mut b) = (vec![false; probes.len()], vec![false; probes.len()]);
                policy.batch_with(Kernel::detect(), probes, &simd, &mut a);
                policy.batch_with(Kernel::Scalar, probes, &simd, &mut b);
                assert!(a == b, "{what} {variant:?}");
                a
            })
            .collect()
    }

    /// Many keys of every length 0..=80 (the SIMD kernel sorts windows of
    /// varying lengths, and lengths from 64 on share a class), with tail
    /// bytes >= 0x80: the same filters and answers on every kernel.
    #[test]
    fn kernels_agree_on_many_keys_of_mixed_lengths() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for n in [255, 256, 1000, 4096, 4097, 9000] {
            let keys: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    let len = (next() % 81) as usize;
                    (0..len).map(|_| next() as u8 | 0x40).collect()
                })
                .collect();
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let probes: Vec<&[u8]> = refs
                .iter()
                .map(|k| &k[k.len() / 3..])
                .chain(refs.iter().copied())
                .collect();
            for answers in kernels_agree(&refs, &probes, &format!("n {n}")) {
                assert!(
                    answers[probes.len() - n..].iter().all(|&hit| hit),
                    "no false negatives"
                );
            }
        }
    }

    /// Windows of 16-byte keys with a few keys of other lengths (0, 3, 17,
    /// 70 bytes) that the SIMD kernel's sample of lengths misses: hashed in
    /// pairs, the groups with several lengths one key per lane. The same
    /// filters and answers on every kernel, windows of present and of absent
    /// keys in turn.
    #[test]
    fn kernels_agree_when_a_few_keys_have_other_lengths() {
        let mut keys: Vec<Vec<u8>> = (1..=4096u64)
            .map(|i| {
                let x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                (0..16).map(|j| (x >> (4 * j)) as u8 | 0x80).collect()
            })
            .collect();
        for (at, len) in [(1, 17), (1000, 0), (2001, 3), (4095, 70)] {
            keys[at] = (0..len).map(|j| j as u8 ^ 0xa5).collect();
        }
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        // Windows of 4096 keys: present, present, absent, absent, so that
        // the SIMD kernel takes both of its ways to answer a window (chosen
        // by the last window's answers) and switches both ways.
        let absent = refs.iter().map(|k| &k[k.len() / 2..]);
        let probes: Vec<&[u8]> = refs
            .iter()
            .copied()
            .chain(refs.iter().copied())
            .chain(absent.clone())
            .chain(absent)
            .collect();
        for answers in kernels_agree(&refs, &probes, "a few other lengths") {
            assert!(
                answers[..2 * refs.len()].iter().all(|&hit| hit),
                "no false negatives"
            );
        }
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
