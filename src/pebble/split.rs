//! The key a Pebble table's filter holds for a user key: the key's
//! prefix by its comparer's `Split` (the part before a version or
//! timestamp), known here by the comparer's name, as Pebble v2 no longer
//! records the split in the properties.

/// A comparer's `Split`, known by its name (`rocksdb.comparator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Split {
    /// `leveldb.BytewiseComparator` (Pebble's default, go-ethereum's): the
    /// whole key.
    Whole,
    /// `cockroach_comparator` (CockroachDB's MVCC keys): the key without
    /// its version, whose length plus one is the key's last byte; the
    /// roachKey and its 0x00 sentinel.
    Cockroach,
    /// `pebble.internal.testkeys` (Pebble's tests): the key before its
    /// last `@`.
    Testkeys,
}

impl Split {
    /// The split a comparer's name gives; `None` for a comparer whose split
    /// is its own code's.
    pub fn of(comparer: &str) -> Option<Split> {
        match comparer {
            "leveldb.BytewiseComparator" => Some(Split::Whole),
            "cockroach_comparator" => Some(Split::Cockroach),
            "pebble.internal.testkeys" => Some(Split::Testkeys),
            _ => None,
        }
    }

    /// The prefix of `key` its filter holds. A CockroachDB key whose last
    /// byte claims more than the key (which Pebble's code would not survive)
    /// is left whole.
    pub fn prefix(self, key: &[u8]) -> &[u8] {
        let at = match self {
            Split::Whole => key.len(),
            Split::Cockroach => match key.last() {
                None => 0,
                Some(&version) => key
                    .len()
                    .checked_sub(usize::from(version))
                    .unwrap_or(key.len()),
            },
            Split::Testkeys => key.iter().rposition(|&b| b == b'@').unwrap_or(key.len()),
        };
        &key[..at]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_keep_what_pebble_keeps() {
        assert_eq!(Split::Whole.prefix(b"a@5"), b"a@5");
        assert_eq!(Split::Testkeys.prefix(b"a@b@5"), b"a@b");
        assert_eq!(Split::Testkeys.prefix(b"ab"), b"ab");
        // roachKey "ab", sentinel, an 8-byte wall time, length byte 9.
        let mvcc = [b'a', b'b', 0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(Split::Cockroach.prefix(&mvcc), b"ab\0");
        assert_eq!(Split::Cockroach.prefix(b"ab\0"), b"ab\0");
        assert_eq!(Split::Cockroach.prefix(b""), b"");
        assert_eq!(Split::Cockroach.prefix(b"\x09"), b"\x09");
        assert_eq!(Split::of("cockroach_comparator"), Some(Split::Cockroach));
        assert_eq!(Split::of("my.comparer"), None);
    }
}
