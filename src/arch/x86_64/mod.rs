//! The x86-64 kernels: [`Lanes`](crate::arch::simd::Lanes) for AVX2's and
//! AVX-512's vectors, and what only each of them does. These files and
//! `simd.rs` hold the crate's only `unsafe` code.
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
