//! The crate against the real LevelDB 1.23, in one process: identical filter
//! bytes, identical blocks, identical answers on any bytes. Runs in CI
//! (`.ci/run` installs libleveldb-dev; without it this crate fails to build,
//! loudly) and stays out of a plain `cargo test` at the workspace root.

use leveldb_filter::{BloomFilterPolicy, FilterBlockBuilder, FilterBlockReader, FilterPolicy};
use leveldb_filter_oracle::rng::Rng;
use leveldb_filter_oracle::Bloom;
use leveldb_filter_testkit::arbitrary::{check, damaged, keys, Call, Key, Layout};

const TESTS: u64 = 3000;

fn ours(bits_per_key: usize, keys: &[Vec<u8>]) -> Vec<u8> {
    let slices: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let mut filter = Vec::new();
    BloomFilterPolicy::new(bits_per_key).create_filter(&slices, &mut filter);
    filter
}

/// The block LevelDB's own `FilterBlockBuilder` makes from `layout`.
fn leveldb_block(leveldb: &Bloom, layout: &Layout) -> Vec<u8> {
    let mut builder = leveldb.block_builder();
    for call in &layout.0 {
        match call {
            Call::Start(offset) => builder.start_block(*offset),
            Call::Key(key) => builder.add_key(key),
        }
    }
    builder.finish()
}

#[test]
fn same_policy_name() {
    assert_eq!(Bloom::new(10).name(), BloomFilterPolicy::new(10).name());
}

#[test]
fn bloom_filters_identical() {
    fn prop(bits: u8, set: Vec<Key>, probes: Vec<Key>) -> bool {
        let bits_per_key = bits % 51;
        let leveldb = Bloom::new(i32::from(bits_per_key));
        let (keys, probes) = (keys(&set), keys(&probes));
        let filter = leveldb.create_filter(&keys);
        let policy = BloomFilterPolicy::new(usize::from(bits_per_key));
        let all: Vec<&[u8]> = keys.iter().chain(&probes).map(Vec::as_slice).collect();
        let mut batch = vec![false; all.len()];
        policy.key_may_match_batch(&all, &filter, &mut batch);
        ours(usize::from(bits_per_key), &keys) == filter
            && all.iter().zip(&batch).all(|(k, &b)| {
                let theirs = leveldb.key_may_match(k, &filter);
                policy.key_may_match(k, &filter) == theirs && b == theirs
            })
    }
    check(TESTS, prop as fn(u8, Vec<Key>, Vec<Key>) -> bool);
}

/// Every key length 0..=64 with every kind of tail byte, one key per filter and
/// many keys in one, at bits per key 0..=50.
#[test]
fn bloom_filters_identical_on_every_length_and_tail() {
    let keys: Vec<Vec<u8>> = (0..=64usize)
        .flat_map(|len| {
            [0x00u8, 0x7f, 0x80, 0xff].map(|fill| {
                (0..len)
                    .map(|i| fill ^ (i as u8).wrapping_mul(29))
                    .collect()
            })
        })
        .collect();
    for bits_per_key in 0..=50 {
        let leveldb = Bloom::new(bits_per_key);
        assert_eq!(
            ours(bits_per_key as usize, &keys),
            leveldb.create_filter(&keys),
            "{bits_per_key}"
        );
        for key in &keys {
            let one = std::slice::from_ref(key);
            assert_eq!(
                ours(bits_per_key as usize, one),
                leveldb.create_filter(one),
                "{key:02x?}"
            );
        }
    }
}

/// Batches of thousands of keys of one length, windows of 4096 present keys
/// and of absent ones in turn (the SIMD kernel answers a window by rounds that
/// drop the keys ruled out, or, after a window of mostly present keys, all
/// probes of pairs of groups): LevelDB's answers.
#[test]
fn batches_of_one_length_answer_as_leveldb() {
    let mut rng = Rng(20261122);
    for (len, n) in [(16, 4096), (23, 5000)] {
        let keys: Vec<Vec<u8>> = (0..n)
            .map(|_| (0..len).map(|_| rng.next_u64() as u8).collect())
            .collect();
        let absent: Vec<Vec<u8>> = keys
            .iter()
            .map(|k| k.iter().map(|b| b ^ 0x5a).collect())
            .collect();
        let probes: Vec<&[u8]> = keys
            .iter()
            .chain(&keys)
            .chain(&absent)
            .chain(&absent)
            .chain(&keys)
            .map(Vec::as_slice)
            .collect();
        let leveldb = Bloom::new(10);
        let filter = leveldb.create_filter(&keys);
        let policy = BloomFilterPolicy::new(10);
        let mut batch = vec![false; probes.len()];
        policy.key_may_match_batch(&probes, &filter, &mut batch);
        for (probe, answer) in probes.iter().zip(&batch) {
            assert_eq!(
                *answer,
                leveldb.key_may_match(probe, &filter),
                "{len}B {probe:02x?}"
            );
        }
    }
}

/// Thousands of keys of lengths 0..=100 (the SIMD kernel hashes windows of
/// varying lengths grouped by length, 64 bytes and more together): LevelDB's
/// filter, and LevelDB's answers batched and one at a time.
#[test]
fn bloom_filters_identical_on_many_keys_of_varying_lengths() {
    let mut rng = Rng(20261121);
    for n in [300, 5000, 9000] {
        let keys = rng.keys(n, 100);
        let leveldb = Bloom::new(10);
        let filter = leveldb.create_filter(&keys);
        assert_eq!(ours(10, &keys), filter, "{n} keys");
        let probes: Vec<&[u8]> = keys
            .iter()
            .map(|k| &k[k.len() / 2..])
            .chain(keys.iter().map(Vec::as_slice))
            .collect();
        let policy = BloomFilterPolicy::new(10);
        let mut batch = vec![false; probes.len()];
        policy.key_may_match_batch(&probes, &filter, &mut batch);
        for (probe, answer) in probes.iter().zip(&batch) {
            let theirs = leveldb.key_may_match(probe, &filter);
            assert_eq!(*answer, theirs, "{probe:02x?}");
            assert_eq!(policy.key_may_match(probe, &filter), theirs, "{probe:02x?}");
        }
    }
}

#[test]
fn bloom_answers_identical_on_any_bytes() {
    fn prop(filter: Vec<u8>, k: u8, probes: Vec<Key>) -> bool {
        let mut filter = filter;
        if let Some(last) = filter.last_mut() {
            *last = k; // every k byte, 0..=255
        }
        let leveldb = Bloom::new(10);
        let policy = BloomFilterPolicy::new(10);
        probes.iter().all(|p| {
            let theirs = leveldb.key_may_match(&p.0, &filter);
            policy.key_may_match(&p.0, &filter) == theirs
                && policy.key_hash(&p.0).may_match(&filter) == theirs
        })
    }
    check(TESTS, prop as fn(Vec<u8>, u8, Vec<Key>) -> bool);
}

#[test]
fn filter_blocks_identical() {
    fn prop(bits: u8, layout: Layout) -> bool {
        let bits_per_key = bits % 51;
        let leveldb = Bloom::new(i32::from(bits_per_key));
        let block = leveldb_block(&leveldb, &layout);
        let reader = leveldb.block_reader(&block);
        let ours = FilterBlockReader::new(BloomFilterPolicy::new(10), &block);
        let mut keys: Vec<&[u8]> = layout
            .0
            .iter()
            .filter_map(|c| match c {
                Call::Key(k) => Some(k.as_slice()),
                Call::Start(_) => None,
            })
            .collect();
        keys.push(b"absent");
        layout.build(BloomFilterPolicy::new(usize::from(bits_per_key))) == block
            && layout.probe_offsets().iter().all(|&o| {
                keys.iter().all(|k| {
                    let theirs = reader.key_may_match(o, k);
                    let hash = BloomFilterPolicy::new(10).key_hash(k);
                    ours.key_may_match(o, k) == theirs && ours.hash_may_match(o, hash) == theirs
                })
            })
    }
    check(TESTS / 3, prop as fn(u8, Layout) -> bool);
}

#[test]
fn block_answers_identical_on_any_bytes() {
    fn prop(
        layout: Layout,
        damage: Vec<(u16, u8)>,
        cut: u16,
        base_lg: Option<u8>,
        random: Vec<u8>,
        key: Key,
    ) -> bool {
        let mut block = damaged(layout.build(BloomFilterPolicy::new(10)), &damage, cut);
        if let (Some(base_lg), Some(last)) = (base_lg, block.last_mut()) {
            *last = base_lg; // every base_lg byte, 0..=255
        }
        let leveldb = Bloom::new(10);
        [block, random].iter().all(|bytes| {
            let reader = leveldb.block_reader(bytes);
            let ours = FilterBlockReader::new(BloomFilterPolicy::new(10), bytes);
            let hash = BloomFilterPolicy::new(10).key_hash(&key.0);
            layout.probe_offsets().iter().all(|&o| {
                let theirs = reader.key_may_match(o, &key.0);
                ours.key_may_match(o, &key.0) == theirs && ours.hash_may_match(o, hash) == theirs
            })
        })
    }
    check(
        TESTS,
        prop as fn(Layout, Vec<(u16, u8)>, u16, Option<u8>, Vec<u8>, Key) -> bool,
    );
}

/// LevelDB's builder is reused here across layouts through ours' `reset`.
#[test]
fn reset_builder_matches_fresh_leveldb_builder() {
    fn prop(layouts: Vec<Layout>) -> bool {
        let leveldb = Bloom::new(10);
        let mut builder = FilterBlockBuilder::new(BloomFilterPolicy::new(10));
        layouts.iter().all(|layout| {
            builder.reset();
            layout.replay(&mut builder);
            builder.finish() == leveldb_block(&leveldb, layout)
        })
    }
    check(200, prop as fn(Vec<Layout>) -> bool);
}
