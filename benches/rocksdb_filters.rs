//! RocksDB's filters (FastLocalBloom, Standard128Ribbon, LegacyBloom) built
//! and read by this crate beside RocksDB's own builders and readers, on the
//! same keys in one run, against each RocksDB program
//! `scripts/rocksdb-peers` built into `target/rocksdb-peers/` (RocksDB 7.8.3
//! from Debian, RocksDB 11.12 built for this CPU):
//!
//!     scripts/rocksdb-peers && cargo bench --bench rocksdb_filters
//!
//! Keys: 16 random bytes (`rand:1:N:16:16`), 10 bits per key; queries: the
//! keys, then as many absent ones (`rand:2:N:16:16`). Work: `build` (every
//! key added, then the filter's bytes), `single` (one lookup a query),
//! `batch` (32 queries a call, as RocksDB's `MultiGet` calls its reader's
//! `MayMatch(num_keys, ...)`). Each figure is the best of several rounds,
//! each side timed in turn three times over, after both sides are checked
//! to give the same filter bytes and the same answer to every query; then
//! one line a row:
//!
//!     ratio_vs_rocksdb peer=P filter=F keys=N work=W ratio=R
//!
//! with R RocksDB's time over this crate's. `ROCKSDB_PEERS=DIR` looks for
//! the peers elsewhere (without them, only this crate's figures);
//! `ROCKSDB_FILTERS=fastbloom,ribbon` times only those; `ROCKSDB_CHECK=1`
//! runs one round once, for the check of bytes and answers alone (CI's
//! differential test), and prints no ratio.

mod common;
use leveldb_filter_testkit::vectors;

use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use leveldb_filter::rocksdb::{
    FastLocalBloomBuilder, FilterBits, LegacyBloomBuilder, RibbonBuilder,
};

/// Queries a batch call answers, as RocksDB's `MultiGet` batches them
/// (`MultiGetContext::MAX_BATCH_SIZE`).
const BATCH: usize = 32;
const BITS_PER_KEY: f64 = 10.0;
const FILTERS: [&str; 3] = ["fastbloom", "ribbon", "legacybloom"];
const PEERS: [&str; 2] = ["rocksdb-7.8.3", "rocksdb-11.12-native"];
/// Times each side is timed, in turn.
const REPEATS: usize = 3;

/// Nanoseconds per key (build) or per query (single, batch), and what
/// identifies the result: the filter's length and FNV-1a of its bytes, the
/// answers' count and FNV-1a of them in order.
#[derive(Debug, Clone, PartialEq)]
struct Figures {
    build: f64,
    single: f64,
    batch: f64,
    filter: String,
    answers: String,
}

fn fnv(bytes: impl IntoIterator<Item = u8>, mut h: u64) -> u64 {
    for b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h
}
const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

fn build(filter: &str, keys: &[&[u8]]) -> Vec<u8> {
    let keys = keys.iter().copied();
    match filter {
        "fastbloom" => FastLocalBloomBuilder::new(BITS_PER_KEY).build(keys),
        "ribbon" => RibbonBuilder::new(BITS_PER_KEY).build(keys),
        "legacybloom" => LegacyBloomBuilder::new(BITS_PER_KEY).build(keys),
        _ => unreachable!("a filter of FILTERS"),
    }
}

/// This crate's figures, timed as the peer program times RocksDB's.
fn ours(filter: &str, n: usize, rounds: usize) -> Figures {
    let present = vectors::ribbon_keys(&format!("rand:1:{n}:16:16"));
    let absent = vectors::ribbon_keys(&format!("rand:2:{n}:16:16"));
    let queries: Vec<&[u8]> = present.iter().chain(&absent).map(Vec::as_slice).collect();
    let keys = &queries[..n];
    let (mut built, mut single, mut batch) = (f64::MAX, f64::MAX, f64::MAX);
    let mut bytes = Vec::new();
    for _ in 0..rounds {
        let t0 = Instant::now();
        bytes = black_box(build(filter, black_box(keys)));
        built = built.min(t0.elapsed().as_nanos() as f64 / n as f64);
    }
    let bits = FilterBits::parse(&bytes);
    let mut one = vec![false; queries.len()];
    let mut many = vec![false; queries.len()];
    // The answers' arrays escape once, so that their stores stay inside
    // the timed loops.
    black_box((&mut one, &mut many));
    // The queries pass with no `black_box`, as the peer passes them: the
    // answers are kept, and a barrier on each key would lengthen each
    // query's chain of latencies by a store and a load the peer has not.
    for _ in 0..rounds {
        let t0 = Instant::now();
        for (answer, key) in one.iter_mut().zip(&queries) {
            *answer = bits.may_match(key);
        }
        let t1 = Instant::now();
        for (out, keys) in many.chunks_mut(BATCH).zip(queries.chunks(BATCH)) {
            bits.may_match_batch(keys, out);
        }
        let t2 = Instant::now();
        single = single.min((t1 - t0).as_nanos() as f64 / queries.len() as f64);
        batch = batch.min((t2 - t1).as_nanos() as f64 / queries.len() as f64);
    }
    assert_eq!(one, many, "{filter}: single and batch answers differ");
    let count = one.iter().filter(|&&a| a).count();
    assert!(
        one[..n].iter().all(|&a| a),
        "{filter}: a key of the filter absent"
    );
    Figures {
        build: built,
        single,
        batch,
        filter: format!(
            "{}:{:016x}",
            bytes.len(),
            fnv(bytes.iter().copied(), FNV_START)
        ),
        answers: format!(
            "{count}:{:016x}",
            fnv(one.iter().map(|&a| a as u8), FNV_START)
        ),
    }
}

/// The faster of each figure, where both give the same bytes and answers
/// (else the later, whose difference the caller reports).
fn best(a: Option<Figures>, b: Figures) -> Figures {
    match a {
        Some(a) if a.filter == b.filter && a.answers == b.answers => Figures {
            build: a.build.min(b.build),
            single: a.single.min(b.single),
            batch: a.batch.min(b.batch),
            ..b
        },
        _ => b,
    }
}

/// A peer's figures, from its one line of output.
fn theirs(peer: &PathBuf, filter: &str, n: usize, rounds: usize) -> Result<Figures, String> {
    let out = Command::new(peer)
        .args([
            filter,
            &n.to_string(),
            &rounds.to_string(),
            &BATCH.to_string(),
        ])
        .output()
        .map_err(|e| format!("{}: {e}", peer.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{}: {} {err}", peer.display(), out.status));
    }
    let field = |name: &str| -> Result<&str, String> {
        text.split_whitespace()
            .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
            .ok_or_else(|| format!("{}: no {name} in {text:?}", peer.display()))
    };
    let number = |name: &str| -> Result<f64, String> {
        field(name)?
            .parse()
            .map_err(|e| format!("{}: {name}: {e}", peer.display()))
    };
    Ok(Figures {
        build: number("build_ns")?,
        single: number("single_ns")?,
        batch: number("batch_ns")?,
        filter: field("filter")?.to_string(),
        answers: field("answers")?.to_string(),
    })
}

fn main() {
    let check = std::env::var("ROCKSDB_CHECK").is_ok_and(|v| v == "1");
    let dir = std::env::var_os("ROCKSDB_PEERS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/rocksdb-peers"),
        PathBuf::from,
    );
    let peers: Vec<(&str, PathBuf)> = PEERS
        .iter()
        .map(|&p| (p, dir.join(p)))
        .filter(|(p, path)| {
            let there = path.is_file();
            if !there {
                println!(
                    "peer {p}: not at {} (scripts/rocksdb-peers builds it)",
                    path.display()
                );
            }
            there
        })
        .collect();
    println!("cpu: {}", common::cpu());
    println!("kernel: {}", leveldb_filter::kernel());
    println!(
        "{:<22} {:<12} {:>9} {:>9} {:>9} {:>9}",
        "who", "filter", "keys", "build", "single", "batch"
    );
    let only = std::env::var("ROCKSDB_FILTERS").unwrap_or_default();
    // A check with a peer missing has checked less than it was asked to.
    let mut failed = check && peers.len() < PEERS.len();
    let repeats = if check { 1 } else { REPEATS };
    for (n, rounds) in [(10_000, 50), (1_000_000, 5)] {
        let rounds = if check { 1 } else { rounds };
        for filter in FILTERS {
            if !only.is_empty() && !only.split(',').any(|f| f == filter) {
                continue;
            }
            // Each side timed in turn, three times over, and the best of
            // each taken: the machine's clock varies over seconds, and
            // timing one side after the other would hand one of them its
            // slow spell.
            let mut mine: Option<Figures> = None;
            let mut their: Vec<Option<Figures>> = vec![None; peers.len()];
            for _ in 0..repeats {
                mine = Some(best(mine, ours(filter, n, rounds)));
                for ((peer, path), their) in peers.iter().zip(&mut their) {
                    match theirs(path, filter, n, rounds) {
                        Ok(f) => *their = Some(best(their.take(), f)),
                        Err(e) => {
                            println!("peer {peer}: {e}");
                            failed = true;
                        }
                    }
                }
            }
            let mine = mine.expect("repeats > 0");
            let row = |who: &str, f: &Figures| {
                println!(
                    "{who:<22} {filter:<12} {n:>9} {:>9.2} {:>9.2} {:>9.2}",
                    f.build, f.single, f.batch
                );
            };
            row("leveldb-filter", &mine);
            for ((peer, _), their) in peers.iter().zip(their) {
                let Some(their) = their else { continue };
                row(peer, &their);
                if their.filter != mine.filter || their.answers != mine.answers {
                    println!(
                        "peer {peer}: {filter} keys={n}: RocksDB's filter {} answers {}, ours {} and {}",
                        their.filter, their.answers, mine.filter, mine.answers
                    );
                    failed = true;
                    continue;
                }
                if check {
                    // One round's figures: no ratio to print.
                    continue;
                }
                for (work, t, o) in [
                    ("build", their.build, mine.build),
                    ("single", their.single, mine.single),
                    ("batch", their.batch, mine.batch),
                ] {
                    println!(
                        "ratio_vs_rocksdb peer={peer} filter={filter} keys={n} work={work} ratio={:.2}",
                        t / o
                    );
                }
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
