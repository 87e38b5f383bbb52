//! This crate against LevelDB 1.23's C++ and rusty-leveldb, side by side in one
//! process, on the same keys: `cargo bench --bench compare`.
//!
//! Before timing, it checks that the three make identical filters and blocks
//! and give identical answers, and aborts if not. It prints ns per key (the
//! median of several runs) per workload, then two lines: for each kind of
//! work, the median over its workloads of the other's time divided by ours.

mod common;

use common::cpu;
use std::hint::black_box;
use std::time::{Duration, Instant};

use leveldb_filter::{BloomFilter, BloomFilterPolicy, FilterBlockBuilder, FilterPolicy};
use leveldb_filter_oracle::rng::Rng;
use leveldb_filter_oracle::{Bloom, KeySet};
use rusty_leveldb::FilterPolicy as _;

const BITS_PER_KEY: usize = 10;
const RUNS: usize = 11;
/// Each timed run repeats its work until it has taken at least this long.
const MIN_RUN: Duration = Duration::from_millis(60);
/// Keys handled between two reads of the clock in a timed run.
const KEYS_PER_READ: usize = 10_000;

/// `n` keys of random bytes, each of a length drawn from `lengths`.
fn random_keys(rng: &mut Rng, n: usize, lengths: std::ops::RangeInclusive<u64>) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let len = rng.range(*lengths.start(), *lengths.end());
            (0..len).map(|_| rng.next_u64() as u8).collect()
        })
        .collect()
}

/// Median ns per key of each piece of `work`, each handling `keys` keys per
/// call. The pieces take turns within every run, so that a change of clock
/// speed during the bench touches all of them alike.
fn time(keys: usize, work: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut samples = vec![Vec::with_capacity(RUNS); work.len()];
    // Calls between reads of the clock: about `KEYS_PER_READ` keys' work,
    // so that the read (about 20 ns) is not counted as part of the work
    // of a small filter.
    let per_read = (KEYS_PER_READ / keys).max(1) as u64;
    for _ in 0..RUNS {
        for (piece, samples) in work.iter_mut().zip(&mut samples) {
            let start = Instant::now();
            let mut calls = 0u64;
            while start.elapsed() < MIN_RUN {
                for _ in 0..per_read {
                    piece();
                }
                calls += per_read;
            }
            samples.push(start.elapsed().as_nanos() as f64 / (calls as f64 * keys as f64));
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            s[RUNS / 2]
        })
        .collect()
}

/// rusty-leveldb's filter input: keys concatenated, with their offsets.
fn rusty_keys(keys: &[Vec<u8>]) -> (Vec<u8>, Vec<usize>) {
    let mut data = Vec::new();
    let mut offsets = Vec::new();
    for key in keys {
        offsets.push(data.len());
        data.extend_from_slice(key);
    }
    (data, offsets)
}

/// rusty-leveldb keeps its FilterBlockBuilder private; this drives its public
/// BloomPolicy as that builder does (same cuts, same layout).
fn rusty_block(
    policy: &rusty_leveldb::BloomPolicy,
    keys: &[Vec<u8>],
    per_block: usize,
    stride: u64,
) -> Vec<u8> {
    struct Builder<'p> {
        policy: &'p rusty_leveldb::BloomPolicy,
        data: Vec<u8>,
        offsets: Vec<usize>,
        filters: Vec<u8>,
        filter_offsets: Vec<usize>,
    }
    impl Builder<'_> {
        fn cut(&mut self) {
            self.filter_offsets.push(self.filters.len());
            if !self.offsets.is_empty() {
                let filter = self.policy.create_filter(&self.data, &self.offsets);
                self.filters.extend_from_slice(&filter);
                self.data.clear();
                self.offsets.clear();
            }
        }
    }
    let mut b = Builder {
        policy,
        data: Vec::new(),
        offsets: Vec::new(),
        filters: Vec::new(),
        filter_offsets: Vec::new(),
    };
    for (i, block) in keys.chunks(per_block).enumerate() {
        let index = i as u64 * stride / 2048;
        while (b.filter_offsets.len() as u64) < index {
            b.cut();
        }
        for key in block {
            b.offsets.push(b.data.len());
            b.data.extend_from_slice(key);
        }
    }
    if !b.offsets.is_empty() {
        b.cut();
    }
    let mut block = b.filters;
    let array_offset = block.len() as u32;
    for o in b.filter_offsets {
        block.extend_from_slice(&(o as u32).to_le_bytes());
    }
    block.extend_from_slice(&array_offset.to_le_bytes());
    block.push(11);
    block
}

fn slices(keys: &[Vec<u8>]) -> Vec<&[u8]> {
    keys.iter().map(Vec::as_slice).collect()
}

fn ours_create(policy: &BloomFilterPolicy, keys: &[&[u8]], dst: &mut Vec<u8>) {
    dst.clear();
    policy.create_filter(keys, dst);
}

fn ours_block(
    builder: &mut FilterBlockBuilder<&BloomFilterPolicy>,
    keys: &[Vec<u8>],
    per_block: usize,
    stride: u64,
) -> usize {
    builder.reset();
    for (i, block) in keys.chunks(per_block).enumerate() {
        builder.start_block(i as u64 * stride);
        for key in block {
            builder.add_key(key);
        }
    }
    builder.finish().len()
}

/// This bench once per kernel this CPU runs, each in a process of its own
/// (the kernel is chosen once per process), each with its table and summary.
fn all_kernels() {
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut kernels = vec!["portable"];
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            kernels.push("avx2");
        }
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl") {
            kernels.push("avx512");
        }
    }
    let me = std::env::current_exe().expect("the bench's own path");
    for kernel in kernels {
        println!("## kernel {kernel}");
        let status = std::process::Command::new(&me)
            .env("LEVELDB_FILTER_KERNEL", kernel)
            .status()
            .expect("the bench runs again");
        if !status.success() {
            std::process::exit(1);
        }
        println!();
    }
}

/// One row of the table: ns per key for LevelDB, rusty-leveldb, this crate.
struct Row {
    kind: &'static str,
    name: String,
    leveldb: f64,
    rusty: f64,
    ours: f64,
}

fn fail(what: String) -> ! {
    eprintln!("compare: {what}: the implementations disagree, nothing was timed");
    std::process::exit(1)
}

fn main() {
    if !leveldb_filter_oracle::AVAILABLE {
        eprintln!("compare: LevelDB 1.23 is needed: apt-get install -y libleveldb-dev, then cargo clean -p leveldb-filter-oracle");
        std::process::exit(1);
    }
    // `cargo bench` passes --bench; `-- --all-kernels` runs this bench
    // again for each kernel this CPU runs.
    if std::env::args().any(|a| a == "--all-kernels") {
        return all_kernels();
    }
    println!("cpu: {}; kernel: {}", cpu(), leveldb_filter::kernel());
    let mut rng = Rng(42);
    let leveldb = Bloom::new(BITS_PER_KEY as i32);
    let rusty = rusty_leveldb::BloomPolicy::new(BITS_PER_KEY as u32);
    let ours = BloomFilterPolicy::new(BITS_PER_KEY);
    let mut rows = Vec::new();

    let sets = [
        ("n=100 16B", random_keys(&mut rng, 100, 16..=16)),
        ("n=10000 16B", random_keys(&mut rng, 10_000, 16..=16)),
        ("n=1000000 16B", random_keys(&mut rng, 1_000_000, 16..=16)),
        ("n=10000 8..64B", random_keys(&mut rng, 10_000, 8..=64)),
    ];
    for (name, keys) in &sets {
        let mut set = KeySet::new(keys);
        let (data, offsets) = rusty_keys(keys);
        let refs = slices(keys);
        let mut dst = Vec::new();
        // Identical bytes first.
        leveldb.bench_create(&mut set);
        ours_create(&ours, &refs, &mut dst);
        let theirs = rusty.create_filter(&data, &offsets);
        if set.output() != dst || theirs != dst {
            fail(format!("create {name}"));
        }
        let filter = dst.clone();
        let t = time(
            keys.len(),
            &mut [
                &mut || {
                    black_box(leveldb.bench_create(&mut set));
                },
                &mut || {
                    black_box(rusty.create_filter(black_box(&data), &offsets));
                },
                &mut || ours_create(&ours, black_box(&refs), &mut dst),
            ],
        );
        rows.push(Row {
            kind: "create",
            name: name.to_string(),
            leveldb: t[0],
            rusty: t[1],
            ours: t[2],
        });

        // Queries: members and as many other keys, interleaved.
        if keys.len() < 10_000 {
            continue;
        }
        let others = random_keys(&mut rng, keys.len(), 16..=16);
        let probes: Vec<Vec<u8>> = keys
            .iter()
            .zip(&others)
            .flat_map(|(a, b)| [a.clone(), b.clone()])
            .collect();
        let probe_set = KeySet::new(&probes);
        let probe_refs = slices(&probes);
        let expected: Vec<bool> = probes
            .iter()
            .map(|p| leveldb.key_may_match(p, &filter))
            .collect();
        let single: Vec<bool> = probe_refs
            .iter()
            .map(|p| ours.key_may_match(p, &filter))
            .collect();
        let mut batch = vec![false; probes.len()];
        ours.key_may_match_batch(&probe_refs, &filter, &mut batch);
        // A filter an engine keeps, prepared once (its k and modulus).
        let prepared = BloomFilter::new(&ours, filter.as_slice());
        let prepared_answers: Vec<bool> =
            probe_refs.iter().map(|p| prepared.may_match(p)).collect();
        let theirs: Vec<bool> = probe_refs
            .iter()
            .map(|p| rusty.key_may_match(p, &filter))
            .collect();
        if single != expected
            || batch != expected
            || theirs != expected
            || prepared_answers != expected
        {
            fail(format!("query {name}"));
        }
        let t = time(
            probes.len(),
            &mut [
                &mut || {
                    black_box(leveldb.bench_query(&probe_set, black_box(&filter)));
                },
                &mut || {
                    black_box(
                        probe_refs
                            .iter()
                            .filter(|p| rusty.key_may_match(p, black_box(&filter)))
                            .count(),
                    );
                },
                &mut || {
                    black_box(
                        probe_refs
                            .iter()
                            .filter(|p| ours.key_may_match(p, black_box(&filter)))
                            .count(),
                    );
                },
                &mut || {
                    ours.key_may_match_batch(
                        black_box(&probe_refs),
                        black_box(&filter),
                        &mut batch,
                    );
                    black_box(&batch);
                },
                &mut || {
                    let prepared = black_box(&prepared);
                    black_box(probe_refs.iter().filter(|p| prepared.may_match(p)).count());
                },
            ],
        );
        let (leveldb_query, rusty_query) = (t[0], t[1]);
        for (kind, ours_time) in [
            ("single_query", t[2]),
            ("batch_query", t[3]),
            ("single_prepared", t[4]),
        ] {
            rows.push(Row {
                kind,
                name: format!("{name} half absent"),
                leveldb: leveldb_query,
                rusty: rusty_query,
                ours: ours_time,
            });
        }
    }

    // A table-like stream: 1,000,000 keys in 4 KiB data blocks of 34 entries
    // (16-byte keys, ~100-byte values), a block every 4,101 bytes.
    let (per_block, stride) = (34, 4096 + 5);
    let keys = &sets[2].1;
    let mut set = KeySet::new(keys);
    let mut builder = FilterBlockBuilder::new(&ours);
    leveldb.bench_block(&mut set, per_block, stride);
    ours_block(&mut builder, keys, per_block, stride);
    if set.output() != builder.finish()
        || rusty_block(&rusty, keys, per_block, stride) != builder.finish()
    {
        fail("block build".into());
    }
    let t = time(
        keys.len(),
        &mut [
            &mut || {
                black_box(leveldb.bench_block(&mut set, per_block, stride));
            },
            &mut || {
                black_box(rusty_block(&rusty, black_box(keys), per_block, stride));
            },
            &mut || {
                black_box(ours_block(&mut builder, black_box(keys), per_block, stride));
            },
        ],
    );
    rows.push(Row {
        kind: "block_build",
        name: "n=1000000 16B, 4 KiB blocks".into(),
        leveldb: t[0],
        rusty: t[1],
        ours: t[2],
    });

    // An engine's Get through L0..L6: one key against 7 tables' filters of
    // 20,000 keys each, half the keys in one of them, half in none. LevelDB
    // and rusty-leveldb call KeyMayMatch 7 times; this crate hashes the key
    // once (`key_hash`) and probes the 7 filters with it, each prepared
    // once as an engine keeps its tables' filters. Nanoseconds per Get.
    let levels: Vec<Vec<Vec<u8>>> = (0..7)
        .map(|_| random_keys(&mut rng, 20_000, 16..=16))
        .collect();
    let filters: Vec<Vec<u8>> = levels
        .iter()
        .map(|keys| {
            let mut filter = Vec::new();
            ours.create_filter(&slices(keys), &mut filter);
            filter
        })
        .collect();
    let filter_refs: Vec<&[u8]> = filters.iter().map(Vec::as_slice).collect();
    let prepared: Vec<BloomFilter<&[u8]>> = filter_refs
        .iter()
        .map(|f| BloomFilter::new(&ours, *f))
        .collect();
    let absent = random_keys(&mut rng, 10_000, 16..=16);
    let gets: Vec<Vec<u8>> = (0..10_000)
        .flat_map(|i| [levels[i % 7][i].clone(), absent[i].clone()])
        .collect();
    let get_set = KeySet::new(&gets);
    let get_refs = slices(&gets);
    let ours_levels = || {
        get_refs
            .iter()
            .map(|key| {
                let hash = ours.key_hash(key);
                prepared.iter().filter(|f| f.hash_may_match(hash)).count()
            })
            .sum::<usize>()
    };
    let rusty_levels = || {
        get_refs
            .iter()
            .map(|key| {
                filter_refs
                    .iter()
                    .filter(|f| rusty.key_may_match(key, f))
                    .count()
            })
            .sum::<usize>()
    };
    let want = leveldb.bench_levels(&get_set, &filter_refs);
    if ours_levels() != want || rusty_levels() != want {
        fail("levels".into());
    }
    let t = time(
        gets.len(),
        &mut [
            &mut || {
                black_box(leveldb.bench_levels(&get_set, black_box(&filter_refs)));
            },
            &mut || {
                black_box(rusty_levels());
            },
            &mut || {
                black_box(ours_levels());
            },
        ],
    );
    rows.push(Row {
        kind: "levels_get",
        name: "7 filters of 20000, half absent".into(),
        leveldb: t[0],
        rusty: t[1],
        ours: t[2],
    });

    println!(
        "{:<15} {:<32} {:>12} {:>12} {:>12} {:>9} {:>9}",
        "work", "workload", "leveldb ns", "rusty ns", "ours ns", "vs ldb", "vs rusty"
    );
    for r in &rows {
        println!(
            "{:<15} {:<32} {:>12.2} {:>12.2} {:>12.2} {:>8.2}x {:>8.2}x",
            r.kind,
            r.name,
            r.leveldb,
            r.rusty,
            r.ours,
            r.leveldb / r.ours,
            r.rusty / r.ours
        );
    }
    // The Get through 7 levels on a line of its own, before the two summary
    // lines (which keep their form).
    for r in rows.iter().filter(|r| r.kind == "single_prepared") {
        println!(
            "ratio_single_prepared {} vs_leveldb={:.2} vs_rusty={:.2}",
            r.name.trim_end_matches(" half absent").replace(' ', "_"),
            r.leveldb / r.ours,
            r.rusty / r.ours
        );
    }
    for r in rows.iter().filter(|r| r.kind == "levels_get") {
        println!(
            "ratio_levels_get vs_leveldb={:.2} vs_rusty={:.2}",
            r.leveldb / r.ours,
            r.rusty / r.ours
        );
    }
    let kinds = ["create", "single_query", "batch_query", "block_build"];
    for (label, other) in [("ratio_vs_leveldb", 0), ("ratio_vs_rusty", 1)] {
        let parts: Vec<String> = kinds
            .iter()
            .map(|kind| {
                let mut ratios: Vec<f64> = rows
                    .iter()
                    .filter(|r| r.kind == *kind)
                    .map(|r| {
                        if other == 0 {
                            r.leveldb / r.ours
                        } else {
                            r.rusty / r.ours
                        }
                    })
                    .collect();
                ratios.sort_by(f64::total_cmp);
                let median = if ratios.len() % 2 == 1 {
                    ratios[ratios.len() / 2]
                } else {
                    (ratios[ratios.len() / 2 - 1] + ratios[ratios.len() / 2]) / 2.0
                };
                format!("{kind}={median:.2}")
            })
            .collect();
        println!("{label} {}", parts.join(" "));
    }
}
