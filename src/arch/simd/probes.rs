//! Probe positions in lanes: LevelDB's `(h + j * delta) % bits`, two
//! exact reductions a key from doubles ([`Reducer`]), the others by adds
//! ([`Probes`]), every position below `bits` by construction (what the
//! unchecked accesses of [`steps`](super::steps) rest on).

use super::Lanes;

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
