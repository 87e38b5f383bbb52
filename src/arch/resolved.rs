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

/// A function of type `$ty` (an `unsafe fn`), `$name`, that calls the one
/// `$choose` (a `fn(Kernel) -> Option<$ty>`) picks for the single lookups'
/// kernel, else `$portable`: chosen on the first call, and kept in
/// `$slot`.
macro_rules! resolved {
    (
        $(#[$doc:meta])*
        fn $name:ident($($arg:ident: $arg_ty:ty),*) -> bool;
        type $ty:ident;
        slot $slot:ident;
        choose $choose:path;
        portable $portable:path;
    ) => {
        $(#[$doc])*
        pub(crate) type $ty = unsafe fn($($arg_ty),*) -> bool;

        /// The resolver until its first call, then the function it chose.
        static $slot: AtomicPtr<()> = AtomicPtr::new({
            /// Chooses the function, keeps it, and answers with it.
            ///
            /// # Safety
            /// None: unsafe only to be of the slot's type.
            unsafe fn resolve($($arg: $arg_ty),*) -> bool {
                /// The portable code's, as the slot's type.
                ///
                /// # Safety
                /// None: unsafe only to be of the slot's type.
                unsafe fn portable($($arg: $arg_ty),*) -> bool {
                    $portable($($arg),*)
                }
                let chosen: $ty = $choose(Kernel::for_work(Work::Single)).unwrap_or(portable);
                $slot.store(chosen as *mut (), Ordering::Relaxed);
                // SAFETY: `chosen` is the function of a kernel detected on
                // this CPU, or the portable code's.
                unsafe { chosen($($arg),*) }
            }
            resolve as *mut ()
        });

        #[inline]
        pub(crate) fn $name($($arg: $arg_ty),*) -> bool {
            let f = $slot.load(Ordering::Relaxed);
            // SAFETY: the slot holds only functions of its type: the
            // resolver, or one it chose, which this CPU runs (one stored
            // by another thread was chosen on this same CPU).
            unsafe { std::mem::transmute::<*mut (), $ty>(f)($($arg),*) }
        }
    };
}

resolved! {
    /// A FastLocalBloom lookup: (bit array of whole blocks, probes, key).
    fn fast_local(data: &[u8], probes: u32, key: &[u8]) -> bool;
    type FastLocalSingle;
    slot FAST_LOCAL;
    choose Kernel::fast_local_single_fn;
    portable crate::rocksdb::local::fast_local_portable;
}

resolved! {
    /// A Standard128Ribbon lookup: (solution, ordinal seed, blocks, key).
    fn ribbon(data: &[u8], seed: u8, blocks: u32, key: &[u8]) -> bool;
    type RibbonSingle;
    slot RIBBON;
    choose Kernel::ribbon_single_fn;
    portable crate::rocksdb::ribbon::single;
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
