//! Queries allocate nothing, and a reused block builder allocates nothing per
//! key (nor per filter) once its buffers have grown: counted by the allocator.

use leveldb_filter::{
    BloomFilterPolicy, FilterBlockBuilder, FilterBlockReader, FilterPolicy, InternalKeyPolicy,
};

use crate::peak::allocations_during;

fn keys(n: usize, len: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| (0..len).map(|j| (i * 31 + j * 7) as u8).collect())
        .collect()
}

#[test]
fn queries_allocate_nothing() {
    let policy = BloomFilterPolicy::new(10);
    let keys = keys(5000, 19);
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut filter = Vec::new();
    policy.create_filter(&refs, &mut filter);
    let mut builder = FilterBlockBuilder::new(&policy);
    for (i, key) in refs.iter().enumerate() {
        if i.is_multiple_of(20) {
            builder.start_block(i as u64 * 200);
        }
        builder.add_key(key);
    }
    let block = builder.finish().to_vec();
    let mut answers = vec![false; refs.len()];
    let reader = FilterBlockReader::new(&policy, &block);

    let mut hits = 0;
    let counted = allocations_during(|| {
        for key in &refs {
            hits += usize::from(policy.key_may_match(key, &filter));
        }
        policy.key_may_match_batch(&refs, &filter, &mut answers);
        for (i, key) in refs.iter().enumerate() {
            hits += usize::from(reader.key_may_match(i as u64 / 20 * 4000, key));
        }
    });
    assert_eq!(counted, 0);
    assert_eq!(hits, 2 * refs.len(), "every key is there");
    assert!(answers.iter().all(|&a| a));
}

/// A table's filter block from a reset builder: 34 keys a data block, a
/// block every 4,101 bytes; its length.
fn build_block<P: FilterPolicy>(builder: &mut FilterBlockBuilder<P>, keys: &[Vec<u8>]) -> usize {
    builder.reset();
    for (i, key) in keys.iter().enumerate() {
        if i.is_multiple_of(34) {
            builder.start_block((i / 34) as u64 * 4101);
        }
        builder.add_key(key);
    }
    builder.finish().len()
}

/// Builds a block from `keys` twice with one builder: the second build
/// allocates nothing (the first grew the buffers) and makes the same block.
fn assert_second_build_allocates_nothing<P: FilterPolicy>(policy: P, keys: &[Vec<u8>]) {
    let mut builder = FilterBlockBuilder::new(policy);
    let first = build_block(&mut builder, keys);
    let mut second = 0;
    let counted = allocations_during(|| second = build_block(&mut builder, keys));
    assert_eq!(
        counted, 0,
        "allocations while building a second table's block"
    );
    assert_eq!(first, second);
}

#[test]
fn a_reset_builder_allocates_nothing_in_steady_state() {
    let policy = BloomFilterPolicy::new(10);
    assert_second_build_allocates_nothing(&policy, &keys(20_000, 16));
}

/// A database's table builder holds the internal-key policy: a reused
/// builder over it allocates nothing in steady state either, and its batch
/// lookups (forwarded to the Bloom policy's) allocate nothing.
#[test]
fn the_internal_key_policy_allocates_nothing_in_steady_state() {
    let policy = InternalKeyPolicy(BloomFilterPolicy::new(10));
    // Internal keys: a user key and an 8-byte tag.
    let keys: Vec<Vec<u8>> = keys(20_000, 16)
        .into_iter()
        .enumerate()
        .map(|(i, mut k)| {
            k.extend_from_slice(&((i as u64) << 8 | 1).to_le_bytes());
            k
        })
        .collect();
    assert_second_build_allocates_nothing(&policy, &keys);

    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut filter = Vec::new();
    policy.create_filter(&refs, &mut filter);
    let mut answers = vec![false; refs.len()];
    policy.key_may_match_batch(&refs, &filter, &mut answers); // grows the list
    let counted = allocations_during(|| policy.key_may_match_batch(&refs, &filter, &mut answers));
    assert_eq!(counted, 0);
    assert!(answers.iter().all(|&a| a));
}
