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
        let bits = bytes * 8;
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(self.k as u8);
        let array = &mut dst[start..start + bytes];
        for key in keys {
            let mut h = hash(key, SEED, self.variant);
            let delta = h.rotate_right(17);
            for _ in 0..self.k {
                let pos = bit_position(h, bits);
                array[pos / 8] |= 1 << (pos % 8);
                h = h.wrapping_add(delta);
            }
        }
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        bloom_may_match(hash(key, SEED, self.variant), filter)
    }
}

/// `h % bits` as LevelDB computes it: `h` is widened to `size_t` first, so a
/// filter of 2^32 bits or more probes bit `h` itself.
#[inline]
fn bit_position(h: u32, bits: usize) -> usize {
    (u64::from(h) % bits as u64) as usize
}

/// LevelDB's `KeyMayMatch` for a key whose Bloom hash is `h`.
#[inline]
fn bloom_may_match(mut h: u32, filter: &[u8]) -> bool {
    let Some((&k, array)) = filter.split_last() else {
        return false;
    };
    if array.is_empty() {
        return false;
    }
    // LevelDB reads k as a `char`: bytes >= 0x80 become huge as size_t, so every
    // k byte above 30 takes this branch, reserved for other encodings.
    if k > 30 {
        return true;
    }
    let bits = array.len() * 8;
    let delta = h.rotate_right(17);
    for _ in 0..k {
        let pos = bit_position(h, bits);
        if array[pos / 8] & (1 << (pos % 8)) == 0 {
            return false;
        }
        h = h.wrapping_add(delta);
    }
    true
}
