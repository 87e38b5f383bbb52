//! Any bytes as a Bloom filter, any key, both hash variants: no panic, and
//! the batch path answers as the single one. And a filter built from keys cut
//! out of the input matches every one of them.
#![no_main]

use leveldb_filter::{BloomFilterPolicy, FilterPolicy, HashVariant};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else { return };
    let at = usize::from(split).min(rest.len());
    let (key, filter) = rest.split_at(at);
    for variant in [HashVariant::Unsigned, HashVariant::Signed] {
        let policy = BloomFilterPolicy::new(usize::from(split % 51)).with_hash(variant);
        let _ = policy.key_may_match(key, filter);
        // The batch path answers as the single one, on any filter bytes.
        let probes: Vec<&[u8]> = rest.chunks(3).chain([key]).collect();
        let mut batch = vec![false; probes.len()];
        policy.key_may_match_batch(&probes, filter, &mut batch);
        for (probe, answer) in probes.iter().zip(&batch) {
            assert_eq!(*answer, policy.key_may_match(probe, filter), "batch and single disagree");
        }
        // The input cut into keys of 0..=15 bytes, by the low nibble of each
        // key's first byte.
        let mut keys: Vec<&[u8]> = Vec::new();
        let mut left = rest;
        while let Some(&len) = left.first() {
            let len = usize::from(len & 15).min(left.len());
            let (k, tail) = left.split_at(len);
            keys.push(k);
            left = if len == 0 { &left[1..] } else { tail };
        }
        let mut built = Vec::new();
        policy.create_filter(&keys, &mut built);
        assert!(keys.iter().all(|k| policy.key_may_match(k, &built)), "a false negative");
    }
});
