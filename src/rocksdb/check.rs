//! Checking a RocksDB table's filter against the table's own keys: each
//! Bloom filter (or partition) rebuilt from the keys RocksDB put in it and
//! compared byte for byte; a Ribbon filter, which is not rebuilt, probed
//! with every key.

use super::build::{
    distinct, fast_local_probes, legacy_lines, legacy_probes, FastLocalBloomBuilder,
    LegacyBloomBuilder,
};
use super::{FilterBits, SstFile, SstFilter};
use crate::Error;

/// A filter of the table (the full filter, or one partition) and the keys
/// the table puts in it.
#[derive(Clone, Debug, PartialEq)]
pub struct FilterReport {
    /// Its index among the partitions (0 for a full filter).
    pub index: usize,
    /// Distinct keys (and prefixes) the table adds to it.
    pub keys: u64,
    /// Its payload's size in bytes, metadata included.
    pub bytes: usize,
    /// What the check found.
    pub check: FilterCheck,
}

/// What checking one filter found.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FilterCheck {
    /// Rebuilt by RocksDB 7.8's builder, at these bits per key (the range
    /// that gives the stored size and probes), byte for byte equal.
    Built {
        /// Bits per key: the smallest and largest that build these bytes.
        bits_per_key: (f64, f64),
    },
    /// Equal to its rebuild with the stored size and probes, though no bits
    /// per key of RocksDB 7.8's default sizing gives that size for these
    /// keys (another writer's sizing, or `optimize_filters_for_memory`).
    Rebuilt,
    /// Not rebuilt (a Ribbon filter, or a filter of fixed answer), and every
    /// key of the table matches it.
    EveryKeyMatches,
    /// The stored filter differs from its rebuild (or, for a filter not
    /// rebuilt, rules out a key of the table).
    Mismatch {
        /// What differs.
        what: String,
    },
}

/// What [`SstFile::check_filter`] found for the table's filter.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TableCheck {
    /// The table has no filter RocksDB reads.
    NoFilter,
    /// The filter cannot be checked against the keys: why.
    NotChecked {
        /// Why.
        why: &'static str,
    },
    /// Each filter (one, or one per partition), checked.
    Filters(Vec<FilterReport>),
}

impl TableCheck {
    /// Whether every filter checked is as RocksDB makes it.
    pub fn ok(&self) -> bool {
        match self {
            TableCheck::NoFilter => true,
            TableCheck::NotChecked { .. } => false,
            TableCheck::Filters(filters) => filters
                .iter()
                .all(|f| !matches!(f.check, FilterCheck::Mismatch { .. })),
        }
    }
}

/// Keys to add for a user key, as `FullFilterBlockBuilder` adds them: the
/// whole key (with whole-key filtering) and its prefix (with a fixed or
/// capped prefix extractor, where the key is in its domain).
#[derive(Clone, Copy, Debug)]
enum Prefix {
    None,
    Fixed(usize),
    Capped(usize),
}

impl Prefix {
    fn of(name: Option<&str>) -> Option<Prefix> {
        let Some(name) = name else {
            return Some(Prefix::None);
        };
        let len = |rest: &str| rest.parse::<usize>().ok();
        if let Some(n) = name.strip_prefix("rocksdb.FixedPrefix.").and_then(len) {
            return Some(Prefix::Fixed(n));
        }
        if let Some(n) = name.strip_prefix("rocksdb.CappedPrefix.").and_then(len) {
            return Some(Prefix::Capped(n));
        }
        (name == "rocksdb.Noop").then_some(Prefix::None)
    }

    fn of_key<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        match *self {
            Prefix::None => None,
            Prefix::Fixed(n) => key.get(..n),
            Prefix::Capped(n) => Some(&key[..n.min(key.len())]),
        }
    }
}

impl SstFile<'_> {
    /// Checks the table's filter against the table's keys (see the module
    /// notes): each Bloom filter rebuilt and compared, each Ribbon filter
    /// probed with every key. Errors are the table's (a block that does not
    /// read); a filter that does not read is a [`FilterCheck::Mismatch`].
    pub fn check_filter(&self) -> Result<TableCheck, Error> {
        let filter = match self.filter() {
            Ok(None) => return Ok(TableCheck::NoFilter),
            Ok(Some(filter)) => filter,
            Err(e) => {
                return Ok(TableCheck::Filters(vec![FilterReport {
                    index: 0,
                    keys: 0,
                    bytes: 0,
                    check: FilterCheck::Mismatch {
                        what: format!("the filter does not read: {e}"),
                    },
                }]))
            }
        };
        let Some(prefix) = Prefix::of(self.prefix_extractor()) else {
            return Ok(TableCheck::NotChecked {
                why: "a prefix extractor this crate does not know",
            });
        };
        let whole = self.whole_key_filtering();
        match filter {
            SstFilter::BlockBased => Ok(TableCheck::NotChecked {
                why: "a block-based filter, which RocksDB 7.8 does not read",
            }),
            SstFilter::Full(bits) => {
                let mut keys = Keys::default();
                self.for_each_key(|key, _| keys.add(key, whole, prefix))?;
                Ok(TableCheck::Filters(vec![check_one(0, bits, &keys.list)]))
            }
            SstFilter::Partitioned(partitions) => {
                if !matches!(prefix, Prefix::None) {
                    return Ok(TableCheck::NotChecked {
                        why: "prefixes in a partitioned filter (not rebuilt)",
                    });
                }
                // Keys come in order, and so do partitions: each key goes to
                // the first partition whose separator is not below it.
                let mut per: Vec<Keys> = vec![Keys::default(); partitions.entries.len()];
                let mut at = 0;
                self.for_each_key(|key, _| {
                    while at + 1 < per.len() && !partitions.holds(at, key) {
                        at += 1;
                    }
                    if let Some(keys) = per.get_mut(at) {
                        keys.add(key, whole, prefix);
                    }
                })?;
                let mut reports = Vec::new();
                for (i, keys) in per.iter().enumerate() {
                    reports.push(match partitions.partition(i) {
                        Some(Ok(bits)) => check_one(i, bits, &keys.list),
                        Some(Err(e)) => FilterReport {
                            index: i,
                            keys: keys.list.len() as u64,
                            bytes: 0,
                            check: FilterCheck::Mismatch {
                                what: format!("partition {i} does not read: {e}"),
                            },
                        },
                        None => continue,
                    });
                }
                Ok(TableCheck::Filters(reports))
            }
        }
    }
}

/// The keys a filter gets, in order, with the last user key and prefix
/// kept to add each once (as `FullFilterBlockBuilder` does).
#[derive(Clone, Debug, Default)]
struct Keys {
    list: Vec<Vec<u8>>,
    last_key: Option<Vec<u8>>,
    last_prefix: Option<Vec<u8>>,
}

impl Keys {
    fn add(&mut self, key: &[u8], whole: bool, prefix: Prefix) {
        if whole && self.last_key.as_deref() != Some(key) {
            self.list.push(key.to_vec());
            self.last_key = Some(key.to_vec());
        }
        if let Some(p) = prefix.of_key(key) {
            if self.last_prefix.as_deref() != Some(p) {
                self.list.push(p.to_vec());
                self.last_prefix = Some(p.to_vec());
            }
        }
    }
}

/// Checks one filter against its keys.
fn check_one(index: usize, bits: &FilterBits<'_>, keys: &[Vec<u8>]) -> FilterReport {
    let refs = || keys.iter().map(Vec::as_slice);
    let bytes = stored_len(bits);
    let report = |check| FilterReport {
        index,
        keys: keys.len() as u64,
        bytes,
        check,
    };
    let Some(rebuilt) = bits.rebuild(refs()) else {
        return match refs().position(|key| !bits.may_match(key)) {
            None => report(FilterCheck::EveryKeyMatches),
            Some(i) => report(FilterCheck::Mismatch {
                what: format!("key {i} of the filter's keys does not match it"),
            }),
        };
    };
    if rebuilt.len() != bytes || !equal_bits(bits, &rebuilt) {
        let at = first_difference(bits, &rebuilt);
        return report(FilterCheck::Mismatch {
            what: format!(
                "the rebuilt filter ({} bytes) differs from the stored one ({bytes} bytes) from byte {at}",
                rebuilt.len()
            ),
        });
    }
    match built_by(bits, keys) {
        Some(bits_per_key) => report(FilterCheck::Built { bits_per_key }),
        None => report(FilterCheck::Rebuilt),
    }
}

fn stored_len(bits: &FilterBits<'_>) -> usize {
    match bits {
        FilterBits::Empty => 0,
        bits => bits.bit_array().len() + 5,
    }
}

fn equal_bits(bits: &FilterBits<'_>, rebuilt: &[u8]) -> bool {
    rebuilt.starts_with(bits.bit_array())
}

fn first_difference(bits: &FilterBits<'_>, rebuilt: &[u8]) -> usize {
    let data = bits.bit_array();
    data.iter()
        .zip(rebuilt)
        .position(|(a, b)| a != b)
        .unwrap_or(data.len().min(rebuilt.len()))
}

/// The bits per key (smallest and largest) at which RocksDB 7.8's builder
/// makes exactly this filter from `keys`, if any. Every bits per key that
/// gives the stored size and probes builds the same bytes: the first is
/// built and compared.
fn built_by(bits: &FilterBits<'_>, keys: &[Vec<u8>]) -> Option<(f64, f64)> {
    let refs = || keys.iter().map(Vec::as_slice);
    let fits: Vec<f64> = match *bits {
        FilterBits::FastLocalBloom { probes, data } => {
            let n = distinct(refs(), super::hash64).len() as u64;
            let len = data.len() as u64;
            (500..=100_000u32)
                .filter(|&m| fast_local_probes(m) == probes)
                .filter(|&m| ((n * u64::from(m)).div_ceil(8000).min(0xffff_ffc0) + 63) & !63 == len)
                .map(|m| f64::from(m) / 1000.0)
                .collect()
        }
        FilterBits::LegacyBloom { probes, lines, .. } => {
            let signed = |key: &[u8]| crate::hash(key, 0xbc9f_1d34, crate::HashVariant::Signed);
            let n = distinct(refs(), signed).len();
            (1..=100u32)
                .filter(|&b| legacy_probes(b) == probes && legacy_lines(n, b) == lines)
                .map(f64::from)
                .collect()
        }
        _ => Vec::new(),
    };
    let (&first, &last) = (fits.first()?, fits.last()?);
    let built = match bits {
        FilterBits::FastLocalBloom { .. } => FastLocalBloomBuilder::new(first).build(refs()),
        _ => LegacyBloomBuilder::new(first).build(refs()),
    };
    let stored = bits.bit_array();
    (built.len() == stored.len() + 5 && built.starts_with(stored)).then_some((first, last))
}
