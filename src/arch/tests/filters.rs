//! Whole filters, the bits from hashes, and batch answers: every kernel
//! gives the portable one's bytes and answers, and LevelDB's formula.

use super::seed::check;
use super::{exercised, naive, variant, xorshift};
use crate::arch::Kernel;
use crate::hash::SEED;
use crate::{hash, BloomFilterPolicy, FilterPolicy, HashVariant};

/// Whole filters and batch answers: every kernel gives the portable one's
/// bytes, and the answers of one key at a time.
#[test]
fn kernels_agree_on_filters_and_batches() {
    fn prop(keys: Vec<Vec<u8>>, probes: Vec<Vec<u8>>, bits: u8, signed: bool) -> bool {
        let policy = BloomFilterPolicy::new(usize::from(bits % 51)).with_hash(variant(signed));
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut want = vec![7];
        policy.create_with(Kernel::Portable, &refs, &mut want);
        let filter = &want[1..];
        let probes: Vec<&[u8]> = probes
            .iter()
            .map(Vec::as_slice)
            .chain(refs.iter().copied())
            .collect();
        let answers: Vec<bool> = probes
            .iter()
            .map(|p| policy.single_with(Kernel::Portable, p, filter))
            .collect();
        Kernel::all().into_iter().all(|kernel| {
            let mut got = vec![7];
            policy.create_with(kernel, &refs, &mut got);
            let mut batch = vec![false; probes.len()];
            policy.batch_with(kernel, &probes, filter, &mut batch);
            let single: Vec<bool> = probes
                .iter()
                .map(|p| policy.single_with(kernel, p, filter))
                .collect();
            got == want && batch == answers && single == answers
        })
    }
    check(
        2_000,
        prop as fn(Vec<Vec<u8>>, Vec<Vec<u8>>, u8, bool) -> bool,
    );
    exercised("kernels_agree_on_filters_and_batches", &Kernel::all());
}

/// The bits each kernel sets from hashes (a filter block builder's
/// filters) against LevelDB's formula: any number of hashes, any bits per
/// key.
#[test]
fn kernels_agree_on_bits_from_hashes() {
    fn prop(n: u16, seed: u32, bits: u8) -> bool {
        let hashes: Vec<u32> = (0..u32::from(n % 300))
            .map(|i| i.wrapping_mul(0x9e37_79b9) ^ seed)
            .collect();
        let policy = BloomFilterPolicy::new(usize::from(bits % 51));
        let (bytes, k) = (policy.array_len(hashes.len()), policy.k());
        let mut want = vec![0u8; bytes];
        for &h in &hashes {
            for pos in naive(h, bytes as u64 * 8, k) {
                want[pos / 8] |= 1 << (pos % 8);
            }
        }
        Kernel::all().into_iter().all(|kernel| {
            let mut got = vec![0u8; bytes];
            kernel.insert_hashes(&hashes, k, &mut got);
            got == want
        })
    }
    check(3_000, prop as fn(u16, u32, u8) -> bool);
    exercised("kernels_agree_on_bits_from_hashes", &Kernel::all());
}

/// Filters and batches of keys of one length (the AVX2 kernel's work),
/// every length 0..=80, both variants, any bits per key.
#[test]
fn kernels_agree_on_keys_of_one_length() {
    fn prop(len: u8, n: u16, seed: u64, bits: u8, signed: bool) -> bool {
        let (len, n) = (usize::from(len % 81), usize::from(n % 300));
        let mut x = seed | 1;
        let keys: Vec<Vec<u8>> = (0..n)
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
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let policy = BloomFilterPolicy::new(usize::from(bits % 51)).with_hash(variant(signed));
        let mut want = Vec::new();
        policy.create_with(Kernel::Portable, &refs, &mut want);
        // Each key, and each key with its first byte changed (mostly absent).
        let others: Vec<Vec<u8>> = keys
            .iter()
            .filter(|k| !k.is_empty())
            .map(|k| [&[k[0] ^ 0x5a][..], &k[1..]].concat())
            .collect();
        let probes: Vec<&[u8]> = refs
            .iter()
            .copied()
            .chain(others.iter().map(Vec::as_slice))
            .collect();
        let answers: Vec<bool> = probes
            .iter()
            .map(|p| policy.single_with(Kernel::Portable, p, &want))
            .collect();
        Kernel::all().into_iter().all(|kernel| {
            let mut got = Vec::new();
            policy.create_with(kernel, &refs, &mut got);
            let mut batch = vec![false; probes.len()];
            policy.batch_with(kernel, &probes, &want, &mut batch);
            got == want && batch == answers
        })
    }
    check(3_000, prop as fn(u8, u16, u64, u8, bool) -> bool);
    exercised("kernels_agree_on_keys_of_one_length", &Kernel::all());
}

/// The filter of `keys` and the answers for `probes`, for both hash
/// variants, asserted the same on every kernel as on the portable one; the
/// answers, a vector per variant.
fn kernels_agree(keys: &[&[u8]], probes: &[&[u8]], what: &str) -> Vec<Vec<bool>> {
    [HashVariant::Unsigned, HashVariant::Signed]
        .into_iter()
        .map(|variant| {
            let policy = BloomFilterPolicy::new(10).with_hash(variant);
            // The filter and answers by `naive`, probe by probe.
            let bits = (keys.len() as u64 * 10).max(64).div_ceil(8) * 8;
            let k = policy.k();
            let positions = |key: &[u8]| naive(hash(key, SEED, variant), bits, k);
            let mut want = vec![0u8; bits as usize / 8];
            for &key in keys {
                for pos in positions(key) {
                    want[pos / 8] |= 1 << (pos % 8);
                }
            }
            want.push(k as u8);
            let answers: Vec<bool> = probes
                .iter()
                .map(|&p| {
                    positions(p)
                        .iter()
                        .all(|&pos| want[pos / 8] & (1 << (pos % 8)) != 0)
                })
                .collect();
            for kernel in Kernel::all() {
                let mut got = Vec::new();
                policy.create_with(kernel, keys, &mut got);
                assert!(got == want, "{kernel:?} {what} {variant:?}");
                let mut batch = vec![false; probes.len()];
                policy.batch_with(kernel, probes, &want, &mut batch);
                assert!(batch == answers, "{kernel:?} {what} {variant:?}");
            }
            answers
        })
        .collect()
}

/// Many keys of every length 0..=80 (the AVX-512 kernel sorts windows of
/// varying lengths, and lengths from 64 on share a class), with tail bytes
/// >= 0x80: the same filters and answers on every kernel.
#[test]
fn kernels_agree_on_many_keys_of_mixed_lengths() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    for n in [255, 256, 1000, 4096, 4097, 9000] {
        let keys: Vec<Vec<u8>> = (0..n)
            .map(|_| {
                let len = (next() % 81) as usize;
                (0..len).map(|_| next() as u8 | 0x40).collect()
            })
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let probes: Vec<&[u8]> = refs
            .iter()
            .map(|k| &k[k.len() / 3..])
            .chain(refs.iter().copied())
            .collect();
        for answers in kernels_agree(&refs, &probes, &format!("n {n}")) {
            assert!(
                answers[probes.len() - n..].iter().all(|&hit| hit),
                "no false negatives"
            );
        }
    }
    exercised(
        "kernels_agree_on_many_keys_of_mixed_lengths",
        &Kernel::all(),
    );
}

/// Windows of 16-byte keys with a few keys of other lengths (0, 3, 17, 70
/// bytes) that the vector kernels' samples of lengths miss. The same
/// filters and answers on every kernel, windows of present and of absent
/// keys in turn (the AVX-512 kernel answers a window by the cascade or by
/// pairs, chosen by the last window's answers, and switches both ways).
#[test]
fn kernels_agree_when_a_few_keys_have_other_lengths() {
    let mut keys: Vec<Vec<u8>> = (1..=4096u64)
        .map(|i| {
            let x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            (0..16).map(|j| (x >> (4 * j)) as u8 | 0x80).collect()
        })
        .collect();
    for (at, len) in [(1, 17), (1000, 0), (2001, 3), (4095, 70)] {
        keys[at] = (0..len).map(|j| j as u8 ^ 0xa5).collect();
    }
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let absent = refs.iter().map(|k| &k[k.len() / 2..]);
    let probes: Vec<&[u8]> = refs
        .iter()
        .copied()
        .chain(refs.iter().copied())
        .chain(absent.clone())
        .chain(absent)
        .collect();
    for answers in kernels_agree(&refs, &probes, "a few other lengths") {
        assert!(
            answers[..2 * refs.len()].iter().all(|&hit| hit),
            "no false negatives"
        );
    }
    exercised(
        "kernels_agree_when_a_few_keys_have_other_lengths",
        &Kernel::all(),
    );
}

/// Filters past the L2 cache of many cores (625 KB, k = 30; 125 KB, k = 6,
/// one of the k whose probes unroll) of more keys than the kernels
/// prefetch from: LevelDB's formula's bytes and answers on every kernel,
/// batched or not.
#[test]
fn large_filters_agree_with_the_formula() {
    let keys: Vec<Vec<u8>> = (0u32..100_000)
        .map(|i| [i.to_le_bytes(), (i * 7).to_le_bytes(), [0x80, 1, 2, 0xff]].concat())
        .collect();
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    let kernels = Kernel::all();
    let variants = [HashVariant::Unsigned, HashVariant::Signed];
    for (variant, bits_per_key) in variants.into_iter().flat_map(|v| [(v, 50), (v, 10)]) {
        let policy = BloomFilterPolicy::new(bits_per_key).with_hash(variant);
        let bits = 100_000 * bits_per_key;
        let positions = |key: &[u8]| naive(hash(key, SEED, variant), bits as u64, policy.k());
        let mut want = vec![0u8; bits / 8];
        for key in &refs {
            for pos in positions(key) {
                want[pos / 8] |= 1 << (pos % 8);
            }
        }
        want.push(policy.k() as u8);
        for &kernel in &kernels {
            let mut filter = Vec::new();
            policy.create_with(kernel, &refs, &mut filter);
            assert!(filter == want, "{kernel:?} {variant:?}");
            let probes: Vec<&[u8]> = refs
                .iter()
                .step_by(50)
                .copied()
                .chain(refs.iter().map(|k| &k[1..]))
                .collect();
            let mut batch = vec![false; probes.len()];
            policy.batch_with(kernel, &probes, &filter, &mut batch);
            for (probe, answer) in probes.iter().zip(&batch) {
                let naive = positions(probe)
                    .iter()
                    .all(|&pos| want[pos / 8] & (1 << (pos % 8)) != 0);
                assert_eq!(*answer, naive, "{kernel:?} {variant:?}");
                assert_eq!(*answer, policy.single_with(kernel, probe, &filter));
                assert_eq!(*answer, policy.key_may_match(probe, &filter));
            }
        }
    }
    exercised("large_filters_agree_with_the_formula", &kernels);
}
