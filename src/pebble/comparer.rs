//! The comparers this crate knows by name (a table's `rocksdb.comparator`,
//! as Pebble v2 no longer records a split in the properties): how each
//! orders user keys and splits a key into the prefix its filter holds
//! (the part before a version or timestamp).

use std::cmp::Ordering;

/// A Pebble comparer known by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Comparer {
    /// `leveldb.BytewiseComparator` (Pebble's default, go-ethereum's):
    /// bytewise; the filter holds the whole key.
    Bytewise,
    /// `cockroach_comparator` (CockroachDB's MVCC keys): the roachKey and
    /// its 0x00 sentinel, then a version whose length plus one is the key's
    /// last byte, newer versions first; the filter holds the key without
    /// its version.
    Cockroach,
    /// `pebble.internal.testkeys` (Pebble's tests): the key before its last
    /// `@`, then a decimal version, larger first; the filter holds the key
    /// before the `@`.
    Testkeys,
}

impl Comparer {
    /// The comparer a name gives; `None` for one whose order and split are
    /// its own code's.
    pub fn of(name: &str) -> Option<Comparer> {
        match name {
            "leveldb.BytewiseComparator" => Some(Comparer::Bytewise),
            "cockroach_comparator" => Some(Comparer::Cockroach),
            "pebble.internal.testkeys" => Some(Comparer::Testkeys),
            _ => None,
        }
    }

    /// Where `key`'s prefix ends (Pebble's `Split`). A CockroachDB key whose
    /// last byte claims more than the key (which Pebble's code would not
    /// survive) is taken whole.
    fn split(self, key: &[u8]) -> usize {
        match self {
            Comparer::Bytewise => key.len(),
            Comparer::Cockroach => match key.last() {
                None => 0,
                Some(&version) => key
                    .len()
                    .checked_sub(usize::from(version))
                    .unwrap_or(key.len()),
            },
            Comparer::Testkeys => key.iter().rposition(|&b| b == b'@').unwrap_or(key.len()),
        }
    }

    /// The prefix of `key` its filter holds.
    pub fn prefix(self, key: &[u8]) -> &[u8] {
        &key[..self.split(key)]
    }

    /// Two user keys in the comparer's order (Pebble's `Compare`): prefixes
    /// bytewise, then a key without a version first, then newer versions
    /// first.
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        if self == Comparer::Bytewise {
            return a.cmp(b);
        }
        // CockroachDB's comparer puts an empty key before every other.
        if self == Comparer::Cockroach && (a.is_empty() || b.is_empty()) {
            return a.len().cmp(&b.len());
        }
        let (sa, sb) = (self.split(a), self.split(b));
        a[..sa].cmp(&b[..sb]).then_with(|| {
            let (va, vb) = (&a[sa..], &b[sb..]);
            match (va.is_empty(), vb.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                (false, false) => match self {
                    Comparer::Cockroach => cockroach_version(vb).cmp(cockroach_version(va)),
                    _ => testkeys_version(vb, va),
                },
            }
        })
    }
}

/// A CockroachDB version (with its length byte) as it compares: without
/// its length byte, a synthetic bit, or a logical time of zero
/// (`normalizeEngineSuffixForCompare`).
fn cockroach_version(version: &[u8]) -> &[u8] {
    let v = &version[..version.len() - 1];
    match v.len() {
        // Wall and logical time, and the synthetic bit after them.
        13 | 12 if v[8..12] == [0; 4] => &v[..8],
        13 => &v[..12],
        _ => v,
    }
}

/// Two testkeys versions (`@` and decimal digits, an optional
/// `_synthetic` after), the larger first: `b` against `a`, as numbers
/// where both read, else bytewise.
fn testkeys_version(b: &[u8], a: &[u8]) -> Ordering {
    let number = |v: &[u8]| -> Option<u64> {
        let v = v.strip_suffix(b"_synthetic").unwrap_or(v);
        std::str::from_utf8(v.strip_prefix(b"@")?)
            .ok()?
            .parse()
            .ok()
    };
    match (number(b), number(a)) {
        (Some(nb), Some(na)) => nb.cmp(&na),
        _ => b.cmp(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparers_split_and_order_as_pebbles() {
        assert_eq!(Comparer::Bytewise.prefix(b"a@5"), b"a@5");
        assert_eq!(Comparer::Testkeys.prefix(b"a@b@5"), b"a@b");
        assert_eq!(Comparer::Testkeys.prefix(b"ab"), b"ab");
        // roachKey "ab", sentinel, an 8-byte wall time, length byte 9.
        let mvcc = |wall: u8| [b'a', b'b', 0, 0, 0, 0, 0, 0, 0, 0, wall, 9];
        assert_eq!(Comparer::Cockroach.prefix(&mvcc(1)), b"ab\0");
        assert_eq!(Comparer::Cockroach.prefix(b"ab\0"), b"ab\0");
        assert_eq!(Comparer::Cockroach.prefix(b""), b"");
        assert_eq!(Comparer::Cockroach.prefix(b"\x09"), b"\x09");
        assert_eq!(
            Comparer::of("cockroach_comparator"),
            Some(Comparer::Cockroach)
        );
        assert_eq!(Comparer::of("my.comparer"), None);
        // Newer versions first; a bare key before its versions.
        let c = Comparer::Cockroach;
        assert_eq!(c.compare(&mvcc(2), &mvcc(1)), Ordering::Less);
        assert_eq!(c.compare(b"ab\0", &mvcc(1)), Ordering::Less);
        assert_eq!(c.compare(&mvcc(1), b"ac\0"), Ordering::Less);
        // A zero logical time compares as none.
        let logical = [b'a', b'b', 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 13];
        assert_eq!(c.compare(&logical, &mvcc(1)), Ordering::Equal);
        let t = Comparer::Testkeys;
        assert_eq!(t.compare(b"a@10", b"a@9"), Ordering::Less);
        assert_eq!(t.compare(b"a", b"a@9"), Ordering::Less);
        assert_eq!(t.compare(b"a@9", b"b"), Ordering::Less);
    }
}
