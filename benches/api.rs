//! Criterion benches of the public API, throughput in keys per second:
//! `cargo bench --bench api`. (`benches/compare.rs` times the same work
//! side by side with LevelDB and rusty-leveldb.) The kernel is the
//! default for the CPU; `LEVELDB_FILTER_KERNEL=portable|avx2|avx512` picks one.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use leveldb_filter::{BloomFilterPolicy, FilterBlockBuilder, FilterBlockReader, FilterPolicy};

/// `n` keys of `len` bytes from a fixed seed.
fn keys(n: usize, len: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        })
        .collect()
}

fn slices(keys: &[Vec<u8>]) -> Vec<&[u8]> {
    keys.iter().map(Vec::as_slice).collect()
}

fn filter(policy: &BloomFilterPolicy, keys: &[&[u8]]) -> Vec<u8> {
    let mut filter = Vec::new();
    policy.create_filter(keys, &mut filter);
    filter
}

fn bloom(c: &mut Criterion) {
    let policy = BloomFilterPolicy::new(10);
    for n in [100, 10_000, 1_000_000] {
        let members = keys(n, 16, 1);
        let members = slices(&members);
        let others = keys(n, 16, 2);
        // Half members, half others, interleaved.
        let probes: Vec<&[u8]> = members
            .iter()
            .zip(&others)
            .flat_map(|(a, b)| [*a, b.as_slice()])
            .collect();
        let filter = filter(&policy, &members);

        let mut group = c.benchmark_group("bloom");
        group.throughput(Throughput::Elements(n as u64));
        let mut dst = Vec::new();
        group.bench_function(BenchmarkId::new("create", n), |b| {
            b.iter(|| {
                dst.clear();
                policy.create_filter(black_box(&members), &mut dst);
            })
        });
        group.throughput(Throughput::Elements(probes.len() as u64));
        group.bench_function(BenchmarkId::new("key_may_match", n), |b| {
            b.iter(|| {
                probes
                    .iter()
                    .filter(|k| policy.key_may_match(k, black_box(&filter)))
                    .count()
            })
        });
        let mut out = vec![false; probes.len()];
        group.bench_function(BenchmarkId::new("key_may_match_batch", n), |b| {
            b.iter(|| policy.key_may_match_batch(black_box(&probes), &filter, &mut out))
        });
        group.bench_function(BenchmarkId::new("key_hash_then_may_match", n), |b| {
            b.iter(|| {
                probes
                    .iter()
                    .filter(|k| policy.key_hash(k).may_match(black_box(&filter)))
                    .count()
            })
        });
        group.finish();
    }
}

/// A Get through 7 levels: one hash, seven filters.
fn levels(c: &mut Criterion) {
    let policy = BloomFilterPolicy::new(10);
    let levels: Vec<Vec<u8>> = (0..7)
        .map(|l| filter(&policy, &slices(&keys(20_000, 16, 10 + l))))
        .collect();
    let gets = keys(10_000, 16, 3);
    let mut group = c.benchmark_group("levels_get");
    group.throughput(Throughput::Elements(gets.len() as u64));
    group.bench_function("key_hash", |b| {
        b.iter(|| {
            gets.iter()
                .map(|k| {
                    let hash = policy.key_hash(k);
                    levels.iter().filter(|f| hash.may_match(f)).count()
                })
                .sum::<usize>()
        })
    });
    group.bench_function("key_may_match_x7", |b| {
        b.iter(|| {
            gets.iter()
                .map(|k| levels.iter().filter(|f| policy.key_may_match(k, f)).count())
                .sum::<usize>()
        })
    });
    group.finish();
}

/// A table's filter block: 34 keys a data block, a block every 4,101 bytes.
fn block(c: &mut Criterion) {
    let policy = BloomFilterPolicy::new(10);
    let mut group = c.benchmark_group("filter_block");
    for n in [10_000, 1_000_000] {
        let keys = keys(n, 16, 4);
        let mut builder = FilterBlockBuilder::new(&policy);
        let build = |builder: &mut FilterBlockBuilder<&BloomFilterPolicy>| {
            builder.reset();
            for (i, block) in keys.chunks(34).enumerate() {
                builder.start_block(i as u64 * 4101);
                for key in block {
                    builder.add_key(key);
                }
            }
            builder.finish().len()
        };
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("build", n), |b| {
            b.iter(|| build(&mut builder))
        });
        let block = builder.finish().to_vec();
        let reader = FilterBlockReader::new(&policy, &block);
        group.bench_function(BenchmarkId::new("key_may_match", n), |b| {
            b.iter(|| {
                keys.iter()
                    .enumerate()
                    .filter(|(i, k)| reader.key_may_match(black_box(*i as u64 / 34 * 4101), k))
                    .count()
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = bloom, levels, block
}
criterion_main!(benches);
