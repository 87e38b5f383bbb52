//! The Bloom filter of LevelDB's util/bloom.cc.
//!
//! A filter is `ceil(max(64, n * bits_per_key) / 8)` bytes of bit array followed
//! by one byte holding k, the number of probes. Each key is hashed once (seed
//! 0xbc9f1d34); probe j sets bit `(h + j * delta) % bits`, with `delta` the hash
//! rotated right by 17 bits and all arithmetic on 32 bits.

use crate::hash::{hash, HashVariant};
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
        let bits = keys.len().saturating_mul(self.bits_per_key).max(64);
        let bytes = bits.div_ceil(8);
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(self.k as u8);
        let array = &mut dst[start..start + bytes];
        let probes = Probes::new(bytes * 8);
        for key in keys {
            let mut probe = probes.start(hash(key, SEED, self.variant));
            for _ in 0..self.k {
                let pos = probe.next(&probes);
                array[pos / 8] |= 1 << (pos % 8);
            }
        }
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        match BloomFilter::new(filter) {
            Ok(bloom) => bloom.contains_hash(hash(key, SEED, self.variant)),
            Err(answer) => answer,
        }
    }

    fn key_may_match_batch(&self, keys: &[&[u8]], filter: &[u8], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer per key");
        match BloomFilter::new(filter) {
            Ok(bloom) => bloom.contains_batch(keys, self.variant, out),
            Err(answer) => out.fill(answer),
        }
    }
}

/// A filter's bytes read once for lookups: the bit array, k and the reduction.
struct BloomFilter<'a> {
    array: &'a [u8],
    k: u8,
    probes: Probes,
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
                    probes: Probes::new(array.len() * 8),
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
    fn contains_hash(&self, h: u32) -> bool {
        let mut probe = self.probes.start(h);
        for _ in 0..self.k {
            if !self.bit(probe.next(&self.probes)) {
                return false;
            }
        }
        true
    }

    /// Many keys: hashed in groups, then probed without branching on the bits,
    /// so that the loads of several keys are in flight at once.
    fn contains_batch(&self, keys: &[&[u8]], variant: HashVariant, out: &mut [bool]) {
        const GROUP: usize = 16;
        for (keys, out) in keys.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            let mut probes = [Probe::default(); GROUP];
            for (probe, key) in probes.iter_mut().zip(keys) {
                *probe = self.probes.start(hash(key, SEED, variant));
            }
            for (probe, answer) in probes.iter_mut().zip(out.iter_mut()) {
                let mut all = true;
                for _ in 0..self.k {
                    all &= self.bit(probe.next(&self.probes));
                }
                *answer = all;
            }
        }
    }
}

/// The probe sequence `(h + j * delta) % bits`, j = 0..k, with LevelDB's 32-bit
/// wrap-around in `h + j * delta`, computed without a division per probe.
///
/// LevelDB takes `h % bits` with `h` widened to `size_t`. Below 2^32 bits the
/// remainders of h and delta are taken once, by Lemire's fastmod (exact for
/// every 32-bit dividend and divisor), and each next position is the previous
/// plus `delta % bits`, less `2^32 % bits` when the 32-bit sum wraps. From
/// 2^32 bits on, every position is `h` itself.
#[derive(Clone, Copy, Debug)]
struct Probes {
    /// The number of bits, or 0 for 2^32 bits and more.
    bits: u64,
    /// `u64::MAX / bits + 1`, Lemire's multiplier.
    m: u64,
    /// `2^32 % bits`.
    wrap: u64,
}

/// Where one key's probing stands.
#[derive(Clone, Copy, Debug, Default)]
struct Probe {
    h: u32,
    delta: u32,
    pos: u64,
    step: u64,
}

impl Probes {
    #[inline]
    fn new(bits: usize) -> Self {
        match u32::try_from(bits) {
            Ok(bits) => {
                let bits = u64::from(bits);
                Probes {
                    bits,
                    m: (u64::MAX / bits).wrapping_add(1),
                    wrap: (1u64 << 32) % bits,
                }
            }
            Err(_) => Probes {
                bits: 0,
                m: 0,
                wrap: 0,
            },
        }
    }

    /// `a % bits` for a 32-bit `a`.
    #[inline]
    fn reduce(&self, a: u32) -> u64 {
        let low = self.m.wrapping_mul(u64::from(a));
        ((u128::from(low) * u128::from(self.bits)) >> 64) as u64
    }

    #[inline]
    fn start(&self, h: u32) -> Probe {
        let delta = h.rotate_right(17);
        Probe {
            h,
            delta,
            pos: self.reduce(h),
            step: self.reduce(delta),
        }
    }
}

impl Probe {
    /// This probe's bit position; moves on to the next.
    #[inline]
    fn next(&mut self, probes: &Probes) -> usize {
        if probes.bits == 0 {
            let pos = self.h as usize;
            self.h = self.h.wrapping_add(self.delta);
            return pos;
        }
        let pos = self.pos as usize;
        let (h, wrapped) = self.h.overflowing_add(self.delta);
        self.h = h;
        // pos + step - (wrapped ? 2^32 % bits : 0), kept in [0, bits).
        let mut next = self.pos + self.step;
        if next >= probes.bits {
            next -= probes.bits;
        }
        if wrapped {
            next = if next >= probes.wrap {
                next - probes.wrap
            } else {
                next + probes.bits - probes.wrap
            };
        }
        self.pos = next;
        pos
    }
}

#[cfg(test)]
mod tests {
    use super::Probes;
    use quickcheck::{QuickCheck, TestResult};

    /// LevelDB's positions: `(h + j * delta) % bits`, h widened to 64 bits.
    fn naive(h: u32, bits: u64, k: usize) -> Vec<usize> {
        let delta = h.rotate_right(17);
        (0..k as u32)
            .map(|j| (u64::from(h.wrapping_add(j.wrapping_mul(delta))) % bits) as usize)
            .collect()
    }

    fn fast(h: u32, bits: u64, k: usize) -> Vec<usize> {
        let probes = Probes::new(bits as usize);
        let mut probe = probes.start(h);
        (0..k).map(|_| probe.next(&probes)).collect()
    }

    #[test]
    fn probe_positions_match_leveldb_for_any_filter_size() {
        fn prop(h: u32, bytes: u64) -> TestResult {
            // Every size from 64 bits to past 2^32 bits (where LevelDB's
            // position is h itself).
            let bits = 64 + (bytes % (1 << 30)) * 8;
            TestResult::from_bool(fast(h, bits, 30) == naive(h, bits, 30))
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
                    fast(h, bits, 30),
                    naive(h, bits, 30),
                    "h {h:#x} bits {bits}"
                );
            }
        }
    }
}
