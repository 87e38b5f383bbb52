//! RocksDB's filters built and probed by this crate, per key: Ribbon
//! (`rocksdb::RibbonBuilder`) beside FastLocalBloom at the same bits per
//! key, and beside RocksDB 7.8's own Ribbon builder and reader where
//! `RIBBON_ORACLE` names `oracle/rocksdb-7.8/gen-ribbon` (built with `g++ -O2
//! ... -lrocksdb`), on the same keys in the same run:
//!
//!     RIBBON_ORACLE=/tmp/gen-ribbon cargo bench --bench ribbon
//!
//! Keys: 16 random bytes each, the key set `rand:1:N:16:16` of
//! `gen-ribbon.cc`; queries: the keys, then as many absent ones. Each figure
//! is the best of several rounds.

mod common;
// The key sets of `ribbon.vec`, as the tests make them.
use leveldb_filter_testkit::vectors;

use std::hint::black_box;
use std::time::Instant;

use leveldb_filter::rocksdb::{FastLocalBloomBuilder, FilterBits, RibbonBuilder};

/// Nanoseconds per key to build (with `build`) and to query (the keys,
/// then the absent ones), the best of `rounds`.
fn time(
    present: &[Vec<u8>],
    absent: &[Vec<u8>],
    rounds: usize,
    build: impl Fn(&[Vec<u8>]) -> Vec<u8>,
) -> (f64, f64) {
    let (mut built, mut queried) = (f64::MAX, f64::MAX);
    for _ in 0..rounds {
        let t0 = Instant::now();
        let filter = black_box(build(present));
        let t1 = Instant::now();
        let bits = FilterBits::parse(&filter);
        let matched = present
            .iter()
            .chain(absent)
            .filter(|k| bits.may_match(black_box(k)))
            .count();
        let t2 = Instant::now();
        assert!(matched >= present.len(), "a key of the filter is absent");
        built = built.min((t1 - t0).as_nanos() as f64 / present.len() as f64);
        queried = queried.min((t2 - t1).as_nanos() as f64 / (2 * present.len()) as f64);
    }
    (built, queried)
}

/// RocksDB's own figures, from `gen-ribbon --time N BITS ROUNDS`.
fn rocksdb(oracle: &str, n: usize, bits: f64, rounds: usize) -> Option<(f64, f64)> {
    let out = std::process::Command::new(oracle)
        .args([
            "--time",
            &n.to_string(),
            &bits.to_string(),
            &rounds.to_string(),
        ])
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let field = |name: &str| -> Option<f64> {
        let rest = text.split(&format!("{name}=")).nth(1)?;
        rest.split_whitespace().next()?.parse().ok()
    };
    Some((field("build_ns_per_key")?, field("query_ns_per_key")?))
}

fn main() {
    let oracle = std::env::var("RIBBON_ORACLE").ok();
    println!("cpu: {}", common::cpu());
    println!("keys      bpk  filter                 build ns/key  query ns/key");
    for (n, rounds) in [(10_000, 50), (1_000_000, 5)] {
        let keys = |seed| vectors::ribbon_keys(&format!("rand:{seed}:{n}:16:16"));
        let (present, absent) = (keys(1), keys(2));
        let bits = 10.0;
        let ribbon = RibbonBuilder::new(bits);
        let bloom = FastLocalBloomBuilder::new(bits);
        let ours = time(&present, &absent, rounds, |k| {
            ribbon.build(k.iter().map(Vec::as_slice))
        });
        let fast = time(&present, &absent, rounds, |k| {
            bloom.build(k.iter().map(Vec::as_slice))
        });
        let row = |name: &str, (b, q): (f64, f64)| {
            println!("{n:<9} {bits:<4} {name:<22} {b:>12.1}  {q:>12.1}");
        };
        row("Ribbon (this crate)", ours);
        row("FastLocalBloom (this)", fast);
        if let Some(theirs) = oracle.as_deref().and_then(|o| rocksdb(o, n, bits, rounds)) {
            row("Ribbon (RocksDB 7.8)", theirs);
            println!(
                "ratio_vs_rocksdb keys={n} ribbon_build={:.2} ribbon_query={:.2}",
                theirs.0 / ours.0,
                theirs.1 / ours.1
            );
        }
    }
}
