//! The aarch64 kernel: [`Lanes`](crate::arch::simd::Lanes) for NEON's
//! vectors. This file's module and `simd/` hold the crate's only
//! `unsafe` code on aarch64.
#![allow(unsafe_code)]

mod neon;

pub(crate) use neon::Neon;

/// Asks the CPU to bring `slice[index]` into its caches, if it is there
/// (none of it read now): for a loop whose next access is known a step
/// early. Nothing for an index past the end.
#[inline(always)]
pub(crate) fn prefetch<T>(slice: &[T], index: usize) {
    if let Some(item) = slice.get(index) {
        // SAFETY: PRFM reads nothing into a register, never faults, and
        // the address is of an item of the slice.
        unsafe {
            std::arch::asm!(
                "prfm pldl1keep, [{0}]",
                in(reg) std::ptr::from_ref(item),
                options(nostack, readonly, preserves_flags)
            );
        }
    }
}
