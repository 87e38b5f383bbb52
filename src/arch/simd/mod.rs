//! The vector kernels' algorithm, written once over [`Lanes`]: a vector of
//! `N` 32-bit lanes that each instruction set implements (AVX2's eight,
//! AVX-512's sixteen, NEON's four) with a few dozen lines of intrinsics.
//! A file an idea, the kernels taking them all from here:
//!
//! - [`hash`]: LevelDB's `Hash` of `N` keys of one length, loaded 16
//!   bytes at a time and transposed ([`Lanes::chunk`]), a word of every
//!   key a vector, `G` groups' chains of multiplies interleaved
//!   ([`hash_same`]).
//! - [`by_length`]: keys of mixed lengths wait with others of their
//!   length ([`hash_by_length`]).
//! - [`probes`]: probe positions, two exact reductions a key from
//!   doubles ([`Reducer`]), the others by adds ([`Probes`]).
//! - [`steps`]: rows of byte indexes and bit masks stored a step ahead
//!   of the scalar read-modify-writes ([`insert_steps`]) or loads
//!   ([`contains_steps`]) that use them.
//!
//! Everything here is `#[inline(always)]`: an ISA's entry points, each a
//! `#[target_feature]` function, instantiate it so that it compiles with
//! their features (a function of its own here would be compiled without
//! them, and its intrinsics called, not inlined). What only one ISA does
//! (AVX-512's cascade and single lookups, AVX2's gathers and their timing,
//! prefetching) stays in its own file.
#![allow(unsafe_code)]

mod by_length;
mod hash;
mod probes;
mod steps;

use std::mem::MaybeUninit;

// The kernels take the algorithm from here, whichever file holds a piece.
pub(crate) use by_length::*;
pub(crate) use hash::*;
pub(crate) use probes::*;
pub(crate) use steps::*;

use crate::hash::SEED;
use crate::HashVariant;

/// A vector of `N` 32-bit lanes, as one instruction set holds it.
///
/// # Safety
/// Every method needs a CPU with the instruction set the implementation
/// uses (its kernel's type proves it), besides the terms it states; the
/// generic code over it (this module's files) is called only from
/// functions that enable it.
pub(crate) trait Lanes<const N: usize>: Copy {
    /// `1 / bits` as [`Lanes::quotient`] takes it.
    type Inverse: Copy;

    /// Whether [`insert_steps`] sets a step's bits only after the next
    /// step's rows are stored (rows stored a step ahead), rather than once
    /// the next step is hashed: which costs less depends on how long the
    /// stores take to reach the loads of the bits, and how long a step's
    /// hashes take.
    const ROWS_AHEAD: bool;

    /// Every lane `x`.
    unsafe fn splat(x: u32) -> Self;
    /// `N` words.
    unsafe fn load(words: &[u32; N]) -> Self;
    /// Up to `N` words, lanes past them 0.
    unsafe fn load_up_to(words: &[u32]) -> Self;
    /// The lanes into `to`.
    unsafe fn store(self, to: &mut [u32; N]);
    /// The lanes into `to`, which may be uninitialized.
    unsafe fn store_uninit(self, to: &mut MaybeUninit<[u32; N]>);
    /// Lane-wise sum, wrapping.
    unsafe fn add(self, other: Self) -> Self;
    /// Lane-wise difference, wrapping.
    unsafe fn sub(self, other: Self) -> Self;
    /// Lane-wise product's low 32 bits.
    unsafe fn mul(self, other: Self) -> Self;
    /// Lane-wise exclusive or.
    unsafe fn xor(self, other: Self) -> Self;
    /// Lane-wise and.
    unsafe fn and(self, other: Self) -> Self;
    /// Lane-wise unsigned minimum.
    unsafe fn min(self, other: Self) -> Self;
    /// Each lane shifted left by its lane of `by` (below 32).
    unsafe fn shl_by(self, by: Self) -> Self;
    /// Each lane shifted left by 1.
    unsafe fn shl1(self) -> Self;
    /// Each lane shifted right by 3.
    unsafe fn shr3(self) -> Self;
    /// Each lane shifted right by 16.
    unsafe fn shr16(self) -> Self;
    /// Each lane shifted right by 24.
    unsafe fn shr24(self) -> Self;
    /// Each lane rotated right by 17.
    unsafe fn rotr17(self) -> Self;
    /// `wrapped` in the lanes where `sum < addend` (unsigned: the sum that
    /// gave `sum` wrapped), `kept` in the others.
    unsafe fn select_wrapped(sum: Self, addend: Self, wrapped: Self, kept: Self) -> Self;
    /// `inv` (about `1 / bits`) as `quotient` takes it.
    unsafe fn inverse(inv: f64) -> Self::Inverse;
    /// `floor(h * inv)` for each unsigned lane `h` (the product below 2^31).
    unsafe fn quotient(self, inv: Self::Inverse) -> Self;
    /// Bytes `at..at + 16` of each key as words: word `t` of every key in
    /// vector `t`.
    ///
    /// # Safety
    /// Every key has `at + 16` bytes or more.
    unsafe fn chunk(keys: &[&[u8]; N], at: usize) -> [Self; 4];
    /// Bytes `at..len` of each key (`0 < len - at < 16`): the whole words
    /// as `chunk` gives them, and the tail's bytes (after them, `len % 4`)
    /// as LevelDB adds them unsigned (little-endian, zero-padded), apart.
    ///
    /// # Safety
    /// Every key is `len` bytes long.
    unsafe fn rest(keys: &[&[u8]; N], at: usize, len: usize) -> ([Self; 4], Self);

    /// LevelDB's `Hash` of up to `N` keys of any lengths, in the first
    /// lanes: one key at a time unless the instruction set does better.
    #[inline(always)]
    unsafe fn hash_apart(keys: &[&[u8]], variant: HashVariant) -> Self {
        let mut hashes = [0u32; N];
        for (h, key) in hashes.iter_mut().zip(keys) {
            *h = crate::hash(key, SEED, variant);
        }
        // SAFETY: as for this function.
        unsafe { Self::load(&hashes) }
    }
}

/// The methods of [`Lanes`] that are one expression each, from a table of
/// `fn method(arguments) -> type => expression;` in an instruction set's
/// impl, or of `method = intrinsic` for its lane-wise operations: the
/// table is what differs between instruction sets.
macro_rules! one_intrinsic {
    ($(fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)? => $op:expr;)*) => {$(
        #[inline(always)]
        unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
            // SAFETY: the trait's contract, a CPU with the instructions;
            // a pointer reads or writes only the argument it comes from.
            unsafe { $op }
        }
    )*};
    // Lane-wise operations of two vectors, then of one.
    (binary: $($two:ident = $op2:expr),*; unary: $($one:ident = $op1:expr),*) => {
        $(
            #[inline(always)]
            unsafe fn $two(self, other: Self) -> Self {
                // SAFETY: the trait's contract, a CPU with the instructions.
                unsafe { $op2(self, other) }
            }
        )*
        $(
            #[inline(always)]
            unsafe fn $one(self) -> Self {
                // SAFETY: the trait's contract, a CPU with the instructions.
                unsafe { $op1(self) }
            }
        )*
    };
}
pub(crate) use one_intrinsic;
