//! RocksDB's FastLocalBloom probes (`rocksdb::local`): every kernel answers
//! single lookups and batches as the portable code, on any bytes and every
//! probe count, and as RocksDB's formula (the bits `FastLocalBloomImpl`
//! tests, written out here).

use super::seed::check;
use super::{exercised, xorshift};
use crate::arch::{resolved, Kernel};
use crate::rocksdb::hash64;
use crate::rocksdb::local::fast_local_test;

/// RocksDB's `HashMayMatch`: the block by the low half, probes by the high
/// half multiplied on, one at a time.
fn naive(data: &[u8], probes: u32, key: &[u8]) -> bool {
    let h = hash64(key);
    let blocks = (data.len() / 64) as u64;
    let block = (((h & 0xffff_ffff) * blocks) >> 32) as usize;
    let mut h2 = (h >> 32) as u32;
    (0..probes).all(|_| {
        let bit = block * 512 + (h2 >> 23) as usize;
        h2 = h2.wrapping_mul(0x9e37_79b9);
        data[bit / 8] >> (bit % 8) & 1 == 1
    })
}

/// Single lookups and batches of any keys against arrays of whole blocks
/// filled at random, dense and sparse, probes 1 to 30.
#[test]
fn kernels_agree_on_fast_local_bloom() {
    let kernels = Kernel::all();
    let mut next = xorshift(0x5eed_10ca_1b10_0f17);
    for blocks in [1usize, 2, 3, 17, 200] {
        for density in [0u32, 1, 2, 3] {
            let data: Vec<u8> = (0..blocks * 64)
                .map(|_| {
                    let r = next();
                    // OR-ing two or three draws: most bits set, which
                    // makes "may match" common too.
                    (0..density).fold(r as u8, |b, i| b | (r >> (8 * (i + 1))) as u8)
                })
                .collect();
            let keys: Vec<Vec<u8>> = (0..300)
                .map(|i| {
                    let r = next();
                    r.to_le_bytes()[..1 + i % 8]
                        .iter()
                        .chain(&(r >> 3).to_le_bytes())
                        .copied()
                        .collect()
                })
                .collect();
            let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            for probes in 1..=30 {
                let want: Vec<bool> = keys.iter().map(|k| naive(&data, probes, k)).collect();
                let portable: Vec<bool> = keys
                    .iter()
                    .map(|k| fast_local_test(&data, probes, hash64(k)))
                    .collect();
                assert_eq!(portable, want, "portable: {blocks} blocks, {probes} probes");
                for &kernel in &kernels {
                    for (key, &want) in keys.iter().zip(&want) {
                        let got =
                            resolved::fast_local_on(kernel, &data, probes, key).unwrap_or(want);
                        assert_eq!(
                            got,
                            want,
                            "{}: {blocks} blocks, {probes} probes",
                            kernel.name()
                        );
                    }
                    let mut out = vec![false; keys.len()];
                    if kernel.fast_local_batch(&data, probes, &keys, &mut out) {
                        assert_eq!(
                            out,
                            want,
                            "{} batch: {blocks} blocks, {probes} probes",
                            kernel.name()
                        );
                    }
                }
            }
        }
    }
    exercised("kernels_agree_on_fast_local_bloom", &kernels);
}

/// Any bytes as a bit array (its whole blocks read), any probe count the
/// reader takes.
#[test]
fn kernels_agree_on_fast_local_bloom_of_any_bytes() {
    fn prop(data: Vec<u8>, probes: u8, keys: Vec<Vec<u8>>) -> bool {
        let probes = u32::from(probes % 30) + 1;
        if data.len() < 64 {
            return true;
        }
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let want: Vec<bool> = keys.iter().map(|k| naive(&data, probes, k)).collect();
        Kernel::all().into_iter().all(|kernel| {
            let single = keys.iter().zip(&want).all(|(key, &want)| {
                resolved::fast_local_on(kernel, &data, probes, key).unwrap_or(want) == want
            });
            let mut out = vec![false; keys.len()];
            let batch = !kernel.fast_local_batch(&data, probes, &keys, &mut out) || out == want;
            single && batch
        })
    }
    check(2_000, prop as fn(Vec<u8>, u8, Vec<Vec<u8>>) -> bool);
}
