//! Single lookups: every kernel answers as the portable one, on any bytes
//! and on both sides of the AVX-512 lanes' limit.

use super::seed::check;
use super::{exercised, variant};
use crate::arch::Kernel;
use crate::BloomFilterPolicy;

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

/// Single lookups in arrays on both sides of the largest the AVX-512
/// kernel takes (larger ones go to the portable probes), for k of 0 to 30
/// with bits set as densely as makes both answers common: every kernel
/// against the portable one, and a prepared filter, a kept hash and the
/// policy on this CPU's kernel alike.
#[cfg(target_arch = "x86_64")]
#[test]
fn kernels_agree_on_single_lookups_either_side_of_the_lanes_limit() {
    use super::xorshift;
    use crate::BloomFilter;
    let policy = BloomFilterPolicy::new(10);
    let kernels = Kernel::all();
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    let limit = crate::arch::MAX_SINGLE_LANES_BYTES;
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
