//! Single lookups call their kernel's function through a pointer chosen
//! on the first call, as memchr dispatches: the kernel's choice, read on
//! each call, would cost a lookup a check, and the registers its caller
//! saves around the choice's slow path (a tenth of a lookup's
//! instructions).

// (Unsafe code: the pointers are to functions compiled for features that
// only the kernel's detection proves.)
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicPtr, Ordering};

use super::{Kernel, Work};

/// A FastLocalBloom lookup: (bit array of whole blocks, probes, key).
pub(crate) type FastLocalSingle = unsafe fn(&[u8], u32, &[u8]) -> bool;

/// The [`FastLocalSingle`] of [`fast_local`]: the resolver until its first
/// call, then the function it chose.
static FAST_LOCAL: AtomicPtr<()> = AtomicPtr::new(resolve_fast_local as *mut ());

/// Chooses the single lookups' kernel's function (else `portable`), keeps
/// it for later calls, and answers with it.
///
/// # Safety
/// None: unsafe only to be a [`FastLocalSingle`].
unsafe fn resolve_fast_local(data: &[u8], probes: u32, key: &[u8]) -> bool {
    let chosen = Kernel::for_work(Work::Single)
        .fast_local_single_fn()
        .unwrap_or(fast_local_portable);
    FAST_LOCAL.store(chosen as *mut (), Ordering::Relaxed);
    // SAFETY: `chosen` is the function of a kernel detected on this CPU,
    // or the portable code's.
    unsafe { chosen(data, probes, key) }
}

/// The portable code's lookup, as a [`FastLocalSingle`].
///
/// # Safety
/// None: unsafe only to be a [`FastLocalSingle`].
unsafe fn fast_local_portable(data: &[u8], probes: u32, key: &[u8]) -> bool {
    crate::rocksdb::local::fast_local_portable(data, probes, key)
}

/// RocksDB's `MayMatch` of `key` against a FastLocalBloom bit array, by
/// the single lookups' kernel.
#[inline]
pub(crate) fn fast_local(data: &[u8], probes: u32, key: &[u8]) -> bool {
    let f = FAST_LOCAL.load(Ordering::Relaxed);
    // SAFETY: `FAST_LOCAL` holds only `FastLocalSingle`s: the resolver,
    // or a function it chose, which this CPU can run (a pointer stored by
    // another thread is one it chose on this same CPU).
    unsafe { std::mem::transmute::<*mut (), FastLocalSingle>(f)(data, probes, key) }
}

/// The lookup of `kernel`'s own function, `None` where the portable code
/// answers (for the tests, which compare every kernel's).
#[cfg(test)]
pub(crate) fn fast_local_on(kernel: Kernel, data: &[u8], probes: u32, key: &[u8]) -> Option<bool> {
    // SAFETY: the function is the kernel's, whose CPU `kernel` proves.
    kernel
        .fast_local_single_fn()
        .map(|single| unsafe { single(data, probes, key) })
}
