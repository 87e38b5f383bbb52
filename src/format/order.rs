//! How user keys are ordered, from the comparator's name a table's
//! properties or a MANIFEST give: the orders whose code is the engines'
//! own, and RocksDB's user-defined timestamps, a fixed-size suffix of
//! every stored user key that filters and lookups leave out.

use std::cmp::Ordering;

/// The order of a comparator this crate knows by name. A comparator it
/// does not know orders keys by its own code: readers then answer only
/// what holds in any order (see [`rocksdb::Table::lookup`](crate::rocksdb::Table::lookup)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyOrder {
    /// `leveldb.BytewiseComparator` (both engines' default).
    Bytewise,
    /// `rocksdb.ReverseBytewiseComparator`.
    ReverseBytewise,
    /// `leveldb.BytewiseComparator.u64ts` (RocksDB's
    /// `BytewiseComparatorWithU64Ts`): bytewise on the key without its
    /// last 8 bytes, a little-endian timestamp, then newer timestamps first.
    BytewiseU64Ts,
    /// `rocksdb.ReverseBytewiseComparator.u64ts`: as `BytewiseU64Ts`, the
    /// keys without their timestamps in reverse.
    ReverseBytewiseU64Ts,
}

impl KeyOrder {
    /// The order a comparator's name gives; `None` for one whose order is
    /// its own code's.
    pub fn of(comparator: &str) -> Option<KeyOrder> {
        match comparator {
            "leveldb.BytewiseComparator" => Some(KeyOrder::Bytewise),
            "rocksdb.ReverseBytewiseComparator" => Some(KeyOrder::ReverseBytewise),
            "leveldb.BytewiseComparator.u64ts" => Some(KeyOrder::BytewiseU64Ts),
            "rocksdb.ReverseBytewiseComparator.u64ts" => Some(KeyOrder::ReverseBytewiseU64Ts),
            _ => None,
        }
    }

    /// The comparator's name, as the engines store it.
    pub fn name(self) -> &'static str {
        match self {
            KeyOrder::Bytewise => "leveldb.BytewiseComparator",
            KeyOrder::ReverseBytewise => "rocksdb.ReverseBytewiseComparator",
            KeyOrder::BytewiseU64Ts => "leveldb.BytewiseComparator.u64ts",
            KeyOrder::ReverseBytewiseU64Ts => "rocksdb.ReverseBytewiseComparator.u64ts",
        }
    }

    /// The size of the timestamp that ends each user key (0: none).
    pub fn timestamp_size(self) -> usize {
        match self {
            KeyOrder::Bytewise | KeyOrder::ReverseBytewise => 0,
            KeyOrder::BytewiseU64Ts | KeyOrder::ReverseBytewiseU64Ts => 8,
        }
    }

    /// The same order without timestamps: that of keys whose timestamps
    /// were stripped before they were stored (RocksDB's
    /// `persist_user_defined_timestamps = false`).
    pub fn without_timestamps(self) -> KeyOrder {
        match self {
            KeyOrder::Bytewise | KeyOrder::BytewiseU64Ts => KeyOrder::Bytewise,
            KeyOrder::ReverseBytewise | KeyOrder::ReverseBytewiseU64Ts => KeyOrder::ReverseBytewise,
        }
    }

    /// A stored user key without its timestamp, the key filters hold and
    /// lookups name (a key shorter than a timestamp is left whole: it is
    /// damage, and whole it rules nothing out).
    pub fn strip(self, user_key: &[u8]) -> &[u8] {
        without_timestamp(user_key, self.timestamp_size())
    }

    /// Keys without their timestamps, compared as the comparator's
    /// `CompareWithoutTimestamp` does.
    pub fn compare_without_timestamp(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            KeyOrder::Bytewise | KeyOrder::BytewiseU64Ts => a.cmp(b),
            KeyOrder::ReverseBytewise | KeyOrder::ReverseBytewiseU64Ts => b.cmp(a),
        }
    }

    /// Whether a range tombstone over `[start, end)` covers `key` (all
    /// three without timestamps), as `MaxCoveringTombstoneSeqnum` judges.
    pub fn range_covers(self, start: &[u8], end: &[u8], key: &[u8]) -> bool {
        self.compare_without_timestamp(start, key).is_le()
            && self.compare_without_timestamp(key, end).is_lt()
    }

    /// Two stored user keys (with their timestamps), as the comparator
    /// compares them: without timestamps, then the newer timestamp first.
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        let (ka, kb) = (self.strip(a), self.strip(b));
        self.compare_without_timestamp(ka, kb)
            .then_with(|| timestamp(&b[kb.len()..]).cmp(&timestamp(&a[ka.len()..])))
    }
}

/// The comparators [`KeyOrder::of`] knows, for messages naming another.
pub(crate) const KNOWN_COMPARATORS: &str =
    "leveldb.BytewiseComparator, rocksdb.ReverseBytewiseComparator and their .u64ts forms";

/// A user key without its last `size` bytes, a timestamp; whole where it
/// is shorter.
pub(crate) fn without_timestamp(user_key: &[u8], size: usize) -> &[u8] {
    user_key
        .get(..user_key.len().wrapping_sub(size))
        .unwrap_or(user_key)
}

/// A little-endian timestamp's value (0 where there is none).
fn timestamp(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |v, &b| v.wrapping_shl(8) | u64::from(b))
}

#[cfg(test)]
mod tests {
    use super::KeyOrder;
    use std::cmp::Ordering::{Equal, Greater, Less};

    #[test]
    fn names_give_their_orders_and_back() {
        for order in [
            KeyOrder::Bytewise,
            KeyOrder::ReverseBytewise,
            KeyOrder::BytewiseU64Ts,
            KeyOrder::ReverseBytewiseU64Ts,
        ] {
            assert_eq!(KeyOrder::of(order.name()), Some(order));
        }
        assert_eq!(KeyOrder::of("my.ReverseSuffix"), None);
    }

    #[test]
    fn timestamps_order_newest_first_after_the_key() {
        let key = |k: &[u8], ts: u64| [k, &ts.to_le_bytes()[..]].concat();
        let order = KeyOrder::BytewiseU64Ts;
        assert_eq!(order.strip(&key(b"apple", 7)), b"apple");
        assert_eq!(order.compare(&key(b"apple", 9), &key(b"apple", 7)), Less);
        // 256 > 255, though its first byte is smaller.
        assert_eq!(order.compare(&key(b"a", 256), &key(b"a", 255)), Less);
        assert_eq!(order.compare(&key(b"a", 1), &key(b"b", 9)), Less);
        assert_eq!(order.compare(&key(b"a", 3), &key(b"a", 3)), Equal);
        let reverse = KeyOrder::ReverseBytewiseU64Ts;
        assert_eq!(reverse.compare(&key(b"a", 1), &key(b"b", 9)), Greater);
        assert_eq!(reverse.compare(&key(b"a", 9), &key(b"a", 1)), Less);
        // A tombstone covers its start, not its end, in either order.
        assert!(order.range_covers(b"b", b"d", b"b"));
        assert!(order.range_covers(b"b", b"d", b"c"));
        assert!(!order.range_covers(b"b", b"d", b"d"));
        assert!(!order.range_covers(b"b", b"d", b"a"));
        assert!(reverse.range_covers(b"d", b"b", b"c"));
        assert!(!reverse.range_covers(b"d", b"b", b"b"));
        // A key shorter than a timestamp is left whole.
        assert_eq!(order.strip(b"abc"), b"abc");
        assert_eq!(KeyOrder::Bytewise.strip(b"abc"), b"abc");
    }
}
