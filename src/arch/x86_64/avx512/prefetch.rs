//! Prefetches for many keys: so many that their bytes are likely out of
//! the cache, where each pair's key bytes are asked for two pairs ahead,
//! and the keys' slices two pairs further.

use std::arch::x86_64::*;

use super::LANES;
use crate::arch::MANY_KEYS;

/// Whether there are so many keys (2^15 and more) that their bytes are
/// likely out of the cache: then each pair's keys are prefetched two
/// pairs ahead (for keys in the cache the prefetches would cost more than
/// they save).
pub(super) fn keys_far(keys: &[&[u8]]) -> bool {
    keys.len() >= MANY_KEYS
}

/// Pairs of groups ahead whose key bytes [`prefetch_keys`] asks for.
pub(super) const AHEAD: usize = 2;

/// Asks for the first bytes of the 32 keys from `keys[from]` on (if
/// any), so that keys far apart in memory are in the cache by the time
/// they are hashed. Into every level (T0), not non-temporally: on Intel
/// cores a non-temporal prefetch made creating a filter of a million keys
/// slower than no prefetch at all (see benches/record/). Then the slices
/// of the 32 keys after those, whose loads the key prefetches would
/// otherwise wait on.
#[inline]
#[target_feature(enable = "avx512f,avx512vl")]
pub(super) fn prefetch_keys(keys: &[&[u8]], from: usize) {
    // SAFETY: a prefetch reads nothing and faults on no address; the
    // block is for Rust before 1.93, where `_mm_prefetch` is an unsafe fn.
    #[allow(unused_unsafe)]
    for key in keys.iter().skip(from).take(2 * LANES) {
        unsafe { _mm_prefetch::<_MM_HINT_T0>(key.as_ptr().cast()) };
    }
    // And the slices of the keys two pairs later, a cache line (four
    // slices) at a time: without them, the key prefetches above wait
    // for the slices' loads from memory.
    let later = keys.iter().skip(from + 2 * 2 * LANES);
    // SAFETY: as above.
    #[allow(unused_unsafe)]
    for key in later.step_by(4).take(2 * LANES / 4) {
        unsafe { _mm_prefetch::<_MM_HINT_T0>((key as *const &[u8]).cast()) };
    }
}
