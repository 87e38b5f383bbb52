//! RocksDB's full Bloom filters, built byte for byte
//! (table/block_based/filter_policy.cc): FastLocalBloom, which
//! `NewBloomFilterPolicy` writes from format_version 5, and LegacyBloom,
//! which it writes below (with `optimize_filters_for_memory` off). Keys are added as RocksDB's builders add them: a key whose
//! hash equals the last key's is not counted twice.
//!
//! ```
//! use leveldb_filter::rocksdb::{FastLocalBloomBuilder, FilterBits};
//! let builder = FastLocalBloomBuilder::new(10.0);
//! let filter = builder.build([&b"apple"[..], b"banana"]);
//! assert_eq!(filter.len(), 64 + 5); // one 64-byte block and the metadata
//! assert!(FilterBits::parse(&filter).may_match(b"apple"));
//! ```

use super::local::{fast_local_add_all, legacy_add_all};
use super::xxph3::hash64;
use crate::hash::{hash, HashVariant, SEED};

/// LegacyBloom's hash: LevelDB's, signed, with the Bloom seed.
pub(crate) fn legacy_hash(key: &[u8]) -> u32 {
    hash(key, SEED, HashVariant::Signed)
}

/// RocksDB's sanitized bits per key (`BloomLikeFilterPolicy`'s
/// constructor): 0 below 0.5 (no filter), at least 1, below 100.
pub(crate) fn sanitized(bits_per_key: f64) -> f64 {
    if bits_per_key < 0.5 {
        0.0
    } else if bits_per_key < 1.0 {
        1.0
    } else if bits_per_key < 100.0 {
        bits_per_key
    } else {
        100.0
    }
}

/// The sanitized bits per key in thousandths, rounded with a nudge up.
pub(crate) fn millibits(bits_per_key: f64) -> u32 {
    (sanitized(bits_per_key) * 1000.0 + 0.500001) as u32
}

/// Hashes in the order given, a hash equal to the one before it dropped.
pub(crate) fn distinct<'k, H: PartialEq>(
    keys: impl IntoIterator<Item = &'k [u8]>,
    hash: impl Fn(&[u8]) -> H,
) -> Vec<H> {
    let keys = keys.into_iter();
    let mut hashes: Vec<H> = Vec::with_capacity(keys.size_hint().0);
    for key in keys {
        let h = hash(key);
        if hashes.last() != Some(&h) {
            hashes.push(h);
        }
    }
    hashes
}

/// FastLocalBloom: each key's probes in one 64-byte block, over RocksDB's
/// 64-bit hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastLocalBloomBuilder {
    millibits_per_key: u32,
}

impl FastLocalBloomBuilder {
    /// As `NewBloomFilterPolicy(bits_per_key)` builds at format_version 5.
    pub fn new(bits_per_key: f64) -> Self {
        FastLocalBloomBuilder {
            millibits_per_key: millibits(bits_per_key),
        }
    }

    /// Bits per key in thousandths, as RocksDB rounds them.
    pub fn millibits_per_key(&self) -> u32 {
        self.millibits_per_key
    }

    /// Probes per key (`FastLocalBloomImpl::ChooseNumProbes`).
    pub fn probes(&self) -> u32 {
        fast_local_probes(self.millibits_per_key)
    }

    /// The filter's bytes (bit array, then 5 bytes of metadata) for `keys`
    /// in the order the table adds them; empty for a policy of under half
    /// a bit per key, for which RocksDB writes no filter.
    pub fn build<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> Vec<u8> {
        if self.millibits_per_key == 0 {
            return Vec::new();
        }
        fast_local_build(self.millibits_per_key, &distinct(keys, hash64))
    }
}

/// A FastLocalBloom filter of the entries RocksDB's builder holds (XXPH3
/// hashes, none equal to the one before), at `millibits` per key.
pub(crate) fn fast_local_build(millibits: u32, hashes: &[u64]) -> Vec<u8> {
    let probes = fast_local_probes(millibits);
    let len = fast_local_len(hashes.len() as u64, millibits) as usize;
    // Room for the metadata from the start: pushed on later, it would copy
    // the whole array.
    let mut filter = Vec::with_capacity(len + 5);
    filter.resize(len, 0);
    fast_local_add_all(&mut filter, probes, hashes);
    filter.extend_from_slice(&[0xff, 0, probes as u8, 0, 0]);
    filter
}

/// A FastLocalBloom bit array's bytes for `n` keys: their bits rounded up
/// to whole 64-byte blocks, short of 4 GiB.
pub(crate) fn fast_local_len(n: u64, millibits: u32) -> u64 {
    let raw = (n * u64::from(millibits)).div_ceil(8000);
    (raw.min(0xffff_ffc0) + 63) & !63
}

/// `FastLocalBloomImpl::ChooseNumProbes`.
pub(crate) fn fast_local_probes(millibits_per_key: u32) -> u32 {
    // (millibits at most, probes) in order; past the table, by formula.
    const STEPS: [(u32, u32); 12] = [
        (2080, 1),
        (3580, 2),
        (5100, 3),
        (6640, 4),
        (8300, 5),
        (10070, 6),
        (11720, 7),
        (14001, 8),
        (16050, 9),
        (18300, 10),
        (22001, 11),
        (25501, 12),
    ];
    match STEPS.iter().find(|&&(most, _)| millibits_per_key <= most) {
        Some(&(_, probes)) => probes,
        None if millibits_per_key > 50000 => 24,
        None => (millibits_per_key - 1) / 2000 - 1,
    }
}

/// LegacyBloom: probes in one cache line (64 bytes) chosen by LevelDB's
/// 32-bit hash with signed tail bytes, whole bits per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LegacyBloomBuilder {
    bits_per_key: u32,
}

impl LegacyBloomBuilder {
    /// As `NewBloomFilterPolicy(bits_per_key)` builds below format_version
    /// 5: bits per key rounded to a whole number, as RocksDB rounds them.
    pub fn new(bits_per_key: f64) -> Self {
        LegacyBloomBuilder {
            bits_per_key: (millibits(bits_per_key) + 500) / 1000,
        }
    }

    /// As Pebble's `bloom.FilterPolicy(bits_per_key)` builds a table's
    /// filter (Pebble's filter is LegacyBloom): build it from the `Split`
    /// prefixes of the table's point keys, in table order. (For a table
    /// without point keys Pebble writes an empty filter block instead.)
    pub fn pebble(bits_per_key: u32) -> Self {
        LegacyBloomBuilder { bits_per_key }
    }

    /// Whole bits per key.
    pub fn bits_per_key(&self) -> u32 {
        self.bits_per_key
    }

    /// Probes per key: `bits_per_key * 0.69` rounded down, in `1..=30`.
    pub fn probes(&self) -> u32 {
        legacy_probes(self.bits_per_key)
    }

    /// The filter's bytes (lines, then the probe count and the number of
    /// lines as a fixed32) for `keys` in the order the table adds them;
    /// empty for a policy of no bits per key, for which RocksDB writes no
    /// filter.
    pub fn build<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> Vec<u8> {
        if self.bits_per_key == 0 {
            return Vec::new();
        }
        let hashes = distinct(keys, legacy_hash);
        let lines = legacy_lines(hashes.len(), self.bits_per_key);
        let mut filter = Vec::with_capacity(lines as usize * 64 + 5);
        filter.resize(lines as usize * 64, 0);
        legacy_add_all(&mut filter, lines, self.probes(), &hashes);
        filter.push(self.probes() as u8);
        filter.extend_from_slice(&lines.to_le_bytes());
        filter
    }
}

/// `LegacyNoLocalityBloomImpl::ChooseNumProbes`.
pub(crate) fn legacy_probes(bits_per_key: u32) -> u32 {
    ((f64::from(bits_per_key) * 0.69) as u32).clamp(1, 30)
}

/// The number of 64-byte lines for `keys` keys: enough for their bits, made
/// odd (`GetTotalBitsForLocality`); none for no keys.
pub(crate) fn legacy_lines(keys: usize, bits_per_key: u32) -> u32 {
    if keys == 0 {
        return 0;
    }
    let bits = (keys as u64 * u64::from(bits_per_key)).min(0xffff_0000);
    let lines = bits.div_ceil(512) as u32;
    lines | 1
}
