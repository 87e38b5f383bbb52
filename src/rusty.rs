//! This crate's Bloom filters inside rusty-leveldb (feature `rusty-leveldb`).
//!
//! ```
//! use std::rc::Rc;
//! use leveldb_filter::{rusty::RustyPolicy, BloomFilterPolicy};
//!
//! let mut options = rusty_leveldb::Options::default();
//! options.filter_policy = Rc::new(Box::new(RustyPolicy::new(BloomFilterPolicy::new(10))));
//! ```
//!
//! rusty-leveldb wraps the policy as LevelDB does for a database's tables
//! (its `InternalFilterPolicy` filters user keys), and hands keys stored end
//! to end with their offsets, which [`BloomFilterPolicy::create_filter_from_offsets`]
//! takes as they are. The tables it writes are LevelDB's, byte for byte:
//! LevelDB reads them and `ldbfilter verify` rebuilds their filters.

use crate::{BloomFilterPolicy, FilterPolicy};

/// A [`BloomFilterPolicy`] as a `rusty_leveldb::FilterPolicy`.
#[derive(Clone, Debug)]
pub struct RustyPolicy {
    policy: BloomFilterPolicy,
}

impl RustyPolicy {
    /// rusty-leveldb's filter policy that builds and reads `policy`'s filters.
    pub fn new(policy: BloomFilterPolicy) -> Self {
        RustyPolicy { policy }
    }

    /// The policy.
    pub fn policy(&self) -> &BloomFilterPolicy {
        &self.policy
    }
}

impl rusty_leveldb::FilterPolicy for RustyPolicy {
    fn name(&self) -> &'static str {
        self.policy.static_name()
    }

    fn create_filter(&self, keys: &[u8], key_offsets: &[usize]) -> Vec<u8> {
        let mut filter = Vec::new();
        self.policy
            .create_filter_from_offsets(keys, key_offsets, &mut filter);
        filter
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        self.policy.key_may_match(key, filter)
    }
}
