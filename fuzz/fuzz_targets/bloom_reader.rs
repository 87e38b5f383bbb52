//! Any bytes as a Bloom filter, any key, both hash variants: no panic, and
//! the batch path answers as the single one. Filters built from keys cut out
//! of the input (of mixed lengths, and of one length: the AVX2 kernel's
//! work), by the policy and by a filter block builder, are the bytes of
//! LevelDB's formula, computed here naively from the public scalar hash,
//! and match every key. Run it once per kernel
//! (`LEVELDB_FILTER_KERNEL=portable`, `avx2`, default) and under
//! AddressSanitizer (`FUZZ_SANITIZER=address scripts/fuzz bloom_reader`).
#![no_main]

use leveldb_filter::{BloomFilterPolicy, FilterBlockBuilder, FilterPolicy, HashVariant};
use libfuzzer_sys::fuzz_target;

/// LevelDB's `CreateFilter`, written from util/bloom.cc without shortcuts.
fn naive_filter(policy: &BloomFilterPolicy, keys: &[&[u8]]) -> Vec<u8> {
    let bits = (keys.len() * policy.bits_per_key()).max(64);
    let bytes = bits.div_ceil(8);
    let bits = bytes * 8;
    let mut filter = vec![0u8; bytes];
    for key in keys {
        let mut h = policy.hash_variant().hash(key, 0xbc9f1d34);
        let delta = h.rotate_right(17);
        for _ in 0..policy.k() {
            let pos = h as usize % bits;
            filter[pos / 8] |= 1 << (pos % 8);
            h = h.wrapping_add(delta);
        }
    }
    filter.push(policy.k() as u8);
    filter
}

fn check_built(policy: &BloomFilterPolicy, keys: &[&[u8]]) {
    let mut built = Vec::new();
    policy.create_filter(keys, &mut built);
    assert!(built == naive_filter(policy, keys), "not LevelDB's bytes");
    let mut batch = vec![false; keys.len()];
    policy.key_may_match_batch(keys, &built, &mut batch);
    assert!(batch.iter().all(|&hit| hit), "a false negative (batch)");
    assert!(keys.iter().all(|k| policy.key_may_match(k, &built)), "a false negative");
    // A filter block of one filter (a builder hashes keys as they come and
    // sets the bits from the hashes): that filter, then the offset, the
    // array's offset and base_lg.
    let mut builder = FilterBlockBuilder::new(policy);
    builder.start_block(0);
    for key in keys {
        builder.add_key(key);
    }
    let block = builder.finish();
    if !keys.is_empty() {
        let filter = &block[..block.len() - 9];
        assert!(filter == built, "the block's filter is not LevelDB's bytes");
    }
}

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
        check_built(&policy, &keys);
        // Into keys of 0..=47 bytes, likewise.
        let mut keys: Vec<&[u8]> = Vec::new();
        let mut left = rest;
        while let Some(&len) = left.first() {
            let len = usize::from(len % 48).min(left.len());
            let (k, tail) = left.split_at(len);
            keys.push(k);
            left = if len == 0 { &left[1..] } else { tail };
        }
        check_built(&policy, &keys);
        // And into keys of one length, 1 to 40 bytes.
        let len = usize::from(split % 40) + 1;
        let same: Vec<&[u8]> = rest.chunks_exact(len).collect();
        check_built(&policy, &same);
    }
});
