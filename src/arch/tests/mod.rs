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

/// On Intel's cores, unless a kernel was asked for, AVX-512 leaves single
/// lookups and filters of few keys to AVX2, and keeps batches and filters
/// of many keys; elsewhere it keeps every work.
#[test]
fn intel_narrows_short_work_to_avx2() {
    use super::{narrowed, Work, FEW_FOR_512_ON_INTEL};
    let few = Work::Create(FEW_FOR_512_ON_INTEL - 1);
    let many = Work::Create(FEW_FOR_512_ON_INTEL);
    for (work, on_intel) in [
        (Work::Single, true),
        (few, true),
        (Work::Batch, false),
        (many, false),
    ] {
        assert_eq!(narrowed(work, true, false), on_intel, "{work:?}");
        assert!(!narrowed(work, false, false), "{work:?} elsewhere");
        assert!(!narrowed(work, true, true), "{work:?} asked for");
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
