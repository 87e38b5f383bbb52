//! Every kernel this CPU runs against LevelDB's formula and the portable
//! kernel. Each test ends by naming the kernels it exercised
//! ([`exercised`]): where `LEVELDB_FILTER_EXPECT_KERNELS` lists the kernels
//! the CPU has (CI reads them from `/proc/cpuinfo`), a test that skipped one
//! fails.

use std::collections::BTreeSet;

use quickcheck::TestResult;

#[path = "seed.rs"]
mod seed;
use seed::check;

use super::portable::Modulus;
use super::Kernel;
use crate::hash::SEED;
use crate::{hash, BloomFilterPolicy, FilterPolicy, HashVariant};

/// Prints the kernels a test ran; where `LEVELDB_FILTER_EXPECT_KERNELS`
/// names the kernels this CPU has (comma-separated), fails unless the test
/// ran each of them.
fn exercised(test: &str, kernels: &[Kernel]) {
    let ran: BTreeSet<&str> = kernels.iter().map(|kernel| kernel.name()).collect();
    let names: Vec<&str> = ran.iter().copied().collect();
    println!("{test}: kernels exercised: {}", names.join(", "));
    if let Ok(expected) = std::env::var("LEVELDB_FILTER_EXPECT_KERNELS") {
        let expected: BTreeSet<&str> = expected
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .collect();
        assert_eq!(
            ran, expected,
            "{test}: the kernels exercised are not those LEVELDB_FILTER_EXPECT_KERNELS names"
        );
    }
}

/// `LEVELDB_FILTER_KERNEL=portable` asks for the portable kernel, and so
/// does `scalar`, its old name, which older scripts set.
#[test]
fn the_portable_kernel_is_asked_for_by_either_name() {
    for name in ["portable", "scalar"] {
        let kernel = Kernel::asked_for(name);
        assert_eq!(kernel, Kernel::Portable, "{name}");
        assert_eq!(kernel.name(), "portable");
    }
}

/// LevelDB's positions: `(h + j * delta) % bits`, h widened to 64 bits.
fn naive(h: u32, bits: u64, k: usize) -> Vec<usize> {
    let delta = h.rotate_right(17);
    (0..k as u32)
        .map(|j| (u64::from(h.wrapping_add(j.wrapping_mul(delta))) % bits) as usize)
        .collect()
}

fn variant(signed: bool) -> HashVariant {
    if signed {
        HashVariant::Signed
    } else {
        HashVariant::Unsigned
    }
}

/// The portable reduction, every filter size from 64 bits to past 2^32
/// bits (where LevelDB's position is h itself).
#[test]
fn reduction_matches_leveldb_for_any_filter_size() {
    fn prop(h: u32, bytes: u64) -> TestResult {
        let bits = 64 + (bytes % (1 << 30)) * 8;
        let modulus = Modulus::new((bits / 8) as usize);
        let delta = h.rotate_right(17);
        let fast: Vec<usize> = (0..30u32)
            .map(|j| modulus.position(h.wrapping_add(j.wrapping_mul(delta))) as usize)
            .collect();
        TestResult::from_bool(fast == naive(h, bits, 30))
    }
    check(20_000, prop as fn(u32, u64) -> TestResult);
    for bits in [
        64,
        72,
        1 << 20,
        (1 << 32) - 8,
        1 << 32,
        (1 << 32) + 8,
        1 << 40,
    ] {
        let modulus = Modulus::new((bits / 8) as usize);
        for h in [
            0,
            1,
            0x7fff_ffff,
            0x8000_0000,
            0xdead_beef,
            u32::MAX - 1,
            u32::MAX,
        ] {
            assert_eq!(
                modulus.position(h),
                u64::from(h) % bits,
                "h {h:#x} bits {bits}"
            );
        }
    }
}

/// Each kernel's hashes and probe positions against the hash and LevelDB's
/// formula: keys of one length and of mixed lengths, both variants, filters
/// of any size the vector kernels take.
#[test]
fn kernels_agree_on_positions() {
    fn prop(keys: Vec<Vec<u8>>, same_len: u8, bytes: u32, signed: bool) -> bool {
        let mut keys: Vec<Vec<u8>> = keys.into_iter().take(40).collect();
        if same_len.is_multiple_of(2) {
            let len = usize::from(same_len % 40);
            for k in &mut keys {
                k.resize(len, 0x9c);
            }
        }
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let variant = variant(signed);
        // 64 bits to 2^31 - 8, the largest multiple of 8 below 2^31.
        let bits = 64 + u64::from(bytes % ((1 << 28) - 8)) * 8;
        let hashes: Vec<u32> = refs.iter().map(|key| hash(key, SEED, variant)).collect();
        let want: Vec<Vec<usize>> = hashes.iter().map(|&h| naive(h, bits, 30)).collect();
        Kernel::all().into_iter().all(|kernel| {
            let positions = kernel.positions(&hashes, bits);
            kernel.hashes(&refs, variant) == hashes
                && positions.len() == want.len()
                && positions
                    .iter()
                    .zip(&want)
                    .all(|(got, want)| got.iter().zip(want).all(|(&a, &b)| a as usize == b))
        })
    }
    check(5_000, prop as fn(Vec<Vec<u8>>, u8, u32, bool) -> bool);
    exercised("kernels_agree_on_positions", &Kernel::all());
}

/// Each kernel's reduction where a quotient is closest to going wrong: h at
/// and next to multiples of bits, and the largest sizes.
#[test]
fn positions_are_exact_next_to_multiples() {
    let kernels = Kernel::all();
    for bits in [
        64u64,
        72,
        1000,
        1 << 20,
        (1 << 31) - 8,
        1 << 31,
        0x7654_3210,
    ] {
        let mut values: Vec<u32> = vec![0, 1, u32::MAX, u32::MAX - 1];
        for q in [
            1u64,
            2,
            3,
            7,
            1 << 10,
            (1 << 32) / bits - 1,
            (1 << 32) / bits,
        ] {
            for offset in [-1i64, 0, 1] {
                let h = (q * bits) as i64 + offset;
                if (0..=i64::from(u32::MAX)).contains(&h) {
                    values.push(h as u32);
                }
            }
        }
        for &kernel in &kernels {
            let got = kernel.positions(&values, bits);
            for (&h, got) in values.iter().zip(&got) {
                for (j, want) in naive(h, bits, 30).into_iter().enumerate() {
                    assert_eq!(
                        got[j] as usize, want,
                        "{kernel:?} h {h:#x} bits {bits} probe {j}"
                    );
                }
            }
        }
    }
    exercised("positions_are_exact_next_to_multiples", &kernels);
}

/// Each kernel's hash on groups of keys of every length, and of mixed
/// lengths, tails with bytes >= 0x80, both variants.
#[test]
fn hashes_match_on_every_length() {
    let kernels = Kernel::all();
    let check = |keys: &[Vec<u8>], what: &str| {
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        for variant in [HashVariant::Unsigned, HashVariant::Signed] {
            let want: Vec<u32> = refs.iter().map(|key| hash(key, SEED, variant)).collect();
            for n in [1, 5, 8, 16, 17, 32] {
                for &kernel in &kernels {
                    assert_eq!(
                        kernel.hashes(&refs[..n], variant),
                        want[..n],
                        "{kernel:?} {what} n {n} {variant:?}"
                    );
                }
            }
        }
    };
    for first in 0..=70usize {
        let keys: Vec<Vec<u8>> = (0..32)
            .map(|i| {
                (0..(first + i * 7) % 71)
                    .map(|j| (i * 29 + j * 83 + 0x7e) as u8)
                    .collect()
            })
            .collect();
        check(&keys, &format!("mixed from {first}"));
    }
    for len in 0..=70usize {
        let keys: Vec<Vec<u8>> = (0..32)
            .map(|i| (0..len).map(|j| (i * 37 + j * 101 + 0x70) as u8).collect())
            .collect();
        check(&keys, &format!("len {len}"));
    }
    exercised("hashes_match_on_every_length", &kernels);
}

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

/// Single lookups on any bytes: every k byte (0 to 30 probed, others
/// answered), filters from empty on with bits set at random (small ones
/// have probes on their last bytes, where an index clamped too far would
/// show), both variants.
#[test]
fn kernels_agree_on_single_lookups() {
    fn prop(array: Vec<u8>, k: u8, keys: Vec<Vec<u8>>, signed: bool) -> bool {
        let mut filter = array;
        filter.push(k % 40);
        let policy = BloomFilterPolicy::new(10).with_hash(variant(signed));
        keys.iter().all(|key| {
            [&filter[..], &filter[filter.len() - 1..]].iter().all(|f| {
                let want = policy.single_with(Kernel::Portable, key, f);
                Kernel::all()
                    .into_iter()
                    .all(|kernel| policy.single_with(kernel, key, f) == want)
            })
        })
    }
    check(20_000, prop as fn(Vec<u8>, u8, Vec<Vec<u8>>, bool) -> bool);
    // Dense and sparse arrays, so that both answers are common.
    let policy = BloomFilterPolicy::new(10);
    let kernels = Kernel::all();
    for fill in [0x00u8, 0xff, 0xf7, 0x7f, 0x5a] {
        for len in [0, 1, 3, 4, 5, 63, 1000] {
            let mut filter = vec![fill; len + 1];
            for k in 0..=32u8 {
                filter[len] = k;
                for i in 0..200u32 {
                    let key = i.wrapping_mul(0x9e37_79b9).to_le_bytes();
                    for &kernel in &kernels {
                        assert_eq!(
                            policy.single_with(kernel, &key, &filter),
                            policy.single_with(Kernel::Portable, &key, &filter),
                            "{kernel:?} fill {fill:#x} len {len} k {k} key {key:02x?}"
                        );
                    }
                }
            }
        }
    }
    exercised("kernels_agree_on_single_lookups", &kernels);
}

/// A fixed sequence of 64-bit values from `seed` (xorshift64): inputs that
/// are the same on every run.
fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// Single lookups in arrays on both sides of the largest the AVX-512
/// kernel takes (larger ones go to the portable probes), for k of 0 to 30
/// with bits set as densely as makes both answers common: every kernel
/// against the portable one, and a prepared filter, a kept hash and the
/// policy on this CPU's kernel alike.
#[cfg(target_arch = "x86_64")]
#[test]
fn kernels_agree_on_single_lookups_either_side_of_the_lanes_limit() {
    use crate::BloomFilter;
    let policy = BloomFilterPolicy::new(10);
    let kernels = Kernel::all();
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    let limit = super::MAX_SINGLE_LANES_BYTES;
    for len in [limit - 1, limit, limit + 1] {
        for k in [0u8, 6, 9, 17, 30] {
            // Each bit set with probability 2^(-1/k): all k set half the time.
            let density = 0.5f64.powf(1.0 / f64::from(k.max(1)));
            let threshold = (density * f64::from(u32::MAX)) as u32;
            let mut filter: Vec<u8> = (0..len)
                .map(|_| {
                    (0..8).fold(0, |byte, bit| {
                        byte | u8::from((next() as u32) < threshold) << bit
                    })
                })
                .collect();
            filter.push(k);
            let prepared = BloomFilter::new(&policy, filter.as_slice());
            let mut answers = [0usize; 2];
            for _ in 0..4_000 {
                let key = next().to_le_bytes();
                let want = policy.single_with(Kernel::Portable, &key, &filter);
                answers[usize::from(want)] += 1;
                for &kernel in &kernels {
                    assert_eq!(
                        policy.single_with(kernel, &key, &filter),
                        want,
                        "{kernel:?} len {len} k {k} key {key:02x?}"
                    );
                }
                let hash = policy.key_hash(&key);
                assert_eq!(prepared.may_match(&key), want, "prepared, len {len} k {k}");
                assert_eq!(
                    prepared.hash_may_match(hash),
                    want,
                    "kept hash, len {len} k {k}"
                );
                assert_eq!(hash.may_match(&filter), want, "KeyHash, len {len} k {k}");
            }
            // Both answers common (k = 0: no probe, always "may match"):
            // the lookups test bits, not a fixed answer.
            match k {
                0 => assert_eq!(answers[0], 0),
                _ => assert!(
                    answers.iter().all(|&n| n > 1_000),
                    "len {len} k {k}: {answers:?}"
                ),
            }
        }
    }
    // The AVX-512 kernel's own lookups up to the limit, none past it or
    // for a k above 30; the other kernels' never.
    for &kernel in &kernels {
        let lanes = matches!(kernel, Kernel::Avx512(_));
        assert_eq!(kernel.takes_single(limit, 30), lanes, "{kernel:?}");
        assert_eq!(kernel.takes_single(1, 6), lanes, "{kernel:?}");
        assert!(!kernel.takes_single(limit + 1, 6), "{kernel:?}");
        assert!(!kernel.takes_single(limit, 31), "{kernel:?}");
        assert!(!kernel.takes_single(0, 6), "{kernel:?}");
    }
    exercised(
        "kernels_agree_on_single_lookups_either_side_of_the_lanes_limit",
        &kernels,
    );
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
