//! Every kernel's hash on keys of every length, one length a group and
//! mixed.

use super::exercised;
use crate::arch::Kernel;
use crate::hash::SEED;
use crate::{hash, HashVariant};

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
