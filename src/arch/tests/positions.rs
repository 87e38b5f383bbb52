//! Probe positions: the portable reduction against LevelDB's, and every
//! kernel's positions against the portable ones.

use quickcheck::TestResult;

use super::seed::check;
use super::{exercised, naive, variant};
use crate::arch::portable::Modulus;
use crate::arch::Kernel;
use crate::hash;
use crate::hash::SEED;

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
