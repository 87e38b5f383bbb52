//! A table's filter block checked against the table's own keys: the
//! writer's settings inferred from the stored filters' sizes, then the block
//! compared with a rebuild from the keys.
//!
//! Nothing here holds a table's keys. The pass reads one data block at a
//! time, and a rebuilt filter is hashed key by key into an array the size of
//! the stored filter, once the keys' count has said that the setting tried
//! makes a filter of that size: a setting that would make a larger filter is
//! a mismatch, decided before anything is allocated for it.

use std::fmt;
use std::ops::ControlFlow;

use super::keys::{walk, FilterSink, KeyFormat, KeyStats};
use super::Table;
use crate::arch::{Kernel, Work};
use crate::format::user_key;
use crate::{BloomFilterPolicy, Error, FilterBlock, HashVariant};

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
            Kernel::for_work(Work::Create(self.hashes.len())).insert_hashes(
                &self.hashes,
                self.policy.k(),
                &mut self.array,
            );
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
