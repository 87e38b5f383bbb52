//! The x86-64 kernels, each self-contained (hash, positions, setting and
//! testing bits for its instruction set): `avx512` and `avx2`. What they
//! share is here. These files hold the crate's only `unsafe` code.
#![allow(unsafe_code)]

mod avx2;
mod avx512;

pub(crate) use avx2::Avx2;
pub(crate) use avx512::Avx512;

/// Whether the CPU is Intel's (CPUID's vendor string `GenuineIntel`), asked
/// once per process (CPUID traps to the hypervisor in a virtual machine).
pub(crate) fn intel() -> bool {
    static INTEL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INTEL.get_or_init(|| {
        // SAFETY: CPUID leaf 0 exists on every x86-64 CPU. (`__cpuid` is a
        // safe fn in recent Rust, unsafe in the oldest this crate supports.)
        #[allow(unused_unsafe)]
        let id = unsafe { std::arch::x86_64::__cpuid(0) };
        let vendor = [id.ebx, id.edx, id.ecx].map(u32::to_le_bytes).concat();
        vendor == b"GenuineIntel"
    })
}

/// LevelDB's hash multiplier, as the vector lanes take it.
const M: i32 = 0xc6a4a793_u32 as i32;

/// Just under `1 / bits`: four ulps less than the nearest double, so that
/// `h * inv` truncated is `h / bits` rounded down or one less, for every
/// 32-bit `h` and `bits <= 2^31` (see `avx512::Reducer::rem16`).
fn inverse(bits: u64) -> f64 {
    // 1 / bits is within half an ulp; four ulps less is below it by a
    // relative 2^-52 or more, and by at most 2^-49.
    f64::from_bits((1.0 / bits as f64).to_bits() - 4)
}

/// `2^32 % bits` for `0 < bits <= 2^31`, by a 32-bit division: `2^32 -
/// bits` fits 32 bits and leaves the same remainder (a 64-bit division is
/// slower on many cores, and it starts every filter's chain of positions).
fn wrap(bits: u64) -> u32 {
    let bits = bits as u32;
    bits.wrapping_neg() % bits
}
