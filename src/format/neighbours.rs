//! The keys a false-positive rate is measured on, for every format: each
//! of a table's keys with its last byte one higher, where the table does not
//! hold it.

/// False positives measured on a table's own keys (LevelDB's
/// [`measure_fpr`](crate::leveldb::measure_fpr), RocksDB's
/// [`Table::measure_fpr`](crate::rocksdb::Table::measure_fpr)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeasuredFpr {
    /// Neighbours probed: keys not in the table, each a key of the table
    /// with its last byte one higher.
    pub probed: u64,
    /// Those the filter let through.
    pub passed: u64,
}

impl MeasuredFpr {
    /// The share that passed (`NaN` when none was probed).
    pub fn rate(&self) -> f64 {
        self.passed as f64 / self.probed as f64
    }
}

/// The keys a false-positive rate is measured on: each of a table's keys with its last
/// byte one higher, waiting until the table's keys (in order) pass them,
/// so that one the table holds is not counted.
#[derive(Default)]
pub(crate) struct Neighbours {
    pending: std::collections::BTreeSet<Vec<u8>>,
    /// The last key given: a key's versions come one after another.
    last: Vec<u8>,
}

impl Neighbours {
    /// The table's next key: `probe` takes each neighbour below it, which
    /// the table does not hold (its first error ends the pass).
    pub(crate) fn key<E>(
        &mut self,
        key: &[u8],
        mut probe: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.last.is_empty() && self.last == key {
            return Ok(());
        }
        while self.pending.first().is_some_and(|n| n.as_slice() < key) {
            if let Some(neighbour) = self.pending.pop_first() {
                probe(&neighbour)?;
            }
        }
        self.pending.remove(key);
        if let Some((&last, rest)) = key.split_last().filter(|(&last, _)| last < 0xff) {
            self.pending.insert([rest, &[last + 1]].concat());
        }
        self.last.clear();
        self.last.extend_from_slice(key);
        Ok(())
    }

    /// The neighbours past the table's last key, in order.
    pub(crate) fn rest(self) -> impl Iterator<Item = Vec<u8>> {
        self.pending.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::Neighbours;

    /// A neighbour is probed once the keys pass it, unless the table holds
    /// it; a key ending in 0xff has none; those past the last key are left.
    #[test]
    fn neighbours_are_probed_when_passed_unless_held() {
        let mut neighbours = Neighbours::default();
        let mut probed = Vec::new();
        for key in [&b"a"[..], b"a", b"ab", b"b", b"c\xff", b"d"] {
            neighbours
                .key(key, |n| {
                    probed.push(n.to_vec());
                    Ok::<(), ()>(())
                })
                .unwrap();
        }
        assert_eq!(probed, [&b"ac"[..], b"c"]);
        assert_eq!(neighbours.rest().collect::<Vec<_>>(), [b"e".to_vec()]);
    }

    /// An empty key has no neighbour, and the neighbour of a key ending in
    /// 0xfe is the key ending in 0xff.
    #[test]
    fn an_empty_key_has_no_neighbour() {
        let mut neighbours = Neighbours::default();
        let mut probed = Vec::new();
        for key in [&b""[..], b"", b"x\xfe", b"y"] {
            neighbours
                .key(key, |n| {
                    probed.push(n.to_vec());
                    Ok::<(), ()>(())
                })
                .unwrap();
        }
        assert_eq!(probed, [b"x\xff".to_vec()]);
        assert_eq!(neighbours.rest().collect::<Vec<_>>(), [b"z".to_vec()]);
    }

    /// The probe's first error ends the pass.
    #[test]
    fn a_probe_error_ends_the_pass() {
        let mut neighbours = Neighbours::default();
        neighbours.key(b"a", |_| Ok::<(), u8>(())).unwrap();
        neighbours.key(b"ab", |_| Ok::<(), u8>(())).unwrap();
        assert_eq!(neighbours.key(b"z", |_| Err(7u8)), Err(7));
    }
}
