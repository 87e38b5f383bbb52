//! RocksDB's full-filter payloads (util/bloom_impl.h, util/ribbon_impl.h,
//! table/block_based/filter_policy.cc): a filter's last 5 bytes say which
//! implementation reads it, and RocksDB answers "may match" for any it does
//! not know, "no" for a payload of 1 to 5 bytes.

use super::builders::legacy_hash;
use super::local::{
    batch, fast_local_add, fast_local_line, fast_local_test, legacy_add, legacy_line_at,
    legacy_may_match, legacy_test,
};
use super::ribbon::RibbonReader;
use super::xxph3::hash64;
use crate::arch::{resolved, Kernel, Work};

/// The implementation a full filter (or a partition of one) is read with,
/// from its 5-byte metadata trailer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterBits<'a> {
    /// An empty payload: RocksDB has no reader and answers "may match".
    Empty,
    /// A payload of 1 to 5 bytes: a filter of no keys, which matches none.
    AlwaysFalse,
    /// Marker 0 (what RocksDB writes for "no filter"), a reserved marker, or
    /// a trailer RocksDB does not read: every key may match. `why` says which.
    AlwaysTrue {
        /// What the trailer holds.
        why: &'static str,
    },
    /// LegacyBloom (marker 1..=127, format_version < 5): cache-line-local
    /// Bloom over LevelDB's 32-bit hash with signed tail bytes.
    LegacyBloom {
        /// The bit array.
        data: &'a [u8],
        /// Probes per key.
        probes: u32,
        /// Lines (of `1 << log2_line_bytes` bytes).
        lines: u32,
        /// log2 of a line's bytes.
        log2_line_bytes: u32,
    },
    /// FastLocalBloom (marker -1, format_version >= 5): 64-byte blocks, the
    /// 64-bit XXPH3 hash.
    FastLocalBloom {
        /// The bit array, a whole number of 64-byte blocks.
        data: &'a [u8],
        /// Probes per key.
        probes: u32,
    },
    /// Standard128Ribbon (marker -2).
    Ribbon {
        /// The solution: 16-byte segments.
        data: &'a [u8],
        /// The ordinal seed.
        seed: u8,
        /// Blocks of 128 slots.
        blocks: u32,
    },
}

impl<'a> FilterBits<'a> {
    /// How RocksDB reads `payload` (`GetBuiltinFilterBitsReader`).
    pub fn parse(payload: &'a [u8]) -> FilterBits<'a> {
        if payload.is_empty() {
            return FilterBits::Empty;
        }
        if payload.len() <= 5 {
            return FilterBits::AlwaysFalse;
        }
        let (data, meta) = payload.split_at(payload.len() - 5);
        let len = data.len();
        match meta[0] as i8 {
            0 => FilterBits::AlwaysTrue {
                why: "marker 0: no probes",
            },
            -1 => {
                let probes = u32::from(meta[2] & 31);
                let log2_block = 6 + u32::from(meta[2] >> 5);
                if meta[1] != 0 {
                    FilterBits::AlwaysTrue {
                        why: "an unknown Bloom sub-implementation",
                    }
                } else if log2_block != 6 || meta[3] != 0 || meta[4] != 0 {
                    FilterBits::AlwaysTrue {
                        why: "an unknown Bloom block size or reserved bits",
                    }
                } else if !(1..=30).contains(&probes) {
                    FilterBits::AlwaysTrue {
                        why: "a probe count outside 1..=30",
                    }
                } else if len < 64 {
                    // RocksDB would read past such a filter; it never writes one.
                    FilterBits::AlwaysTrue {
                        why: "a FastLocalBloom filter under 64 bytes",
                    }
                } else {
                    FilterBits::FastLocalBloom { data, probes }
                }
            }
            -2 => {
                let blocks = u32::from_le_bytes([meta[2], meta[3], meta[4], 0]);
                if blocks < 2 {
                    FilterBits::AlwaysTrue {
                        why: "a Ribbon filter of fewer than 2 blocks",
                    }
                } else {
                    FilterBits::Ribbon {
                        data,
                        seed: meta[1],
                        blocks,
                    }
                }
            }
            m if m < 0 => FilterBits::AlwaysTrue {
                why: "a reserved marker",
            },
            probes => {
                let lines = u32::from_le_bytes([meta[1], meta[2], meta[3], meta[4]]);
                let log2 = if u64::from(lines) * 64 == len as u64 {
                    Some(6)
                } else if lines == 0 || len % lines as usize != 0 {
                    None
                } else {
                    let line = len / lines as usize;
                    line.is_power_of_two().then(|| line.trailing_zeros())
                };
                match log2 {
                    Some(log2_line_bytes) => FilterBits::LegacyBloom {
                        data,
                        probes: probes as u32,
                        lines,
                        log2_line_bytes,
                    },
                    None => FilterBits::AlwaysTrue {
                        why: "a LegacyBloom line size that is not a power of two",
                    },
                }
            }
        }
    }

    /// Whether `key` may be in the set the filter was made of, as RocksDB's
    /// `MayMatch`.
    #[inline]
    pub fn may_match(&self, key: &[u8]) -> bool {
        match *self {
            FilterBits::Empty | FilterBits::AlwaysTrue { .. } => true,
            FilterBits::AlwaysFalse => false,
            FilterBits::LegacyBloom {
                data,
                probes,
                lines,
                log2_line_bytes,
            } => legacy_may_match(data, lines, log2_line_bytes, probes, key),
            // (The single lookups' kernels, through pointers chosen once.)
            FilterBits::FastLocalBloom { data, probes } => resolved::fast_local(data, probes, key),
            FilterBits::Ribbon { data, seed, blocks } => resolved::ribbon(data, seed, blocks, key),
        }
    }

    /// [`may_match`](Self::may_match) for each of `keys`, into `out`, as
    /// RocksDB's `MayMatch(num_keys, keys, may_match)` answers a `MultiGet`.
    ///
    /// # Panics
    /// If `out` and `keys` differ in length.
    pub fn may_match_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer per key");
        match *self {
            FilterBits::LegacyBloom {
                data,
                probes,
                lines,
                log2_line_bytes,
            } => batch(
                data,
                keys,
                out,
                legacy_hash,
                |h| legacy_line_at(lines, log2_line_bytes, h),
                |h| legacy_test(data, lines, log2_line_bytes, probes, h),
            ),
            FilterBits::FastLocalBloom { data, probes }
                if Kernel::for_work(Work::Batch).fast_local_batch(data, probes, keys, out) => {}
            FilterBits::FastLocalBloom { data, probes } => batch(
                data,
                keys,
                out,
                hash64,
                |h| fast_local_line(data, h),
                |h| fast_local_test(data, probes, h),
            ),
            FilterBits::Ribbon { data, seed, blocks } => {
                let reader = RibbonReader::new(data, seed, blocks);
                Kernel::for_work(Work::Batch).with_popcnt(|| {
                    batch(
                        data,
                        keys,
                        out,
                        hash64,
                        |h| reader.segment_at(h),
                        |h| reader.may_match(h),
                    )
                })
            }
            _ => {
                for (answer, key) in out.iter_mut().zip(keys) {
                    *answer = self.may_match(key);
                }
            }
        }
    }
}

impl FilterBits<'_> {
    /// The implementation's name, as RocksDB names it (`FastLocalBloom`,
    /// `LegacyBloom`, `Standard128Ribbon`), or what the payload is
    /// (`empty`, `always-false`, `always-true`).
    pub fn implementation(&self) -> &'static str {
        match self {
            FilterBits::Empty => "empty",
            FilterBits::AlwaysFalse => "always-false",
            FilterBits::AlwaysTrue { .. } => "always-true",
            FilterBits::LegacyBloom { .. } => "LegacyBloom",
            FilterBits::FastLocalBloom { .. } => "FastLocalBloom",
            FilterBits::Ribbon { .. } => "Standard128Ribbon",
        }
    }

    /// The bit array (a Ribbon filter's solution), empty for the payloads
    /// of fixed answer.
    pub fn bit_array(&self) -> &[u8] {
        match *self {
            FilterBits::LegacyBloom { data, .. }
            | FilterBits::FastLocalBloom { data, .. }
            | FilterBits::Ribbon { data, .. } => data,
            _ => &[],
        }
    }

    /// Probes per key of a Bloom filter.
    pub fn probes(&self) -> Option<u32> {
        match *self {
            FilterBits::LegacyBloom { probes, .. } | FilterBits::FastLocalBloom { probes, .. } => {
                Some(probes)
            }
            _ => None,
        }
    }

    /// Whether [`set_key`](Self::set_key) rebuilds this filter: a
    /// FastLocalBloom, or a LegacyBloom of 64-byte lines.
    pub(crate) fn rebuilt(&self) -> bool {
        matches!(
            self,
            FilterBits::FastLocalBloom { .. }
                | FilterBits::LegacyBloom {
                    log2_line_bytes: 6,
                    ..
                }
        )
    }

    /// Sets `key`'s probes in `out`, a bit array of this filter's size, as
    /// RocksDB's builder sets them for a filter of this size and probes, and
    /// returns the key's hash (by which the builder counts keys); `None`
    /// for the filters not rebuilt (Ribbon, and fixed answers).
    /// A key's hash as this filter's builder computes it (XXPH3 for
    /// FastLocalBloom and Ribbon, LevelDB's signed hash for LegacyBloom).
    pub(crate) fn key_hash(&self, key: &[u8]) -> Option<u64> {
        match *self {
            FilterBits::FastLocalBloom { .. } | FilterBits::Ribbon { .. } => Some(hash64(key)),
            FilterBits::LegacyBloom { .. } => Some(u64::from(legacy_hash(key))),
            _ => None,
        }
    }

    pub(crate) fn set_key(&self, out: &mut [u8], key: &[u8]) -> Option<u64> {
        match *self {
            FilterBits::FastLocalBloom { probes, .. } => {
                let h = hash64(key);
                fast_local_add(out, probes, h);
                Some(h)
            }
            FilterBits::LegacyBloom {
                probes,
                lines,
                log2_line_bytes: 6,
                ..
            } => {
                let h = legacy_hash(key);
                legacy_add(out, lines, probes, h);
                Some(u64::from(h))
            }
            _ => None,
        }
    }
}
