//! Setting and testing probe bits through rows: each step's byte indexes
//! and bit masks stored to the stack, then read back by the scalar
//! read-modify-writes ([`insert_steps`]) or loads ([`contains_steps`])
//! that use them, a step later, so that the stores reach the loads
//! before they are needed. Steps come from keys hashed by the caller, or
//! from hashes ([`Loaded`]).

use std::mem::MaybeUninit;

use super::{Lanes, Probes, Reducer};

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
