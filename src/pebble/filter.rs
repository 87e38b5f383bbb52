//! Pebble's table filter (bloom/bloom.go): RocksDB's legacy full filter,
//! 64-byte lines, read as Pebble's `tableFilter.MayContain` reads it.
//!
//! ```text
//! filter: lines x 64 bytes | probes (1) | lines (u32 LE)
//! ```
//!
//! Pebble's reader takes the line size from the length (`8 * (n / lines)`
//! bits), and answers "absent" for a filter of 5 bytes or fewer: what its
//! writer leaves for a table without point keys. Where Pebble's reader
//! would divide by zero, or call a table holding point keys empty, the
//! answer here is "may match" ([`FilterAnswer::Malformed`]).

use crate::rocksdb::builders::legacy_hash;

/// What a Pebble table filter answers for a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterAnswer {
    /// The key may be in the table.
    MayMatch,
    /// The filter rules the key out.
    Absent,
    /// The filter does not read as Pebble's writer makes it: "may match",
    /// what a lookup must assume (Pebble's own reader would panic on it,
    /// or, for a filter of 5 bytes or fewer in a table of point keys,
    /// answer "absent").
    Malformed,
}

impl FilterAnswer {
    /// Whether a lookup reads on.
    pub fn may_match(self) -> bool {
        self != FilterAnswer::Absent
    }
}

/// Pebble's answer for `prefix` (the key's `Split` prefix) from the
/// filter `data`, in a table that holds point keys or not.
pub fn may_contain(data: &[u8], prefix: &[u8], point_keys: bool) -> FilterAnswer {
    let Some(n) = data.len().checked_sub(5).filter(|&n| n > 0) else {
        return match point_keys {
            true => FilterAnswer::Malformed,
            false => FilterAnswer::Absent,
        };
    };
    let probes = data[n];
    let lines = u32::from_le_bytes(data[n + 1..].try_into().expect("4 bytes"));
    let line_bits = match (n as u64).checked_div(u64::from(lines)) {
        Some(bytes) if bytes > 0 && bytes <= u64::from(u32::MAX / 8) => bytes as u32 * 8,
        _ => return FilterAnswer::Malformed,
    };
    let mut h = legacy_hash(prefix);
    let delta = h.rotate_right(17);
    // Below 8 x n bits: lines x line bits is at most that.
    let base = u64::from(h % lines) * u64::from(line_bits);
    for _ in 0..probes {
        let bit = (base + u64::from(h % line_bits)) as usize;
        if data[bit / 8] & (1 << (bit % 8)) == 0 {
            return FilterAnswer::Absent;
        }
        h = h.wrapping_add(delta);
    }
    FilterAnswer::MayMatch
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rocksdb::LegacyBloomBuilder;

    #[test]
    fn built_keys_match_and_malformed_filters_may_match() {
        let keys: Vec<Vec<u8>> = (0..500u32)
            .map(|i| format!("key{i}\u{80}").into_bytes())
            .collect();
        let filter = LegacyBloomBuilder::new(10.0).build(keys.iter().map(|k| &k[..]));
        for key in &keys {
            assert_eq!(may_contain(&filter, key, true), FilterAnswer::MayMatch);
        }
        let absent = (0..500u32)
            .filter(|i| {
                may_contain(&filter, format!("other{i}").as_bytes(), true) == FilterAnswer::Absent
            })
            .count();
        assert!(absent > 400, "{absent}");
        assert_eq!(may_contain(&[], b"k", false), FilterAnswer::Absent);
        assert_eq!(may_contain(&[], b"k", true), FilterAnswer::Malformed);
        assert_eq!(
            may_contain(&[0, 0, 0, 0, 0, 0], b"k", true),
            FilterAnswer::Malformed
        );
        let mut zero_lines = filter.clone();
        let n = zero_lines.len();
        zero_lines[n - 4..].fill(0);
        assert_eq!(
            may_contain(&zero_lines, b"k", true),
            FilterAnswer::Malformed
        );
    }
}
