//! Every kernel this CPU runs against LevelDB's formula and the portable
//! kernel. Each test ends by naming the kernels it exercised
//! ([`exercised`]): where `LEVELDB_FILTER_EXPECT_KERNELS` lists the kernels
//! the CPU has (CI reads them from `/proc/cpuinfo`), a test that skipped one
//! fails.
//!
//! A file for each kind of work: probe positions and the reduction
//! ([`positions`]), hashes ([`hashes`]), filters and batches
//! ([`filters`]), single lookups ([`single`]), RocksDB's FastLocalBloom
//! probes ([`local_bloom`]).

mod filters;
mod hashes;
mod local_bloom;
mod positions;
mod single;

use std::collections::BTreeSet;

#[path = "../seed.rs"]
mod seed;

use super::Kernel;
use crate::HashVariant;

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
