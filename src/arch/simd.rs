//! The vector kernels' algorithm, written once over [`Lanes`]: a vector of
//! `N` 32-bit lanes that each instruction set implements (AVX2's eight,
//! AVX-512's sixteen, NEON's four) with a few dozen lines of intrinsics.
//!
//! - Hashing: `N` keys of one length loaded 16 bytes at a time and
//!   transposed ([`Lanes::chunk`]), a word of every key a vector, `G`
//!   groups' chains of multiplies interleaved ([`hash_same`]); keys of
//!   mixed lengths wait with others of their length ([`hash_by_length`]).
//! - Probe positions: two exact reductions a key from doubles
//!   ([`Reducer`]), the others by adds ([`Probes`]).
//! - Rows: byte indexes and bit masks stored a step ahead of the scalar
//!   read-modify-writes ([`insert_steps`]) or loads ([`contains_steps`])
//!   that use them.
//!
//! Everything here is `#[inline(always)]`: an ISA's entry points, each a
//! `#[target_feature]` function, instantiate it so that it compiles with
//! their features (a function of its own here would be compiled without
//! them, and its intrinsics called, not inlined). What only one ISA does
//! (AVX-512's cascade and single lookups, AVX2's gathers and their timing,
//! prefetching) stays in its own file.
#![allow(unsafe_code)]

use std::mem::MaybeUninit;

use super::{groups_by_length, CLASSES};
use crate::hash::{M, SEED};
use crate::HashVariant;

/// A vector of `N` 32-bit lanes, as one instruction set holds it.
///
/// # Safety
/// Every method needs a CPU with the instruction set the implementation
/// uses (its kernel's type proves it), besides the terms it states; the
/// generic code below is called only from functions that enable it.
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

/// Just under `1 / bits`: four ulps less than the nearest double, so that
/// `h * inv` truncated is `h / bits` rounded down or one less, for every
/// 32-bit `h` and `bits <= 2^31` (see [`Reducer::rem`]).
pub(crate) fn inverse(bits: u64) -> f64 {
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

/// `h % bits` for one filter's `0 < bits <= 2^31`, `N` lanes at a time,
/// the quotient from doubles.
pub(crate) struct Reducer<V: Lanes<N>, const N: usize> {
    /// Just under `1 / bits`, so that quotients are never too large.
    inv: V::Inverse,
    pub(crate) bits: V,
    /// `bits - 1`, that [`Probes`] clamps its start and steps to.
    last: V,
    /// `2^32 % bits`: what a wrap of the 32-bit sum takes off a position.
    wrap: V,
}

impl<V: Lanes<N>, const N: usize> Reducer<V, N> {
    /// # Safety
    /// As for [`Lanes`]; `0 < bits <= 2^31`.
    #[inline(always)]
    pub(crate) unsafe fn new(bits: u64) -> Self {
        // SAFETY: as for this function.
        unsafe {
            Reducer {
                inv: V::inverse(inverse(bits)),
                bits: V::splat(bits as u32),
                last: V::splat((bits - 1) as u32),
                wrap: V::splat(wrap(bits)),
            }
        }
    }

    /// `h % bits`: `q = floor(h * inv)` is `h / bits` rounded down or one
    /// less (the product is below `h / bits`, by less than `2^32 *
    /// 2^-49`), so `h - q * bits` lies in `[0, 2 * bits)`, below 2^32:
    /// exact in 32-bit arithmetic. One unsigned minimum with itself less
    /// `bits` ends it.
    ///
    /// # Safety
    /// As for [`Lanes`].
    #[inline(always)]
    pub(crate) unsafe fn rem(&self, h: V) -> V {
        // SAFETY: as for this function.
        unsafe { rem_by_quotient(h, h.quotient(self.inv), self.bits) }
    }
}

/// `h % bits` from a quotient `q` that is `h / bits` rounded down or one
/// less (see [`Reducer::rem`]).
///
/// # Safety
/// As for [`Lanes`].
#[inline(always)]
pub(crate) unsafe fn rem_by_quotient<V: Lanes<N>, const N: usize>(h: V, q: V, bits: V) -> V {
    // SAFETY: as for this function.
    unsafe {
        let r = h.sub(q.mul(bits));
        r.min(r.sub(bits))
    }
}

/// The probe positions of `N` keys hashed to `h`, in order: two exact
/// reductions per key (`h % bits`, `delta % bits`), then each next position
/// by adds: the last plus `delta % bits`, brought below `bits`, less
/// `2^32 % bits` where the 32-bit sum `h + delta` wrapped (so added
/// `(delta - 2^32) % bits` instead). `bits <= 2^31` keeps every sum below
/// 2^32.
///
/// Every position is below `bits` by construction, whatever the
/// reductions return (what the unchecked accesses rest on): the start and
/// both steps are clamped below `bits` once, and a position below `bits`
/// plus a step below `bits` is below `2 * bits`, which one subtraction of
/// `bits` brings back below it.
pub(crate) struct Probes<V, const N: usize> {
    pos: V,
    h: V,
    delta: V,
    step: V,
    step_wrapped: V,
    bits: V,
}

impl<V: Lanes<N>, const N: usize> Probes<V, N> {
    /// # Safety
    /// As for [`Lanes`].
    #[inline(always)]
    pub(crate) unsafe fn new(r: &Reducer<V, N>, h: V) -> Self {
        // SAFETY: as for this function.
        unsafe {
            let delta = h.rotr17();
            let step = r.rem(delta).min(r.last);
            // step - wrap modulo bits: the smaller of the two, as unsigned.
            let less = step.sub(r.wrap);
            Probes {
                pos: r.rem(h).min(r.last),
                h,
                delta,
                step,
                step_wrapped: less.min(less.add(r.bits)),
                bits: r.bits,
            }
        }
    }

    /// This probe's positions (each below `bits`), and moves to the next.
    ///
    /// # Safety
    /// As for [`Lanes`].
    #[inline(always)]
    pub(crate) unsafe fn next(&mut self) -> V {
        // SAFETY: as for this function.
        unsafe {
            let at = self.pos;
            let h = self.h.add(self.delta);
            let step = V::select_wrapped(h, self.delta, self.step_wrapped, self.step);
            let pos = at.add(step);
            self.pos = pos.min(pos.sub(self.bits));
            self.h = h;
            at
        }
    }
}

/// Rows of one group's probes: for each probe a row of byte indexes, then
/// a row of bit masks (up to 30 probes).
pub(crate) type Rows<const N: usize> = [MaybeUninit<[u32; N]>; 60];

/// No rows written yet: left uninitialized, as zeroing them cost more than
/// setting the bits of a filter of a few dozen keys.
#[inline(always)]
pub(crate) fn rows<const N: usize>() -> Rows<N> {
    [MaybeUninit::uninit(); 60]
}

/// Stores, for the probes of `N` keys hashed to `h`, a row of byte indexes
/// and a row of bit masks per probe (`rows.len() / 2` probes).
///
/// # Safety
/// As for [`Lanes`].
#[inline(always)]
pub(crate) unsafe fn masks<V: Lanes<N>, const N: usize>(
    reducer: &Reducer<V, N>,
    h: V,
    rows: &mut [MaybeUninit<[u32; N]>],
) {
    // SAFETY: as for this function.
    unsafe {
        let mut probes = Probes::new(reducer, h);
        let (seven, one) = (V::splat(7), V::splat(1));
        for pair in rows.chunks_exact_mut(2) {
            let pos = probes.next();
            pos.shr3().store_uninit(&mut pair[0]);
            one.shl_by(pos.and(seven)).store_uninit(&mut pair[1]);
        }
    }
}

/// Sets the bits of the first `lanes` lanes of each pair of rows (byte
/// indexes, then bit masks).
///
/// # Safety
/// The rows are initialized, and those indexes are below `array.len()`:
/// written by [`masks`] over the [`Reducer`] made for `array`.
#[inline(always)]
pub(crate) unsafe fn set_rows<const N: usize>(
    array: &mut [u8],
    rows: &[MaybeUninit<[u32; N]>],
    lanes: usize,
) {
    // SAFETY: by the caller. (A whole group's lanes, every group's but a
    // last one, in loops of known length.)
    unsafe {
        match lanes == N {
            true => set_lanes(array, rows, N),
            false => set_lanes(array, rows, lanes),
        }
    }
}

/// [`set_rows`], for `lanes` that may be a constant once inlined.
///
/// # Safety
/// As for [`set_rows`].
#[inline(always)]
unsafe fn set_lanes<const N: usize>(
    array: &mut [u8],
    rows: &[MaybeUninit<[u32; N]>],
    lanes: usize,
) {
    for pair in rows.chunks_exact(2) {
        // SAFETY: initialized, by the caller.
        let (at, mask) = unsafe { (pair[0].assume_init_ref(), pair[1].assume_init_ref()) };
        for (&at, &mask) in at[..lanes].iter().zip(&mask[..lanes]) {
            // SAFETY: at < array.len(), by the caller.
            unsafe { *array.get_unchecked_mut(at as usize) |= mask as u8 };
        }
    }
}

/// For each of the `out.len()` first lanes, whether the bit of every pair
/// of rows (byte indexes, then bit masks, as [`masks`] stores them) is
/// set: two loads from the rows a probe, as `set_rows` takes them (as fast
/// as a position's load and its shifts, or faster).
///
/// # Safety
/// As for [`set_rows`], for `out.len()` lanes.
#[inline(always)]
pub(crate) unsafe fn test_rows<const N: usize>(
    array: &[u8],
    rows: &[MaybeUninit<[u32; N]>],
    out: &mut [bool],
) {
    for (lane, answer) in out.iter_mut().enumerate().take(N) {
        let mut all = true;
        for pair in rows.chunks_exact(2) {
            // SAFETY: initialized, by the caller.
            let (at, mask) = unsafe {
                (
                    pair[0].assume_init_ref()[lane],
                    pair[1].assume_init_ref()[lane],
                )
            };
            // SAFETY: at < array.len(), by the caller.
            let byte = unsafe { *array.get_unchecked(at as usize) };
            all &= u32::from(byte) & mask != 0;
        }
        *answer = all;
    }
}

/// Sets the bits of steps of `G` groups given by their hashes and sizes:
/// each next step hashed before a step's bits are set (the hash's chain of
/// multiplies then runs beside those stores), and, where
/// [`Lanes::ROWS_AHEAD`], each step's rows stored a step ahead of the bits
/// they set (a row read at once after its store waits on it).
///
/// # Safety
/// As for [`Lanes`]; `reducer` was made for `array`:
/// `Reducer::new(8 * array.len())`; `k <= 30`.
#[inline(always)]
pub(crate) unsafe fn insert_steps<V: Lanes<N>, const N: usize, const G: usize>(
    mut steps: impl Iterator<Item = ([V; G], [usize; G])>,
    reducer: &Reducer<V, N>,
    k: usize,
    array: &mut [u8],
) {
    let mut rows = [[rows::<N>(); G]; 2];
    let mut next = steps.next();
    let (mut s, mut last) = (0, [0; G]);
    while let Some((h, lens)) = next {
        if V::ROWS_AHEAD {
            next = steps.next();
        }
        for g in 0..G {
            // SAFETY: as for this function.
            unsafe { masks(reducer, h[g], &mut rows[s % 2][g][..2 * k]) };
        }
        if !V::ROWS_AHEAD {
            next = steps.next();
            for (rows, &lanes) in rows[s % 2].iter().zip(&lens) {
                // SAFETY: `masks` wrote these rows, over the reducer made
                // for `array`.
                unsafe { set_rows(array, &rows[..2 * k], lanes) };
            }
            continue;
        }
        if s > 0 {
            for (rows, &lanes) in rows[(s + 1) % 2].iter().zip(&last) {
                // SAFETY: `masks` wrote these rows for the last step,
                // over the reducer made for `array`.
                unsafe { set_rows(array, &rows[..2 * k], lanes) };
            }
        }
        (s, last) = (s + 1, lens);
    }
    if s > 0 {
        for (rows, &lanes) in rows[(s + 1) % 2].iter().zip(&last) {
            // SAFETY: as above.
            unsafe { set_rows(array, &rows[..2 * k], lanes) };
        }
    }
}

/// The answers for steps of `G` groups given by their hashes (and sizes,
/// which `out` settles), `G * N` to a chunk of `out` (the last may be
/// shorter): all `k` probes of each
/// key from rows stored a step ahead of the scalar loads that test them,
/// as in [`insert_steps`].
///
/// # Safety
/// As for [`insert_steps`]; the steps cover `out`.
#[inline(always)]
pub(crate) unsafe fn contains_steps<V: Lanes<N>, const N: usize, const G: usize>(
    mut steps: impl Iterator<Item = ([V; G], [usize; G])>,
    reducer: &Reducer<V, N>,
    k: usize,
    array: &[u8],
    out: &mut [bool],
) {
    let mut rows = [[rows::<N>(); G]; 2];
    let mut next = steps.next();
    let mut s = 0;
    while let Some((h, _)) = next {
        next = steps.next();
        for g in 0..G {
            // SAFETY: as for this function.
            unsafe { masks(reducer, h[g], &mut rows[s % 2][g][..2 * k]) };
        }
        if s > 0 {
            let out = &mut out[G * N * (s - 1)..G * N * s];
            for (rows, out) in rows[(s + 1) % 2].iter().zip(out.chunks_mut(N)) {
                // SAFETY: `masks` wrote these rows for the last step,
                // over the reducer made for `array`.
                unsafe { test_rows(array, &rows[..2 * k], out) };
            }
        }
        s += 1;
    }
    if s > 0 {
        let out = &mut out[G * N * (s - 1)..];
        for (rows, out) in rows[(s + 1) % 2].iter().zip(out.chunks_mut(N)) {
            // SAFETY: as above.
            unsafe { test_rows(array, &rows[..2 * k], out) };
        }
    }
}

/// Sets in `array` the `k` probe bits of every key hashed to `hashes`,
/// `N` at a time, as [`insert_steps`] sets them.
///
/// # Safety
/// As for [`Lanes`]; `0 < array.len() <= 2^28`, `k <= 30`.
#[inline(always)]
pub(crate) unsafe fn insert_hashes<V: Lanes<N>, const N: usize>(
    hashes: &[u32],
    k: usize,
    array: &mut [u8],
) {
    // SAFETY: as for this function; the reducer is made for `array`.
    unsafe {
        let reducer = Reducer::<V, N>::new(array.len() as u64 * 8);
        insert_steps(Loaded::<V, N, 1>::new(hashes), &reducer, k, array);
    }
}

/// One round of LevelDB's `Hash`: `h = (h + w) * m`, then `h ^= h >> 16`.
///
/// # Safety
/// As for [`Lanes`].
#[inline(always)]
pub(crate) unsafe fn round<V: Lanes<N>, const N: usize>(h: V, w: V) -> V {
    // SAFETY: as for this function.
    unsafe {
        let h = h.add(w).mul(V::splat(M));
        h.xor(h.shr16())
    }
}

/// The hash's last step, for a tail read as unsigned bytes: `h = (h +
/// tail) * m`, then `h ^= h >> 24`, the tail's bytes as `variant` adds
/// them.
///
/// # Safety
/// As for [`Lanes`].
#[inline(always)]
pub(crate) unsafe fn finish<V: Lanes<N>, const N: usize>(h: V, tail: V, variant: HashVariant) -> V {
    // SAFETY: as for this function.
    unsafe {
        let tail = match variant {
            HashVariant::Unsigned => tail,
            // Each byte >= 0x80 sign-extended, as `hash::tail`.
            HashVariant::Signed => tail.sub(tail.and(V::splat(0x0080_8080)).shl1()),
        };
        let h = h.add(tail).mul(V::splat(M));
        h.xor(h.shr24())
    }
}

/// LevelDB's `Hash` of `G` groups of `N` keys all `len` bytes long, the
/// groups' rounds interleaved: each group's hash is a chain of dependent
/// multiplies, and two chains fill the gaps of one.
///
/// # Safety
/// As for [`Lanes`]; every key of every group is `len` bytes long.
#[inline(always)]
pub(crate) unsafe fn hash_same<V: Lanes<N>, const N: usize, const G: usize>(
    groups: [&[&[u8]; N]; G],
    len: usize,
    variant: HashVariant,
) -> [V; G] {
    // SAFETY: as for this function; every key has the bytes read.
    unsafe {
        let mut h = [V::splat(SEED ^ (len as u32).wrapping_mul(M)); G];
        let mut at = 0;
        while at + 16 <= len {
            let mut w = [[V::splat(0); 4]; G];
            for g in 0..G {
                w[g] = V::chunk(groups[g], at);
            }
            for i in 0..4 {
                for (h, w) in h.iter_mut().zip(&w) {
                    *h = round(*h, w[i]);
                }
            }
            at += 16;
        }
        if at == len {
            return h;
        }
        let r = len - at;
        for (h, keys) in h.iter_mut().zip(groups) {
            let (w, tail) = V::rest(keys, at, len);
            for &word in &w[..r / 4] {
                *h = round(*h, word);
            }
            if !r.is_multiple_of(4) {
                *h = finish(*h, tail, variant);
            }
        }
        h
    }
}

/// Word `i` of `words` (`i < 4`), by a match: an index into the array
/// would store the vectors to the stack to load one back.
#[inline(always)]
pub(crate) fn word<V: Copy>(words: [V; 4], i: usize) -> V {
    match i {
        0 => words[0],
        1 => words[1],
        2 => words[2],
        _ => words[3],
    }
}

/// The length of every key, if they have one (and it fits 32 bits).
#[inline(always)]
pub(crate) fn one_length(keys: &[&[u8]]) -> Option<usize> {
    let len = keys.first()?.len();
    (keys.iter().all(|k| k.len() == len) && u32::try_from(len).is_ok()).then_some(len)
}

/// The hashes of up to `N` keys: a whole group of one length by
/// [`hash_same`], others by [`Lanes::hash_apart`].
///
/// # Safety
/// As for [`Lanes`].
#[inline(always)]
pub(crate) unsafe fn hash_group<V: Lanes<N>, const N: usize>(
    keys: &[&[u8]],
    variant: HashVariant,
) -> V {
    // SAFETY: as for this function; every key of `whole` is `len` bytes.
    unsafe {
        if let Ok(whole) = <&[&[u8]; N]>::try_from(keys) {
            if let Some(len) = one_length(keys) {
                let [h] = hash_same([whole], len, variant);
                return h;
            }
        }
        V::hash_apart(keys, variant)
    }
}

/// The hashes of up to `G * N` keys, as `G` groups of `N`, and how many
/// keys each group has (the last may have none). Whole groups all of one
/// length are hashed together.
///
/// # Safety
/// As for [`Lanes`].
#[inline(always)]
pub(crate) unsafe fn hash_step<V: Lanes<N>, const N: usize, const G: usize>(
    keys: &[&[u8]],
    variant: HashVariant,
) -> ([V; G], [usize; G]) {
    let lens: [usize; G] = std::array::from_fn(|g| keys.len().saturating_sub(g * N).min(N));
    // SAFETY: as for this function.
    unsafe {
        if keys.len() == G * N {
            if let Some(len) = one_length(keys) {
                let groups = std::array::from_fn(|g| {
                    <&[&[u8]; N]>::try_from(&keys[g * N..g * N + N]).expect("N keys")
                });
                // Every key of the groups is `len` bytes long.
                return (hash_same(groups, len, variant), lens);
            }
        }
        let mut h = [V::splat(0); G];
        for (g, h) in h.iter_mut().enumerate() {
            if lens[g] > 0 {
                *h = hash_group(&keys[g * N..g * N + lens[g]], variant);
            }
        }
        (h, lens)
    }
}

/// Keys left of a half group at the end of [`hash_by_length`] below which
/// they are hashed one at a time.
const FEW_WAITING: usize = 6;

/// The hashes of keys of varying lengths, `N2 = 2 * N` of one length at a
/// time ([`groups_by_length`]), as two groups of `N` whose chains of
/// multiplies run side by side ([`hash_same`]). `emit(hashes, at, n)`
/// takes each group's hashes as they come, the first `n` lanes those of
/// the keys at indexes `at`.
///
/// # Safety
/// As for [`Lanes`]; `N2 == 2 * N`.
#[inline(always)]
pub(crate) unsafe fn hash_by_length<V: Lanes<N>, const N: usize, const N2: usize>(
    keys: &[&[u8]],
    variant: HashVariant,
    mut emit: impl FnMut(V, &[usize; N], usize),
) {
    debug_assert_eq!(N2, 2 * N);
    // (Closures here are inlined, always: on their own they would be
    // compiled without the caller's features.)
    groups_by_length::<N2>(
        keys,
        #[inline(always)]
        |group, at, n, class| {
            let (groups, _) = group.as_chunks::<N>();
            let (ats, _) = at.as_chunks::<N>();
            let counts = [n.min(N), n.saturating_sub(N)];
            // SAFETY (the block): as for this function; `groups_by_length`
            // vouches that below the last class, every key of the group is
            // `class` bytes long.
            let h = unsafe {
                if class < CLASSES - 1 && n > N {
                    hash_same([&groups[0], &groups[1]], class, variant)
                } else {
                    let mut h = [V::splat(0); 2];
                    for g in 0..2 {
                        h[g] = match counts[g] {
                            0 => break,
                            // A few keys left: one at a time costs less than a group.
                            1..FEW_WAITING => V::hash_apart(&groups[g][..counts[g]], variant),
                            _ if class < CLASSES - 1 => {
                                let [h] = hash_same([&groups[g]], class, variant);
                                h
                            }
                            _ => V::hash_apart(&groups[g], variant),
                        };
                    }
                    h
                }
            };
            // (One call of `emit`, which is inlined where it is called.)
            for g in 0..2 {
                if counts[g] > 0 {
                    emit(h[g], &ats[g], counts[g]);
                }
            }
        },
    );
}

/// Up to `G * N` hashes as `G` vectors, and how many each holds.
///
/// # Safety
/// As for [`Lanes`].
#[inline(always)]
pub(crate) unsafe fn load_step<V: Lanes<N>, const N: usize, const G: usize>(
    hashes: &[u32],
) -> ([V; G], [usize; G]) {
    // SAFETY: as for this function.
    let mut h = [unsafe { V::splat(0) }; G];
    let mut lens = [0; G];
    for (g, part) in hashes.chunks(N).take(G).enumerate() {
        // SAFETY: as for this function.
        h[g] = unsafe { V::load_up_to(part) };
        lens[g] = part.len();
    }
    (h, lens)
}

/// Steps of `G` groups of hashes, as [`load_step`] loads them.
pub(crate) struct Loaded<'h, V, const N: usize, const G: usize> {
    hashes: std::slice::Chunks<'h, u32>,
    lanes: std::marker::PhantomData<V>,
}

impl<'h, V: Lanes<N>, const N: usize, const G: usize> Loaded<'h, V, N, G> {
    /// The steps of `hashes`.
    ///
    /// # Safety
    /// As for [`Lanes`]: the steps are loaded as they are taken.
    #[inline(always)]
    pub(crate) unsafe fn new(hashes: &'h [u32]) -> Self {
        Loaded {
            hashes: hashes.chunks(G * N),
            lanes: std::marker::PhantomData,
        }
    }
}

impl<V: Lanes<N>, const N: usize, const G: usize> Iterator for Loaded<'_, V, N, G> {
    type Item = ([V; G], [usize; G]);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let step = self.hashes.next()?;
        // SAFETY: `new`'s caller vouches for the CPU.
        Some(unsafe { load_step(step) })
    }
}

/// Hashes of keys of mixed lengths gathered before their bits are set or
/// tested: long keys' hashes are long chains of multiplies, and with
/// nothing between them the core overlaps more of those chains than with a
/// group's bits between each two.
pub(crate) const BUFFER: usize = 4096;

/// LevelDB's `Hash` of keys of mixed lengths by length
/// ([`hash_by_length`]), into a buffer: `flush(hashes)` takes the
/// buffer's hashes (in the order they were hashed) each time it is full,
/// and at the end.
///
/// `flush` is the caller's closure, defined where its features are
/// enabled: setting bits it is large, and inlined here it made the loop
/// around the hashes slower.
///
/// # Safety
/// As for [`Lanes`]; `N2 == 2 * N`.
#[inline(always)]
pub(crate) unsafe fn buffered_hashes<V: Lanes<N>, const N: usize, const N2: usize>(
    keys: &[&[u8]],
    variant: HashVariant,
    mut flush: impl FnMut(&[u32]),
) {
    // (`N` entries past the buffer: the last group stores a whole vector.)
    let mut hashes = [0u32; BUFFER + 32];
    let mut len = 0;
    // SAFETY: as for this function.
    unsafe {
        hash_by_length::<V, N, N2>(
            keys,
            variant,
            #[inline(always)]
            |h, _, n| {
                let to: &mut [u32; N] = (&mut hashes[len..len + N]).try_into().expect("N");
                h.store(to);
                len += n;
                if len >= BUFFER {
                    flush(&hashes[..len]);
                    len = 0;
                }
            },
        );
    }
    flush(&hashes[..len]);
}

/// LevelDB's `Hash` of keys of mixed lengths (a batch's window), by
/// length as [`hash_by_length`] takes them, into `hashes` in the keys'
/// order (as long as `keys`).
///
/// # Safety
/// As for [`Lanes`]; `N2 == 2 * N`.
#[inline(always)]
pub(crate) unsafe fn hashes_in_order<V: Lanes<N>, const N: usize, const N2: usize>(
    keys: &[&[u8]],
    variant: HashVariant,
    hashes: &mut [u32],
) {
    // SAFETY: as for this function.
    unsafe {
        hash_by_length::<V, N, N2>(
            keys,
            variant,
            #[inline(always)]
            |h, at, n| {
                let mut out = [0u32; N];
                h.store(&mut out);
                for (&i, h) in at[..n].iter().zip(out) {
                    hashes[i] = h;
                }
            },
        );
    }
}

/// LevelDB's `Hash` of each key, `N` at a time (for the tests).
///
/// # Safety
/// As for [`Lanes`].
#[cfg(test)]
#[inline(always)]
pub(crate) unsafe fn hashes<V: Lanes<N>, const N: usize>(
    keys: &[&[u8]],
    variant: HashVariant,
) -> Vec<u32> {
    let mut hashes = Vec::new();
    for group in keys.chunks(N) {
        let mut h = [0u32; N];
        // SAFETY: as for this function.
        unsafe { hash_group::<V, N>(group, variant).store(&mut h) };
        hashes.extend_from_slice(&h[..group.len()]);
    }
    hashes
}

/// The positions of 30 probes of each hash in a filter of `bits` bits
/// (`0 < bits <= 2^31`), by [`Probes`] (for the tests).
///
/// # Safety
/// As for [`Lanes`].
#[cfg(test)]
#[inline(always)]
pub(crate) unsafe fn positions<V: Lanes<N>, const N: usize>(
    hashes: &[u32],
    bits: u64,
) -> Vec<[u32; 30]> {
    assert!(bits > 0 && bits <= 1 << 31);
    let mut all = Vec::new();
    for group in hashes.chunks(N) {
        let mut rows = [[0u32; N]; 30];
        // SAFETY: as for this function; `bits` was checked.
        unsafe {
            let reducer = Reducer::<V, N>::new(bits);
            let mut probes = Probes::new(&reducer, V::load_up_to(group));
            for row in &mut rows {
                probes.next().store(row);
            }
        }
        all.extend((0..group.len()).map(|lane| rows.map(|row| row[lane])));
    }
    all
}
