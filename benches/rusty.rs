//! rusty-leveldb with its own Bloom filter and with this crate's
//! (`RustyPolicy`), same keys, same options: writes with compaction, then
//! random reads, half of absent keys. `cargo bench --bench rusty --features
//! rusty-leveldb`. Prints seconds and the ratio; best of 6 runs each.

mod common;

use common::cpu;
use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

use leveldb_filter::rusty::RustyPolicy;
use leveldb_filter::BloomFilterPolicy;
use rusty_leveldb::{BloomPolicy, FilterPolicy, Options, DB};

const KEYS: u32 = 200_000;

fn key(i: u32) -> [u8; 16] {
    let x = u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&x.to_be_bytes());
    k[8..].copy_from_slice(&x.rotate_left(29).to_le_bytes());
    k
}

/// (write with compaction, random reads) for a policy.
fn run(policy: Box<dyn FilterPolicy>) -> (Duration, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        filter_policy: Rc::new(policy),
        write_buffer_size: 1 << 20,
        ..Default::default()
    };
    let value = [0x5au8; 100];
    let start = Instant::now();
    let mut db = DB::open(dir.path().join("db"), options).unwrap();
    for i in 0..KEYS {
        db.put(&key(i), &value).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(&[0u8; 16], &[0xffu8; 16]).unwrap();
    let write = start.elapsed();
    let start = Instant::now();
    let mut found = 0;
    for i in 0..KEYS {
        // Even i: a written key; odd: one never written.
        let k = if i % 2 == 0 {
            key(i.wrapping_mul(7) % KEYS)
        } else {
            key(KEYS + i)
        };
        found += usize::from(db.get(black_box(&k)).is_some());
    }
    let read = start.elapsed();
    assert_eq!(found, KEYS as usize / 2);
    db.close().unwrap();
    (write, read)
}

fn main() {
    println!("cpu: {}; kernel: {}", cpu(), leveldb_filter::kernel());
    let mut best = [(Duration::MAX, Duration::MAX); 2];
    // Alternating which goes first: the second run of a pair pays for the
    // first's dirty pages.
    for round in 0..6 {
        let ours = || run(Box::new(RustyPolicy::new(BloomFilterPolicy::new(10))));
        let theirs = || run(Box::new(BloomPolicy::new(10)));
        let runs = if round % 2 == 0 {
            [theirs(), ours()]
        } else {
            let o = ours();
            [theirs(), o]
        };
        for (b, r) in best.iter_mut().zip(runs) {
            *b = (b.0.min(r.0), b.1.min(r.1));
        }
    }
    let [(w0, r0), (w1, r1)] = best;
    println!("rusty-leveldb {KEYS} keys of 16 bytes, 100-byte values, 10 bits per key");
    println!("filter          write+compact s   random reads s");
    println!(
        "rusty's own     {:>15.3} {:>16.3}",
        w0.as_secs_f64(),
        r0.as_secs_f64()
    );
    println!(
        "leveldb-filter  {:>15.3} {:>16.3}",
        w1.as_secs_f64(),
        r1.as_secs_f64()
    );
    println!(
        "ratio (rusty's own / ours): write {:.2} read {:.2}",
        w0.as_secs_f64() / w1.as_secs_f64(),
        r0.as_secs_f64() / r1.as_secs_f64()
    );
}
