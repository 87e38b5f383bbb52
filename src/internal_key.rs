//! LevelDB's `InternalFilterPolicy` (db/dbformat.cc): a database's tables
//! hold internal keys, and their filters the user keys.

use crate::filter_block::recycle;
use crate::format::user_key;
use crate::{BloomFilterPolicy, FilterPolicy};

/// LevelDB's `InternalFilterPolicy`: filters a database's tables by user key.
/// It strips the 8-byte tag from every key before the inner policy sees it,
/// and keeps the inner policy's name, as LevelDB does.
///
/// Both sides take internal keys, in LevelDB's call order: the table
/// builder adds each internal key it writes, and a lookup asks with the
/// internal key it seeks (`Table::InternalGet`'s key: the user key and a
/// tag). A lookup by user key is the one mistake to avoid: its last 8 bytes
/// would be taken for a tag. A key shorter than a tag is no internal key,
/// and answers "may match". To ask by user key, hash it through
/// [`key_hasher`](FilterPolicy::key_hasher), which hashes user keys:
///
/// ```
/// use leveldb_filter::{BloomFilterPolicy, FilterPolicy, InternalKeyPolicy};
///
/// let policy = InternalKeyPolicy(BloomFilterPolicy::new(10));
/// let mut filter = Vec::new();
/// let written = b"user-key\x01\x02\0\0\0\0\0\0"; // "user-key", sequence 2, a value
/// policy.create_filter(&[&written[..]], &mut filter);
/// // The internal key of a lookup: the user key, then any tag.
/// assert!(policy.key_may_match(b"user-key\x01\xff\xff\xff\xff\xff\xff\xff", &filter));
/// // The user key alone, through the hasher.
/// let hash = policy.key_hasher().unwrap().key_hash(b"user-key");
/// assert!(policy.key_hasher().unwrap().hash_may_match(hash, &filter));
/// ```
#[derive(Clone, Debug)]
pub struct InternalKeyPolicy<P>(pub P);

thread_local! {
    /// The list of user keys `InternalKeyPolicy::create_filter` hands on,
    /// kept empty between calls so that making a filter allocates nothing
    /// once the list has grown.
    static USER_KEYS: std::cell::RefCell<Vec<&'static [u8]>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Calls `f` with the user keys of `keys`, in the thread's list.
fn with_user_keys<R>(keys: &[&[u8]], f: impl FnOnce(&[&[u8]]) -> R) -> R {
    // (Taken out of the cell: a policy inside that makes filters of its own
    // finds it empty and allocates its own.)
    let mut user_keys = recycle(USER_KEYS.with(|k| std::mem::take(&mut *k.borrow_mut())));
    user_keys.extend(keys.iter().map(|k| user_key(k)));
    let result = f(&user_keys);
    let spare = recycle(user_keys);
    USER_KEYS.with(|k| *k.borrow_mut() = spare);
    result
}

impl<P: FilterPolicy> FilterPolicy for InternalKeyPolicy<P> {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        with_user_keys(keys, |user_keys| self.0.create_filter(user_keys, dst));
    }
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        // Shorter than a tag: no internal key (LevelDB asserts); never a
        // false "absent".
        key.len() < 8 || self.0.key_may_match(user_key(key), filter)
    }
    fn key_may_match_batch(&self, keys: &[&[u8]], filter: &[u8], out: &mut [bool]) {
        with_user_keys(keys, |user_keys| {
            self.0.key_may_match_batch(user_keys, filter, out)
        });
        for (key, answer) in keys.iter().zip(out) {
            *answer |= key.len() < 8;
        }
    }
    /// The inner policy: a lookup by hash hashes the user key, as the
    /// filters hold it.
    fn key_hasher(&self) -> Option<&BloomFilterPolicy> {
        self.0.key_hasher()
    }
}
