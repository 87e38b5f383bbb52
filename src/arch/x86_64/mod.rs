//! The x86-64 kernels: [`Lanes`](crate::arch::simd::Lanes) for AVX2's and
//! AVX-512's vectors, and what only each of them does. (Where the crate's
//! `unsafe` code is: `lib.rs` lists it.)
#![allow(unsafe_code)]

mod avx2;
mod avx512;
pub(super) mod local_bloom;

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

/// Asks the CPU to bring `slice[index]` into its caches, if it is there
/// (none of it read now): for a loop whose next access is known a step
/// early. Nothing for an index past the end.
#[inline(always)]
pub(crate) fn prefetch<T>(slice: &[T], index: usize) {
    if let Some(item) = slice.get(index) {
        // SAFETY: a prefetch never faults, and the pointer is to an item of
        // the slice. (`_mm_prefetch` is a safe fn in recent Rust, unsafe in
        // the oldest this crate supports.)
        #[allow(unused_unsafe)]
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(item).cast::<i8>());
        }
    }
}

/// `rocksdb::ribbon::single` compiled with POPCNT (see [`with_popcnt`]).
///
/// # Safety
/// The CPU must have POPCNT.
#[target_feature(enable = "popcnt")]
pub(crate) unsafe fn ribbon_single(data: &[u8], seed: u8, blocks: u32, key: &[u8]) -> bool {
    crate::rocksdb::ribbon::single(data, seed, blocks, key)
}

/// Runs `work` compiled with POPCNT, which the baseline x86-64 lacks and
/// every AVX2 CPU has: for code whose time goes to parities (Ribbon's), an
/// instruction where the baseline takes several. `_cpu` proves the CPU has
/// it ([`Avx2::detect`] asks for both).
#[inline]
pub(crate) fn with_popcnt<R>(_cpu: Avx2, work: impl FnOnce() -> R) -> R {
    #[target_feature(enable = "popcnt")]
    unsafe fn run<R>(work: impl FnOnce() -> R) -> R {
        work()
    }
    // SAFETY: an `Avx2` is made only where the CPU has AVX2 and POPCNT.
    unsafe { run(work) }
}
