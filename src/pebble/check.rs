//! Checking a Pebble table's filter against the table's keys: every point
//! key's `Split` prefix hashed in table order (a hash equal to the one
//! before added once, as Pebble's writer adds it), the bits per key
//! inferred from the stored line and probe counts, the filter rebuilt and
//! compared byte for byte.

use super::Table;
use crate::rocksdb::builders::{legacy_hash, legacy_probes};
use crate::rocksdb::local::legacy_add;
use crate::rocksdb::{FilterCheck, FilterReport, Verdict};

/// The most bits per key tried when inferring them: past 44, 30 probes and
/// the line count alone tell them apart, and Pebble's users stay near 10.
const MAX_BITS_PER_KEY: u32 = 1000;

impl Table<'_> {
    /// Checks the filter against the table's keys. Errors are the table's
    /// (a data or index block that does not read); a filter block that does
    /// not read is a [`FilterCheck::Mismatch`]. A row-block table whose
    /// comparer this crate does not know is [`Verdict::NotChecked`]: its
    /// `Split` is its own code's (a columnar table's blocks store each key's
    /// prefix, unless its key schema is unknown).
    pub fn check_filter(&self) -> Result<Verdict, crate::Error> {
        let Some((_, filter)) = self.filter() else {
            return Ok(Verdict::NoFilter);
        };
        // Columnar blocks store each key's prefix; row blocks need the
        // comparer's Split.
        let comparer = self.comparer();
        if comparer.is_none() && !self.format.columnar() {
            return Ok(Verdict::NotChecked {
                why: "the comparer's Split is its own code's: a comparer this crate does not know",
            });
        }
        if self.format.columnar() && self.key_schema().is_err() {
            return Ok(Verdict::NotChecked {
                why: "the key schema's layout is its own code's: a key schema this crate does not know",
            });
        }
        let mut hashes = Vec::new();
        self.for_each_entry(|user_key, prefix, _| {
            let prefix = match (prefix, comparer) {
                (Some(prefix), _) => prefix,
                (None, Some(comparer)) => comparer.prefix(user_key),
                (None, None) => user_key,
            };
            let h = legacy_hash(prefix);
            if hashes.last() != Some(&h) {
                hashes.push(h);
            }
        })?;
        let report = |bytes, check| {
            Ok(Verdict::Filters(vec![FilterReport {
                index: 0,
                keys: hashes.len() as u64,
                bytes,
                check,
            }]))
        };
        let data = match filter {
            Ok(data) => data,
            Err(e) => {
                let what = format!("the filter block does not read: {e}");
                return report(0, FilterCheck::Mismatch { what });
            }
        };
        let (check, _) = rebuild(data, &hashes);
        report(data.len(), check)
    }
}

/// Pebble's line count for `n` hashes at `bits_per_key`: enough 64-byte
/// lines for their bits, made odd; none for no hashes.
fn lines(n: usize, bits_per_key: u32) -> u64 {
    match n {
        0 => 0,
        n => (n as u64 * u64::from(bits_per_key)).div_ceil(512) | 1,
    }
}

/// The filter `data` against its rebuild from `hashes` with its stored
/// line and probe counts, and the rebuilt bytes.
fn rebuild(data: &[u8], hashes: &[u32]) -> (FilterCheck, Vec<u8>) {
    if data.is_empty() {
        // What Pebble writes for a table without point keys.
        let check = match hashes.is_empty() {
            true => FilterCheck::Rebuilt,
            false => FilterCheck::Mismatch {
                what: format!("an empty filter block, for {} keys", hashes.len()),
            },
        };
        return (check, Vec::new());
    }
    let Some(n) = data.len().checked_sub(5) else {
        let what = format!(
            "a {}-byte filter, shorter than its 5-byte trailer",
            data.len()
        );
        return (FilterCheck::Mismatch { what }, Vec::new());
    };
    let probes = u32::from(data[n]);
    let stored_lines = u32::from_le_bytes(data[n + 1..].try_into().expect("4 bytes"));
    if n as u64 != u64::from(stored_lines) * 64 {
        let what = format!("{n} bytes of bits for {stored_lines} lines of 64 bytes");
        return (FilterCheck::Mismatch { what }, Vec::new());
    }
    let mut built = vec![0; n];
    for &h in hashes {
        legacy_add(&mut built, stored_lines, probes, h);
    }
    built.push(probes as u8);
    built.extend_from_slice(&stored_lines.to_le_bytes());
    if built != data {
        let differ = built
            .iter()
            .zip(data)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let what = format!(
            "the filter differs from its rebuild from the table's {} keys (first at byte {differ})",
            hashes.len()
        );
        return (FilterCheck::Mismatch { what }, built);
    }
    let fits = |bpk: &u32| {
        legacy_probes(*bpk) == probes && lines(hashes.len(), *bpk) == u64::from(stored_lines)
    };
    let first = (1..=MAX_BITS_PER_KEY).find(fits);
    let last = (1..=MAX_BITS_PER_KEY).rev().find(fits);
    let check = match (first, last) {
        (Some(lo), Some(hi)) => FilterCheck::Built {
            bits_per_key: (f64::from(lo), f64::from(hi)),
        },
        _ => FilterCheck::Rebuilt,
    };
    (check, built)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rocksdb::LegacyBloomBuilder;

    #[test]
    fn rebuilds_infer_the_bits_per_key() {
        let keys: Vec<Vec<u8>> = (0..300u32).map(|i| i.to_be_bytes().to_vec()).collect();
        let hashes: Vec<u32> = keys.iter().map(|k| legacy_hash(k)).collect();
        for bpk in 1..=20 {
            let data = LegacyBloomBuilder::new(f64::from(bpk)).build(keys.iter().map(|k| &k[..]));
            match rebuild(&data, &hashes).0 {
                FilterCheck::Built {
                    bits_per_key: (lo, hi),
                } => {
                    assert!(
                        lo <= f64::from(bpk) && f64::from(bpk) <= hi,
                        "{bpk}: {lo}..{hi}"
                    )
                }
                other => panic!("{bpk}: {other:?}"),
            }
            let mut flipped = data.clone();
            flipped[0] ^= 1;
            assert!(matches!(
                rebuild(&flipped, &hashes).0,
                FilterCheck::Mismatch { .. }
            ));
        }
        assert_eq!(rebuild(&[], &[]).0, FilterCheck::Rebuilt);
        assert!(matches!(
            rebuild(&[], &hashes).0,
            FilterCheck::Mismatch { .. }
        ));
        assert!(matches!(
            rebuild(&[1, 2], &hashes).0,
            FilterCheck::Mismatch { .. }
        ));
    }
}
