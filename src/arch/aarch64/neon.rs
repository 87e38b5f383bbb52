//! The NEON kernel: filters and batches, by the algorithm of
//! [`simd`](crate::arch::simd) over four 32-bit lanes ([`Lanes`] for
//! `uint32x4_t`), two vectors (eight keys) a step. Chosen only when
//! `LEVELDB_FILTER_KERNEL=neon` asks for it, until a measurement on
//! aarch64 hardware says it is faster than the portable kernel.
//!
//! NEON is part of every aarch64 CPU (the target enables it): the
//! intrinsics below need no `#[target_feature]` of their own.

use std::arch::aarch64::*;
use std::mem::MaybeUninit;

use crate::arch::simd::{self, hash_step, one_intrinsic, Lanes, Reducer};
use crate::arch::{grouped, vectorable, Vector};
use crate::HashVariant;

/// Keys to a vector.
const LANES: usize = 4;

/// Keys of mixed lengths hashed (by length) before they are answered.
const WINDOW: usize = 4096;

/// Proof that this CPU has NEON: only [`Neon::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Neon(());

impl Neon {
    /// The kernel, where the CPU has NEON (every aarch64 CPU).
    pub(crate) fn detect() -> Option<Neon> {
        std::arch::is_aarch64_feature_detected!("neon").then_some(Neon(()))
    }
}

impl Vector for Neon {
    const NAME: &'static str = "neon";

    /// Sets in `array` the `k` probe bits of every key; `false` (nothing
    /// written) for an array, a `k` or keys this kernel does not take.
    fn insert(self, keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) -> bool {
        let Some(by_length) = grouped(keys, array.len(), k) else {
            return false;
        };
        // SAFETY: `self` proves NEON; the array's length and k were checked.
        unsafe {
            let reducer = Reducer::<uint32x4_t, LANES>::new(array.len() as u64 * 8);
            if by_length {
                simd::buffered_hashes::<uint32x4_t, LANES, 8>(keys, variant, |hashes| {
                    let steps = simd::Loaded::<uint32x4_t, LANES, 2>::new(hashes);
                    simd::insert_steps(steps, &reducer, k, array);
                });
            } else {
                let steps = keys.chunks(2 * LANES).map(|step| hash_step(step, variant));
                simd::insert_steps::<uint32x4_t, LANES, 2>(steps, &reducer, k, array);
            }
        }
        true
    }

    /// For each key, whether all `k` of its probe bits are set in `array`,
    /// into `out` (as long as `keys`); `false` (nothing written) for an
    /// array, a `k` or keys this kernel does not take.
    fn contains_batch(
        self,
        keys: &[&[u8]],
        variant: HashVariant,
        k: usize,
        array: &[u8],
        out: &mut [bool],
    ) -> bool {
        let Some(by_length) = grouped(keys, array.len(), k) else {
            return false;
        };
        if keys.len() != out.len() {
            return false;
        }
        // SAFETY: `self` proves NEON; the array's length, k and `out` were
        // checked.
        unsafe {
            let reducer = Reducer::<uint32x4_t, LANES>::new(array.len() as u64 * 8);
            if by_length {
                let mut hashes = [0u32; WINDOW];
                for (window, out) in keys.chunks(WINDOW).zip(out.chunks_mut(WINDOW)) {
                    let hashes = &mut hashes[..window.len()];
                    simd::hashes_in_order::<uint32x4_t, LANES, 8>(window, variant, hashes);
                    let steps = simd::Loaded::<uint32x4_t, LANES, 2>::new(hashes);
                    simd::contains_steps(steps, &reducer, k, array, out);
                }
            } else {
                let steps = keys.chunks(2 * LANES).map(|step| hash_step(step, variant));
                simd::contains_steps::<uint32x4_t, LANES, 2>(steps, &reducer, k, array, out);
            }
        }
        true
    }

    /// Sets in `array` the `k` probe bits of every key hashed to `hashes`;
    /// `false` (nothing written) for an array or a `k` this kernel does not
    /// take.
    fn insert_hashes(self, hashes: &[u32], k: usize, array: &mut [u8]) -> bool {
        if !vectorable(array.len(), k) {
            return false;
        }
        // SAFETY: `self` proves NEON; the array's length and k were checked.
        unsafe { simd::insert_hashes::<uint32x4_t, LANES>(hashes, k, array) };
        true
    }

    /// LevelDB's `Hash` of each key, by this kernel's groups (for the tests).
    #[cfg(test)]
    fn hashes(self, keys: &[&[u8]], variant: HashVariant) -> Vec<u32> {
        // SAFETY: `self` proves NEON.
        unsafe { simd::hashes::<uint32x4_t, LANES>(keys, variant) }
    }

    /// The positions of 30 probes of each hash in a filter of `bits` bits
    /// (`0 < bits <= 2^31`), by this kernel's reduction (for the tests).
    #[cfg(test)]
    fn positions(self, hashes: &[u32], bits: u64) -> Vec<[u32; 30]> {
        // SAFETY: `self` proves NEON.
        unsafe { simd::positions::<uint32x4_t, LANES>(hashes, bits) }
    }
}

/// Bytes `at..at + 16` of `key`.
#[inline(always)]
fn block(key: &[u8], at: usize) -> &[u8; 16] {
    key[at..at + 16].try_into().expect("16 bytes")
}

/// Four keys' 16 bytes each as words: word t of every key in vector t (a
/// 4x4 transpose by 32-bit, then 64-bit, interleaves).
///
/// # Safety
/// The CPU must have NEON.
#[inline(always)]
unsafe fn transpose([a, b, c, d]: [uint8x16_t; 4]) -> [uint32x4_t; 4] {
    // SAFETY: as for this function.
    unsafe {
        let (a, b, c, d) = (
            vreinterpretq_u32_u8(a),
            vreinterpretq_u32_u8(b),
            vreinterpretq_u32_u8(c),
            vreinterpretq_u32_u8(d),
        );
        // [a0 b0 a2 b2], [a1 b1 a3 b3], [c0 d0 c2 d2], [c1 d1 c3 d3].
        let ab0 = vreinterpretq_u64_u32(vtrn1q_u32(a, b));
        let ab1 = vreinterpretq_u64_u32(vtrn2q_u32(a, b));
        let cd0 = vreinterpretq_u64_u32(vtrn1q_u32(c, d));
        let cd1 = vreinterpretq_u64_u32(vtrn2q_u32(c, d));
        [
            vreinterpretq_u32_u64(vtrn1q_u64(ab0, cd0)),
            vreinterpretq_u32_u64(vtrn1q_u64(ab1, cd1)),
            vreinterpretq_u32_u64(vtrn2q_u64(ab0, cd0)),
            vreinterpretq_u32_u64(vtrn2q_u64(ab1, cd1)),
        ]
    }
}

// SAFETY (every block in this impl): the trait's contract is a CPU with
// NEON, which these intrinsics need; the memory each reads or writes is
// said beside it.
impl Lanes<LANES> for uint32x4_t {
    type Inverse = float64x2_t;
    const ROWS_AHEAD: bool = true;

    #[inline(always)]
    unsafe fn load_up_to(words: &[u32]) -> Self {
        let mut all = [0u32; LANES];
        let n = words.len().min(LANES);
        all[..n].copy_from_slice(&words[..n]);
        // SAFETY: see the impl.
        unsafe { Self::load(&all) }
    }
    #[rustfmt::skip]
    one_intrinsic!(binary: add = vaddq_u32, sub = vsubq_u32, mul = vmulq_u32, xor = veorq_u32, and = vandq_u32, min = vminq_u32,
        shl_by = |a, by| vshlq_u32(a, vreinterpretq_s32_u32(by));
        unary: shl1 = vshlq_n_u32::<1>, shr3 = vshrq_n_u32::<3>, shr16 = vshrq_n_u32::<16>, shr24 = vshrq_n_u32::<24>,
        rotr17 = |h| vorrq_u32(vshrq_n_u32::<17>(h), vshlq_n_u32::<15>(h)));
    one_intrinsic! {
        fn splat(x: u32) -> Self => vdupq_n_u32(x);
        fn load(words: &[u32; LANES]) -> Self => vld1q_u32(words.as_ptr());
        fn store(self: Self, to: &mut [u32; LANES]) => vst1q_u32(to.as_mut_ptr(), self);
        fn store_uninit(self: Self, to: &mut MaybeUninit<[u32; LANES]>) =>
            vst1q_u32(to.as_mut_ptr().cast(), self);
        fn inverse(inv: f64) -> float64x2_t => vdupq_n_f64(inv);
        fn select_wrapped(sum: Self, addend: Self, wrapped: Self, kept: Self) -> Self =>
            vbslq_u32(vcltq_u32(sum, addend), wrapped, kept);
    }
    /// Two lanes at a time as doubles (NEON's are two to a vector),
    /// truncated back by unsigned conversions.
    #[inline(always)]
    unsafe fn quotient(self, inv: float64x2_t) -> Self {
        // SAFETY: see the impl.
        unsafe {
            let lo = vcvtq_f64_u64(vmovl_u32(vget_low_u32(self)));
            let hi = vcvtq_f64_u64(vmovl_high_u32(self));
            let lo = vcvtq_u64_f64(vmulq_f64(lo, inv));
            let hi = vcvtq_u64_f64(vmulq_f64(hi, inv));
            vcombine_u32(vmovn_u64(lo), vmovn_u64(hi))
        }
    }
    #[inline(always)]
    unsafe fn chunk(keys: &[&[u8]; LANES], at: usize) -> [Self; 4] {
        // SAFETY: see the impl; each load reads the 16 bytes of a checked
        // slice.
        unsafe {
            transpose([
                vld1q_u8(block(keys[0], at).as_ptr()),
                vld1q_u8(block(keys[1], at).as_ptr()),
                vld1q_u8(block(keys[2], at).as_ptr()),
                vld1q_u8(block(keys[3], at).as_ptr()),
            ])
        }
    }
    /// Each key's bytes copied into a zeroed block of 16, then as `chunk`.
    #[inline(always)]
    unsafe fn rest(keys: &[&[u8]; LANES], at: usize, len: usize) -> ([Self; 4], Self) {
        let mut blocks = [[0u8; 16]; LANES];
        for (block, key) in blocks.iter_mut().zip(keys) {
            block[..len - at].copy_from_slice(&key[at..len]);
        }
        // SAFETY: see the impl; each load reads a block of 16 bytes.
        let w = unsafe {
            transpose([
                vld1q_u8(blocks[0].as_ptr()),
                vld1q_u8(blocks[1].as_ptr()),
                vld1q_u8(blocks[2].as_ptr()),
                vld1q_u8(blocks[3].as_ptr()),
            ])
        };
        (w, simd::word(w, (len - at) / 4))
    }
}
