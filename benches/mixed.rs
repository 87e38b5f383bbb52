//! What a kernel costs the code around it: 34-key filters (a LevelDB
//! filter block's usual) made between stretches of plain integer code, as
//! an engine's compaction makes them. Prints the time of the plain code
//! alone, with the filters between, and of the filters alone; best of 5.
//!
//!     cargo bench --bench mixed                      # the default kernel
//!     LEVELDB_FILTER_KERNEL=avx512 cargo bench --bench mixed
//!
//! On Intel's cores 512-bit vectors lower the clock for a while after
//! them: there the plain code slows down when the AVX-512 kernel runs
//! between its stretches (which is why AVX2 is the default on Intel).

use std::hint::black_box;
use std::time::{Duration, Instant};

use leveldb_filter::{BloomFilterPolicy, FilterPolicy};

const ROUNDS: usize = 20_000;

/// Plain integer code: `n` rounds of multiply and rotate.
fn plain(n: u64) -> u64 {
    let mut h = 0u64;
    for i in 0..n {
        h = (h ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17);
    }
    h
}

fn main() {
    let policy = BloomFilterPolicy::new(10);
    let mut x = 1u64;
    let keys: Vec<[u8; 16]> = (0..34)
        .map(|_| {
            x = x.wrapping_mul(0x5851_f42d_4c95_7f2d).wrapping_add(1);
            u128::from(x)
                .wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)
                .to_le_bytes()
        })
        .collect();
    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    let mut dst = Vec::new();
    let mut best = [Duration::MAX; 3];
    for _ in 0..5 {
        let timed = |f: &mut dyn FnMut()| {
            let start = Instant::now();
            f();
            start.elapsed()
        };
        let alone = timed(&mut || {
            for _ in 0..ROUNDS {
                black_box(plain(black_box(2000)));
            }
        });
        let mixed = timed(&mut || {
            for _ in 0..ROUNDS {
                black_box(plain(black_box(2000)));
                dst.clear();
                policy.create_filter(black_box(&refs), &mut dst);
            }
        });
        let filters = timed(&mut || {
            for _ in 0..ROUNDS {
                dst.clear();
                policy.create_filter(black_box(&refs), &mut dst);
            }
        });
        for (b, t) in best.iter_mut().zip([alone, mixed, filters]) {
            *b = (*b).min(t);
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let [alone, mixed, filters] = best;
    println!("kernel: {}", leveldb_filter::kernel());
    println!(
        "plain code alone {:.1} ms; with filters between {:.1} ms; filters alone {:.1} ms",
        ms(alone),
        ms(mixed),
        ms(filters)
    );
    println!(
        "the plain code's share slowed by {:+.1}%",
        (ms(mixed) - ms(filters) - ms(alone)) / ms(alone) * 100.0
    );
}
