//! The AVX2 kernel: filters and batches, eight keys at a time. Eight keys
//! of one length hash together from 16-byte chunks loaded and transposed
//! (keys of mixed lengths wait with others of their length until sixteen);
//! each key's first position and step come exactly from doubles, the next
//! positions by adds ([`Probes8`]); rows of byte indexes and bit masks are
//! stored a group ahead of the scalar loads and read-modify-writes that use
//! them. Batches read their probes' words by gathers only where a timing
//! at start-up finds them faster ([`gathers_pay`]): gathers are slow on
//! many AVX2 cores, and nothing the CPU reports says which.
//!
//! Every `unsafe fn` here needs, besides the terms of its `# Safety`
//! section, a CPU with the features it enables: the kernel's type is the
//! proof of that, and only its methods call in from outside.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;
use std::sync::OnceLock;

use super::M;
use crate::arch::{
    groups_by_length, looks_one_length, vectorable, CLASSES, FEW_TO_GROUP, MIN_PROBED_BYTES,
};
use crate::hash::SEED;
use crate::HashVariant;

/// Proof that this CPU has AVX2: only [`Avx2::detect`] makes one, so that
/// every method may run this kernel's code (which enables AVX2) safely.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2 {
    /// Whether batches read their probes' words by gathers rather than
    /// by scalar loads ([`gathers_pay`]).
    gather: bool,
}

impl From<super::Avx512> for Avx2 {
    /// An AVX-512 kernel proves AVX2 as well: [`Avx512::detect`](super::Avx512::detect)
    /// asks for it. (For the bits of filters from hashes: no batches.)
    fn from(_: super::Avx512) -> Avx2 {
        Avx2 { gather: false }
    }
}

impl Avx2 {
    /// The kernel, where the CPU has AVX2.
    pub(crate) fn detect() -> Option<Avx2> {
        if !std::is_x86_feature_detected!("avx2") {
            return None;
        }
        static GATHER: OnceLock<bool> = OnceLock::new();
        let gather = *GATHER.get_or_init(|| {
            // `LEVELDB_FILTER_GATHER=yes` or `no` settles it without the
            // timing (to measure either way, or rule gathers out).
            match std::env::var("LEVELDB_FILTER_GATHER").as_deref() {
                Ok("yes") => true,
                Ok("no") => false,
                // SAFETY: the CPU has AVX2.
                _ => unsafe { gathers_pay() },
            }
        });
        Some(Avx2 { gather })
    }

    /// This kernel with each way of reading a batch's probes, whatever
    /// the CPU (for the tests: each is tested on every AVX2 CPU).
    #[cfg(test)]
    pub(crate) fn every_probing(self) -> [Avx2; 2] {
        [false, true].map(|gather| Avx2 { gather })
    }

    /// Sets in `array` the `k` probe bits of every key; `false` (nothing
    /// written) for an array or a `k` this kernel does not take.
    pub(crate) fn insert(
        self,
        keys: &[&[u8]],
        variant: HashVariant,
        k: usize,
        array: &mut [u8],
    ) -> bool {
        if !vectorable(array.len(), k) {
            return false;
        }
        let by_length = !looks_one_length(keys);
        if by_length && keys.len() < FEW_TO_GROUP {
            return false;
        }
        // SAFETY: `self` proves the CPU has AVX2; the array's length and k
        // were checked.
        unsafe { insert(keys, variant, k, array, by_length) };
        true
    }

    /// For each key, whether all `k` of its probe bits are set in `array`,
    /// into `out` (as long as `keys`); `false` (nothing written) for an
    /// array or a `k` this kernel does not take.
    pub(crate) fn contains_batch(
        self,
        keys: &[&[u8]],
        variant: HashVariant,
        k: usize,
        array: &[u8],
        out: &mut [bool],
    ) -> bool {
        if !vectorable(array.len(), k) || keys.len() != out.len() {
            return false;
        }
        let by_length = !looks_one_length(keys);
        if by_length && keys.len() < FEW_TO_GROUP {
            return false;
        }
        // Gathers read 4 bytes a probe.
        let gather = self.gather && array.len() >= MIN_PROBED_BYTES;
        // SAFETY: `self` proves the CPU has AVX2; the array's length, k and
        // `out` were checked, and `gather` only for arrays of 4 bytes or more.
        unsafe { contains(keys, variant, k, array, out, by_length, gather) };
        true
    }

    /// Sets in `array` the `k` probe bits of every key hashed to `hashes`;
    /// `false` (nothing written) for an array or a `k` this kernel does not
    /// take.
    pub(crate) fn insert_hashes(self, hashes: &[u32], k: usize, array: &mut [u8]) -> bool {
        if !vectorable(array.len(), k) {
            return false;
        }
        // SAFETY: `self` proves the CPU has AVX2; the array's length and k
        // were checked.
        unsafe { insert_hashes(hashes, k, array) };
        true
    }

    /// LevelDB's `Hash` of each key, by this kernel's groups (for the tests).
    #[cfg(test)]
    pub(crate) fn hashes(self, keys: &[&[u8]], variant: HashVariant) -> Vec<u32> {
        let mut hashes = Vec::new();
        for group in keys.chunks(8) {
            let mut h = [0u32; 8];
            // SAFETY: `self` proves the CPU has AVX2; `h` is 32 bytes.
            unsafe { _mm256_storeu_si256(h.as_mut_ptr().cast(), hash8(group, variant)) };
            hashes.extend_from_slice(&h[..group.len()]);
        }
        hashes
    }

    /// The positions of 30 probes of each hash in a filter of `bits` bits
    /// (`0 < bits <= 2^31`), by this kernel's reduction (for the tests).
    #[cfg(test)]
    pub(crate) fn positions(self, hashes: &[u32], bits: u64) -> Vec<[u32; 30]> {
        assert!(bits > 0 && bits <= 1 << 31);
        let mut all = Vec::new();
        for group in hashes.chunks(8) {
            let mut lanes = [0u32; 8];
            lanes[..group.len()].copy_from_slice(group);
            let mut rows = [MaybeUninit::<[u32; 8]>::uninit(); 30];
            // SAFETY: `self` proves the CPU has AVX2.
            unsafe {
                let reducer = Reducer::new(bits);
                positions(&reducer, load8(&lanes), &mut rows);
            }
            // SAFETY: `positions` wrote every row.
            let rows = rows.map(|row| unsafe { row.assume_init() });
            all.extend((0..group.len()).map(|lane| rows.map(|row| row[lane])));
        }
        all
    }
}

/// `h % bits` for one filter's `0 < bits <= 2^31`, eight lanes at a
/// time, the quotient from doubles (AVX2 has no unsigned conversions).
struct Reducer {
    /// Just under `1 / bits`, so that quotients are never too large.
    inv: __m256d,
    bits: __m256i,
    /// `2^32 % bits`: what a wrap of the 32-bit sum takes off a position.
    wrap: __m256i,
}

impl Reducer {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn new(bits: u64) -> Reducer {
        Reducer {
            inv: _mm256_set1_pd(super::inverse(bits)),
            bits: _mm256_set1_epi32(bits as u32 as i32),
            wrap: _mm256_set1_epi32(super::wrap(bits) as i32),
        }
    }

    /// As the AVX-512 `Reducer::rem16`: `h - q * bits` is in
    /// `[0, 2 * bits)`, and one unsigned minimum ends it.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn rem8(&self, h: __m256i) -> __m256i {
        // h as a double: its top bit flipped, converted as signed, plus
        // 2^31 (exact). The quotient is below 2^26: it fits the signed
        // conversion back.
        let flipped = _mm256_xor_si256(h, _mm256_set1_epi32(i32::MIN));
        let q = _mm256_set_m128i(
            self.quotient4(_mm256_extracti128_si256::<1>(flipped)),
            self.quotient4(_mm256_castsi256_si128(flipped)),
        );
        let r = _mm256_sub_epi32(h, _mm256_mullo_epi32(q, self.bits));
        _mm256_min_epu32(r, _mm256_sub_epi32(r, self.bits))
    }

    /// `floor(h * inv)` for four lanes of `h` with its top bit flipped.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn quotient4(&self, flipped: __m128i) -> __m128i {
        let x = _mm256_add_pd(_mm256_cvtepi32_pd(flipped), _mm256_set1_pd(2147483648.0));
        _mm256_cvttpd_epi32(_mm256_mul_pd(x, self.inv))
    }
}

/// See [`Avx2::insert`]: eight keys at a time. Eight keys of one length
/// hash together, their 16-byte chunks loaded and transposed (no
/// gathers, which are slow on many AVX2 cores); keys of mixed lengths
/// (`by_length`) wait with others of their length ([`hashes_by_length`]),
/// so that groups of eight have one length. The eight keys' probe
/// positions come by adds from two reductions a key ([`Probes8`]) and
/// their bits are set by scalar read-modify-writes.
///
/// # Safety
/// The CPU must have AVX2; `0 < array.len() <= 2^28`.
#[target_feature(enable = "avx2")]
unsafe fn insert(
    keys: &[&[u8]],
    variant: HashVariant,
    k: usize,
    array: &mut [u8],
    by_length: bool,
) {
    if by_length {
        // SAFETY: as for this function.
        return unsafe { insert_by_length(keys, variant, k, array) };
    }
    let reducer = Reducer::new(array.len() as u64 * 8);
    // Rows of byte indexes and bit masks are stored a group ahead of the
    // bits they set: a row read at once after its store waits on it.
    // Each group's rows are written before they are read: left
    // uninitialized, as zeroing them cost more than setting the bits of
    // a filter of 34 keys.
    let mut rows = [[MaybeUninit::<[u32; 8]>::uninit(); 60]; 2];
    // And each group is hashed before the last group's bits are set: the
    // hash's chain of multiplies (its latency, not its work, was the cost)
    // then runs beside those stores.
    let mut groups = keys.chunks(8);
    let mut next = groups.next().map(|group| hash8(group, variant));
    let mut g = 0;
    while let Some(h) = next {
        next = groups.next().map(|group| hash8(group, variant));
        masks(&reducer, h, &mut rows[g % 2][..2 * k]);
        // SAFETY (here and below): the rows read were written by
        // `masks` for the last group, from positions of `Probes8` over
        // `reducer`, made for `array`: clamped below 8 * array.len(), so
        // indexes below array.len().
        if g > 0 {
            unsafe { set_rows(array, &rows[(g + 1) % 2][..2 * k], 8) };
        }
        g += 1;
    }
    if g > 0 {
        let ready = keys.len() - 8 * (g - 1);
        unsafe { set_rows(array, &rows[(g + 1) % 2][..2 * k], ready) };
    }
}

/// [`insert`] for keys of mixed lengths: their hashes by length, a
/// buffer at a time ([`hashes_by_length`]), each buffer's bits set from the
/// hashes ([`insert_hashes`]).
///
/// # Safety
/// As for [`insert`].
#[inline(never)]
#[target_feature(enable = "avx2")]
unsafe fn insert_by_length(keys: &[&[u8]], variant: HashVariant, k: usize, array: &mut [u8]) {
    hashes_by_length::<false>(keys, variant, |hashes, _| {
        // SAFETY: as for this function.
        unsafe { insert_hashes(hashes, k, array) };
    });
}

/// Hashes of keys of mixed lengths gathered before their bits are set or
/// tested.
const BUFFER: usize = 2048;

/// LevelDB's `Hash` of keys of mixed lengths, sixteen of one length at a
/// time ([`groups_by_length`]), two groups of eight side by side
/// ([`hash_same8x2`]), into a buffer: `flush(hashes, at)` takes the
/// buffer's hashes each time it is full and at the end, `hashes[i]` that
/// of the key at index `at[i]` (where `INDEXED`; else `at` is empty: a
/// filter's bits need no order). (Many hashes before any bits: long keys'
/// hashes are long chains of multiplies, and with nothing between them the
/// core overlaps more of those chains than with a group's bits between each
/// two.)
#[inline]
#[target_feature(enable = "avx2")]
fn hashes_by_length<const INDEXED: bool>(
    keys: &[&[u8]],
    variant: HashVariant,
    mut flush: impl FnMut(&[u32], &[usize]),
) {
    // (16 entries past the buffer: a unit stores two whole vectors.)
    let mut hashes = [0u32; BUFFER + 16];
    let mut at = [0usize; BUFFER + 16];
    let mut len = 0;
    groups_by_length::<16>(keys, |group, group_at, n, class| {
        let h = hash_class(group, class, variant);
        let to: &mut [u32; 16] = (&mut hashes[len..len + 16]).try_into().expect("16 entries");
        // SAFETY: `to` is 16 u32s, 64 bytes.
        unsafe {
            _mm256_storeu_si256(to.as_mut_ptr().cast(), h[0]);
            _mm256_storeu_si256(to[8..].as_mut_ptr().cast(), h[1]);
        }
        if INDEXED {
            at[len..len + n].copy_from_slice(&group_at[..n]);
        }
        len += n;
        if len >= BUFFER {
            flush(&hashes[..len], &at[..len * usize::from(INDEXED)]);
            len = 0;
        }
    });
    flush(&hashes[..len], &at[..len * usize::from(INDEXED)]);
}

/// The hashes of sixteen keys of length class `class` of
/// [`groups_by_length`]: below the last class, all `class` bytes long.
#[inline]
#[target_feature(enable = "avx2")]
fn hash_class(keys: &[&[u8]; 16], class: usize, variant: HashVariant) -> [__m256i; 2] {
    let (a, b) = keys.split_at(8);
    if class < CLASSES - 1 {
        hash_same8x2(a, b, class, variant)
    } else {
        [hash8_apart(a, variant), hash8_apart(b, variant)]
    }
}

/// [`insert`] for keys already hashed: each group's rows stored a group
/// ahead of the bits they set, as there.
///
/// # Safety
/// As for [`insert`].
#[target_feature(enable = "avx2")]
unsafe fn insert_hashes(hashes: &[u32], k: usize, array: &mut [u8]) {
    let reducer = Reducer::new(array.len() as u64 * 8);
    let mut rows = [[MaybeUninit::<[u32; 8]>::uninit(); 60]; 2];
    let (mut g, mut ready) = (0, 0);
    for group in hashes.chunks(8) {
        masks(&reducer, load_up_to8(group), &mut rows[g % 2][..2 * k]);
        // SAFETY: as in `insert`.
        if g > 0 {
            unsafe { set_rows(array, &rows[(g + 1) % 2][..2 * k], ready) };
        }
        (g, ready) = (g + 1, group.len());
    }
    if g > 0 {
        // SAFETY: as in `insert`.
        unsafe { set_rows(array, &rows[(g + 1) % 2][..2 * k], ready) };
    }
}

/// See [`Avx2::contains_batch`]: as `insert`, eight keys at a time, all
/// k probes of each key, with no branch on the bits: their words by
/// gathers (`gather`), or from rows of positions stored a group ahead of
/// the scalar loads that test them.
///
/// # Safety
/// The CPU must have AVX2; `0 < array.len() <= 2^28`, `4 <= array.len()`
/// where `gather`; `out.len() == keys.len()`.
#[target_feature(enable = "avx2")]
unsafe fn contains(
    keys: &[&[u8]],
    variant: HashVariant,
    k: usize,
    array: &[u8],
    out: &mut [bool],
    by_length: bool,
    gather: bool,
) {
    let reducer = Reducer::new(array.len() as u64 * 8);
    if by_length {
        // Keys of mixed lengths, hashed by length a buffer at a time as in
        // `insert_by_length`.
        hashes_by_length::<true>(keys, variant, |hashes, at| {
            // SAFETY: as for this function.
            unsafe { answer_hashes(&reducer, hashes, at, k, array, out, gather) };
        });
        return;
    }
    // Each group hashed a group ahead of its probes, as in `insert`.
    let mut groups = keys.chunks(8);
    let mut next = groups.next().map(|group| hash8(group, variant));
    if gather {
        for out in out.chunks_mut(8) {
            let Some(h) = next else { break };
            next = groups.next().map(|group| hash8(group, variant));
            // SAFETY: the caller vouches for `4 <= array.len()`.
            let all = unsafe { gather8(&reducer, h, k, array) };
            for (lane, answer) in out.iter_mut().enumerate() {
                *answer = all >> lane & 1 != 0;
            }
        }
        return;
    }
    // Written before read, as in `insert`.
    let mut rows = [[MaybeUninit::<[u32; 8]>::uninit(); 60]; 2];
    let mut g = 0;
    while let Some(h) = next {
        next = groups.next().map(|group| hash8(group, variant));
        masks(&reducer, h, &mut rows[g % 2][..2 * k]);
        // SAFETY (here and below): the rows read were written by
        // `masks` for the last group, from positions of `Probes8` over
        // `reducer`, made for `array`: indexes below array.len().
        if g > 0 {
            let out = &mut out[8 * (g - 1)..8 * g];
            unsafe { test_rows(array, &rows[(g + 1) % 2][..2 * k], out) };
        }
        g += 1;
    }
    if g > 0 {
        let last = &mut out[8 * (g - 1)..];
        unsafe { test_rows(array, &rows[(g + 1) % 2][..2 * k], last) };
    }
}

/// The answers for keys hashed to `hashes`, the answer for `hashes[i]`
/// into `out[at[i]]`, eight at a time: by gathers (`gather`), or from rows
/// of positions stored a group ahead of the scalar loads that test them.
///
/// # Safety
/// The CPU must have AVX2; `reducer` was made for `array`, `0 <
/// array.len() <= 2^28`, and `4 <= array.len()` where `gather`.
#[target_feature(enable = "avx2")]
unsafe fn answer_hashes(
    reducer: &Reducer,
    hashes: &[u32],
    at: &[usize],
    k: usize,
    array: &[u8],
    out: &mut [bool],
    gather: bool,
) {
    let groups = hashes.chunks(8).zip(at.chunks(8));
    if gather {
        for (group, at) in groups {
            // SAFETY: the caller vouches for `4 <= array.len()`.
            let all = unsafe { gather8(reducer, load_up_to8(group), k, array) };
            for (lane, &i) in at.iter().enumerate() {
                out[i] = all >> lane & 1 != 0;
            }
        }
        return;
    }
    let mut rows = [[MaybeUninit::<[u32; 8]>::uninit(); 60]; 2];
    let (mut g, mut last) = (0, &[][..]);
    for (group, at) in groups {
        masks(reducer, load_up_to8(group), &mut rows[g % 2][..2 * k]);
        if g > 0 {
            // SAFETY: the rows read were written by `masks` for the last
            // group, from positions over `reducer`: indexes below
            // array.len().
            unsafe { test_rows_at(array, &rows[(g + 1) % 2][..2 * k], last, out) };
        }
        (g, last) = (g + 1, at);
    }
    if g > 0 {
        // SAFETY: as above.
        unsafe { test_rows_at(array, &rows[(g + 1) % 2][..2 * k], last, out) };
    }
}

/// Which of eight keys hashed to `h` have all `k` probe bits set, as bits
/// of the result: each probe's 4 bytes from its byte on (or the array's
/// last 4) by a gather.
///
/// # Safety
/// `reducer` was made for `array`; `4 <= array.len()`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn gather8(reducer: &Reducer, h: __m256i, k: usize, array: &[u8]) -> u32 {
    let mut probes = Probes8::new(reducer, h);
    let last_word = _mm256_set1_epi32((array.len() - 4) as i32);
    let (one, zero) = (_mm256_set1_epi32(1), _mm256_setzero_si256());
    let mut all = _mm256_set1_epi32(-1);
    for _ in 0..k {
        let pos = probes.next();
        let at = _mm256_min_epu32(_mm256_srli_epi32::<3>(pos), last_word);
        let bit = _mm256_sub_epi32(pos, _mm256_slli_epi32::<3>(at));
        // SAFETY: every lane reads 4 bytes from `at <= array.len() - 4`.
        let word = unsafe { _mm256_i32gather_epi32::<1>(array.as_ptr().cast(), at) };
        let hit = _mm256_and_si256(word, _mm256_sllv_epi32(one, bit));
        all = _mm256_andnot_si256(_mm256_cmpeq_epi32(hit, zero), all);
    }
    _mm256_movemask_ps(_mm256_castsi256_ps(all)) as u32
}

/// Whether this CPU answers batches faster by gathers than from rows of
/// positions: timed once per process, each way in turn on 4,096 hashes
/// against a filter of 5 KiB, the fastest of three runs each, gathers
/// taken only where they win by a tenth. Gathers are fast on some cores
/// and slow on others (AMD Zen 2 and 3; Intel Skylake to Tiger Lake since
/// the 2023 "Downfall" microcode), and nothing the CPU reports says which.
/// On the Xeon (family 6 model 167) gathers answered batches in about
/// 3/4 of the time (benches/record/). (About 0.2 ms, once; the environment
/// variable `LEVELDB_FILTER_GATHER=yes` or `no` decides instead.)
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn gathers_pay() -> bool {
    const KEYS: usize = 4096;
    // A filter of ten bits a key, about half its bits set; hashes spread
    // by a multiplicative step (the answers are not what is timed).
    let array: Vec<u8> = (0..KEYS * 10 / 8)
        .map(|i| (i as u8).wrapping_mul(0x9d))
        .collect();
    let hashes: Vec<u32> = (0..KEYS as u32)
        .map(|i| i.wrapping_mul(0x9e37_79b9))
        .collect();
    let at: Vec<usize> = (0..KEYS).collect();
    let mut out = vec![false; KEYS];
    let reducer = Reducer::new(array.len() as u64 * 8);
    let mut best = [std::time::Duration::MAX; 2];
    for _ in 0..3 {
        for (gather, best) in [false, true].into_iter().zip(&mut best) {
            let start = std::time::Instant::now();
            // SAFETY: `reducer` was made for `array`, of 5,120 bytes.
            unsafe { answer_hashes(&reducer, &hashes, &at, 7, &array, &mut out, gather) };
            *best = (*best).min(start.elapsed());
        }
    }
    std::hint::black_box(&out);
    best[1] * 10 < best[0] * 9
}

/// [`hash8`] out of line, for the keys of 64 bytes and more, which share
/// a class in [`groups_by_length`] and may differ in length.
#[inline(never)]
#[target_feature(enable = "avx2")]
fn hash8_apart(keys: &[&[u8]], variant: HashVariant) -> __m256i {
    hash8(keys, variant)
}

/// The probe positions of eight keys hashed to `h`, in order: two exact
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
/// `bits` brings back below it. (As the AVX-512 kernel's `Probes16`.)
struct Probes8 {
    pos: __m256i,
    h: __m256i,
    delta: __m256i,
    step: __m256i,
    step_wrapped: __m256i,
    bits: __m256i,
}

impl Probes8 {
    #[inline]
    #[target_feature(enable = "avx2")]
    fn new(reducer: &Reducer, h: __m256i) -> Probes8 {
        let delta = _mm256_or_si256(_mm256_srli_epi32::<17>(h), _mm256_slli_epi32::<15>(h));
        let last = _mm256_sub_epi32(reducer.bits, _mm256_set1_epi32(1));
        let step = _mm256_min_epu32(reducer.rem8(delta), last);
        // step - wrap modulo bits: the smaller of the two, as unsigned.
        let less = _mm256_sub_epi32(step, reducer.wrap);
        let step_wrapped = _mm256_min_epu32(less, _mm256_add_epi32(less, reducer.bits));
        Probes8 {
            pos: _mm256_min_epu32(reducer.rem8(h), last),
            h,
            delta,
            step,
            step_wrapped,
            bits: reducer.bits,
        }
    }

    /// This probe's positions (each below `bits`), and moves to the next.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn next(&mut self) -> __m256i {
        let at = self.pos;
        let h = _mm256_add_epi32(self.h, self.delta);
        // The sum wrapped where it came out below delta (unsigned).
        let kept = _mm256_cmpeq_epi32(_mm256_max_epu32(h, self.delta), h);
        let step = _mm256_blendv_epi8(self.step_wrapped, self.step, kept);
        let pos = _mm256_add_epi32(at, step);
        self.pos = _mm256_min_epu32(pos, _mm256_sub_epi32(pos, self.bits));
        self.h = h;
        at
    }
}

/// Stores the positions of the probes of eight keys hashed to `h`, a row
/// per probe (for the tests: the kernel's work takes [`masks`]).
#[cfg(test)]
#[inline]
#[target_feature(enable = "avx2")]
fn positions(reducer: &Reducer, h: __m256i, rows: &mut [MaybeUninit<[u32; 8]>]) {
    let mut probes = Probes8::new(reducer, h);
    for row in rows {
        // SAFETY: `row` is 32 bytes.
        unsafe { _mm256_storeu_si256(row.as_mut_ptr().cast(), probes.next()) };
    }
}

/// For each of the `out.len()` first lanes, whether the bit of every pair
/// of rows (byte indexes, then bit masks, as [`masks`] stores them) is
/// set: two loads from the rows a probe, as `set_rows` takes them (as fast
/// as a position's load and its shifts, or faster).
///
/// # Safety
/// The rows are initialized, and those lanes' indexes are below
/// `array.len()`: positions of `Probes8` over the `Reducer` made for
/// `array` (clamped below its bits), divided by 8.
#[inline]
unsafe fn test_rows(array: &[u8], rows: &[MaybeUninit<[u32; 8]>], out: &mut [bool]) {
    for (lane, answer) in out.iter_mut().enumerate() {
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

/// [`test_rows`] for the keys at indexes `at` (up to eight, a group's
/// lanes in order), each answer into its key's place in `out`.
///
/// # Safety
/// As for [`test_rows`], for `at.len()` lanes.
#[inline]
unsafe fn test_rows_at(
    array: &[u8],
    rows: &[MaybeUninit<[u32; 8]>],
    at: &[usize],
    out: &mut [bool],
) {
    let mut answers = [false; 8];
    // SAFETY: by the caller.
    unsafe { test_rows(array, rows, &mut answers[..at.len()]) };
    for (&i, &answer) in at.iter().zip(&answers) {
        out[i] = answer;
    }
}

/// Stores, for the probes of eight keys hashed to `h`, a row of byte
/// indexes and a row of bit masks per probe.
#[inline]
#[target_feature(enable = "avx2")]
fn masks(reducer: &Reducer, h: __m256i, rows: &mut [MaybeUninit<[u32; 8]>]) {
    let mut probes = Probes8::new(reducer, h);
    let (seven, one) = (_mm256_set1_epi32(7), _mm256_set1_epi32(1));
    for pair in rows.chunks_exact_mut(2) {
        let pos = probes.next();
        let mask = _mm256_sllv_epi32(one, _mm256_and_si256(pos, seven));
        // SAFETY: each row is 32 bytes.
        unsafe {
            _mm256_storeu_si256(pair[0].as_mut_ptr().cast(), _mm256_srli_epi32::<3>(pos));
            _mm256_storeu_si256(pair[1].as_mut_ptr().cast(), mask);
        }
    }
}

/// Sets the bits of the first `lanes` lanes of each pair of rows (byte
/// indexes, then bit masks).
///
/// # Safety
/// The rows are initialized, and those indexes are below `array.len()`:
/// positions of `Probes8` over the `Reducer` made for `array` (clamped
/// below its bits), divided by 8.
#[inline]
unsafe fn set_rows(array: &mut [u8], rows: &[MaybeUninit<[u32; 8]>], lanes: usize) {
    for pair in rows.chunks_exact(2) {
        // SAFETY: initialized, by the caller.
        let (at, mask) = unsafe { (pair[0].assume_init_ref(), pair[1].assume_init_ref()) };
        for (&at, &mask) in at[..lanes].iter().zip(&mask[..lanes]) {
            // SAFETY: at < array.len(), by the caller.
            unsafe { *array.get_unchecked_mut(at as usize) |= mask as u8 };
        }
    }
}

/// LevelDB's `Hash` of up to eight keys, in lanes; lanes past the keys
/// hold no hash.
#[inline]
#[target_feature(enable = "avx2")]
fn hash8(keys: &[&[u8]], variant: HashVariant) -> __m256i {
    if let [first, ..] = keys {
        if keys.len() == 8 && keys.iter().all(|key| key.len() == first.len()) {
            return hash_same8(keys, first.len(), variant);
        }
    }
    let mut hashes = [0u32; 8];
    for (h, key) in hashes.iter_mut().zip(keys) {
        *h = crate::hash(key, SEED, variant);
    }
    // SAFETY: `hashes` is 32 bytes.
    unsafe { _mm256_loadu_si256(hashes.as_ptr().cast()) }
}

/// Eight keys' 16 bytes each (key j's in `c[j]`) as words: word t of
/// every key in vector t (key j's 16 bytes in lane half j / 4 of a[j % 4],
/// then a 4x4 transpose in each half). (This and the macros below are
/// macros, not functions: LLVM left such small functions out of line in
/// the side-by-side hash, and a `#[target_feature]` function cannot be
/// `#[inline(always)]`.)
macro_rules! transpose {
    ($c:expr) => {{
        let c: [__m128i; 8] = $c;
        let a = [
            _mm256_set_m128i(c[4], c[0]),
            _mm256_set_m128i(c[5], c[1]),
            _mm256_set_m128i(c[6], c[2]),
            _mm256_set_m128i(c[7], c[3]),
        ];
        let t0 = _mm256_unpacklo_epi32(a[0], a[1]);
        let t1 = _mm256_unpackhi_epi32(a[0], a[1]);
        let t2 = _mm256_unpacklo_epi32(a[2], a[3]);
        let t3 = _mm256_unpackhi_epi32(a[2], a[3]);
        [
            _mm256_unpacklo_epi64(t0, t2),
            _mm256_unpackhi_epi64(t0, t2),
            _mm256_unpacklo_epi64(t1, t3),
            _mm256_unpackhi_epi64(t1, t3),
        ]
    }};
}

/// Words `at / 4..at / 4 + 4` of eight keys, as [`transpose`] gives them.
macro_rules! chunk_words {
    ($keys:expr, $at:expr) => {{
        let (keys, at): (&[&[u8]], usize) = ($keys, $at);
        transpose!([
            load16(keys[0], at),
            load16(keys[1], at),
            load16(keys[2], at),
            load16(keys[3], at),
            load16(keys[4], at),
            load16(keys[5], at),
            load16(keys[6], at),
            load16(keys[7], at),
        ])
    }};
}

/// Bytes `at..len` of eight keys of `len >= 8` bytes (`len - at < 16`),
/// zero above, as [`transpose`] gives them: the whole words, then the
/// tail's bytes as LevelDB adds them unsigned (zero-padded, little-endian).
/// Each key's bytes come from one 16-byte load ending at its end (or, for
/// keys under 16 bytes, its first and last eight), moved into place by
/// one byte shuffle: no scalar work per key, and no store to the stack
/// read back as a vector.
macro_rules! rest_words {
    ($keys:expr, $at:expr, $len:expr) => {{
        let (keys, at, len): (&[&[u8]], usize, usize) = ($keys, $at, $len);
        let r = (len - at) as i8;
        let index = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        // Byte i of the rest, for i < r: byte 16 - r + i of the last 16
        // bytes; of a shorter key (at == 0, r == len), byte i of its first
        // eight for i < 8, else byte 16 - len + i of first and last eight.
        let shift = match len >= 16 {
            true => _mm_set1_epi8(16 - r),
            false => _mm_and_si128(
                _mm_cmpgt_epi8(index, _mm_set1_epi8(7)),
                _mm_set1_epi8(16 - r),
            ),
        };
        // Bytes from r on: 0x80, which the shuffle makes zero.
        let past = _mm_andnot_si128(_mm_cmpgt_epi8(_mm_set1_epi8(r), index), _mm_set1_epi8(-128));
        let mask = _mm_or_si128(_mm_add_epi8(index, shift), past);
        let piece = |key: &[u8]| match len >= 16 {
            true => load16(key, len - 16),
            false => first_last8(key),
        };
        transpose!([
            _mm_shuffle_epi8(piece(keys[0]), mask),
            _mm_shuffle_epi8(piece(keys[1]), mask),
            _mm_shuffle_epi8(piece(keys[2]), mask),
            _mm_shuffle_epi8(piece(keys[3]), mask),
            _mm_shuffle_epi8(piece(keys[4]), mask),
            _mm_shuffle_epi8(piece(keys[5]), mask),
            _mm_shuffle_epi8(piece(keys[6]), mask),
            _mm_shuffle_epi8(piece(keys[7]), mask),
        ])
    }};
}

/// The hash's rounds over the `r` bytes [`rest_words`] gave (`0 < r <
/// 16`), then its tail: the end of the hash of keys of `len >= 8` bytes.
macro_rules! hash_rest {
    ($h:expr, $words:expr, $r:expr, $variant:expr) => {{
        let (mut h, w, r): (__m256i, [__m256i; 4], usize) = ($h, $words, $r);
        for &word in &w[..r / 4] {
            h = round(h, word);
        }
        if r % 4 == 0 {
            h
        } else {
            let tail = match r / 4 {
                0 => w[0],
                1 => w[1],
                2 => w[2],
                _ => w[3],
            };
            let tail = match $variant {
                HashVariant::Unsigned => tail,
                // Each byte >= 0x80 sign-extended, as `hash::tail`.
                HashVariant::Signed => _mm256_sub_epi32(
                    tail,
                    _mm256_slli_epi32::<1>(_mm256_and_si256(tail, _mm256_set1_epi32(0x0080_8080))),
                ),
            };
            let h = _mm256_mullo_epi32(_mm256_add_epi32(h, tail), _mm256_set1_epi32(M));
            _mm256_xor_si256(h, _mm256_srli_epi32::<24>(h))
        }
    }};
}

/// Word `at / 4` of eight keys, through the array `words`.
macro_rules! words_at {
    ($keys:expr, $at:expr, $words:expr) => {{
        let (keys, at, words): (&[&[u8]], usize, &mut [u32; 8]) = ($keys, $at, $words);
        for (word, key) in words.iter_mut().zip(keys) {
            *word = u32::from_le_bytes([key[at], key[at + 1], key[at + 2], key[at + 3]]);
        }
        load8(words)
    }};
}

/// The hash's last step for eight keys with a tail of `len % 4` bytes,
/// their tails through the array `words`: `h = (h + tail) * m`, then
/// `h ^= h >> 24`.
macro_rules! finish_tails {
    ($h:expr, $keys:expr, $variant:expr, $words:expr) => {{
        let (keys, words): (&[&[u8]], &mut [u32; 8]) = ($keys, $words);
        for (word, key) in words.iter_mut().zip(keys) {
            *word = crate::hash::tail(key, $variant);
        }
        let h = _mm256_mullo_epi32(_mm256_add_epi32($h, load8(words)), _mm256_set1_epi32(M));
        _mm256_xor_si256(h, _mm256_srli_epi32::<24>(h))
    }};
}

/// LevelDB's `Hash` of eight keys of `len` bytes each.
#[inline]
#[target_feature(enable = "avx2")]
fn hash_same8(keys: &[&[u8]], len: usize, variant: HashVariant) -> __m256i {
    let mut h = _mm256_set1_epi32((SEED ^ (len as u32).wrapping_mul(M as u32)) as i32);
    let mut at = 0;
    while at + 16 <= len {
        for word in chunk_words!(keys, at) {
            h = round(h, word);
        }
        at += 16;
    }
    if at == len {
        return h;
    }
    if len >= 8 {
        return hash_rest!(h, rest_words!(keys, at, len), len - at, variant);
    }
    // Keys under 8 bytes: a word, then the tail, key by key.
    let mut words = [0u32; 8];
    while at + 4 <= len {
        h = round(h, words_at!(keys, at, &mut words));
        at += 4;
    }
    if at == len {
        return h;
    }
    finish_tails!(h, keys, variant, &mut words)
}

/// [`hash_same8`] of two groups of eight keys of `len` bytes each, their
/// chains of multiplies side by side: a chain's latency, not its work, is
/// the cost of long keys.
#[inline]
#[target_feature(enable = "avx2")]
fn hash_same8x2(a: &[&[u8]], b: &[&[u8]], len: usize, variant: HashVariant) -> [__m256i; 2] {
    let mut h = _mm256_set1_epi32((SEED ^ (len as u32).wrapping_mul(M as u32)) as i32);
    let mut i = h;
    let mut at = 0;
    while at + 16 <= len {
        for (x, y) in chunk_words!(a, at).into_iter().zip(chunk_words!(b, at)) {
            h = round(h, x);
            i = round(i, y);
        }
        at += 16;
    }
    if at == len {
        return [h, i];
    }
    if len >= 8 {
        return [
            hash_rest!(h, rest_words!(a, at, len), len - at, variant),
            hash_rest!(i, rest_words!(b, at, len), len - at, variant),
        ];
    }
    let (mut words, mut more) = ([0u32; 8], [0u32; 8]);
    while at + 4 <= len {
        h = round(h, words_at!(a, at, &mut words));
        i = round(i, words_at!(b, at, &mut more));
        at += 4;
    }
    if at == len {
        return [h, i];
    }
    [
        finish_tails!(h, a, variant, &mut words),
        finish_tails!(i, b, variant, &mut more),
    ]
}

/// One round of LevelDB's `Hash` in eight lanes: `h = (h + w) * m`,
/// then `h ^= h >> 16`.
#[inline]
#[target_feature(enable = "avx2")]
fn round(h: __m256i, w: __m256i) -> __m256i {
    let h = _mm256_mullo_epi32(_mm256_add_epi32(h, w), _mm256_set1_epi32(M));
    _mm256_xor_si256(h, _mm256_srli_epi32::<16>(h))
}

/// Bytes `at..at + 16` of `key`.
#[inline]
#[target_feature(enable = "avx2")]
fn load16(key: &[u8], at: usize) -> __m128i {
    let bytes: &[u8; 16] = key[at..at + 16].try_into().expect("16 bytes");
    // SAFETY: `bytes` is 16 bytes.
    unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
}

/// Up to eight words as a vector, lanes past them zero: one load, masked
/// for fewer than eight (a copy to the stack and a load of it waits for
/// the copy's stores).
#[inline]
#[target_feature(enable = "avx2")]
fn load_up_to8(words: &[u32]) -> __m256i {
    if let Ok(words) = <&[u32; 8]>::try_from(words) {
        return load8(words);
    }
    let n = words.len().min(8) as i32;
    let mask = _mm256_cmpgt_epi32(
        _mm256_set1_epi32(n),
        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
    );
    // SAFETY: the mask reads lanes below `words.len()` only, and a masked
    // load touches no memory in the lanes it leaves out.
    unsafe { _mm256_maskload_epi32(words.as_ptr().cast(), mask) }
}

/// The first and last eight bytes of `key` (at least 8 bytes long).
#[inline]
#[target_feature(enable = "avx2")]
fn first_last8(key: &[u8]) -> __m128i {
    let first: [u8; 8] = key[..8].try_into().expect("8 bytes");
    let last: [u8; 8] = key[key.len() - 8..].try_into().expect("8 bytes");
    _mm_set_epi64x(i64::from_le_bytes(last), i64::from_le_bytes(first))
}

/// Eight words as a vector.
#[inline]
#[target_feature(enable = "avx2")]
fn load8(words: &[u32; 8]) -> __m256i {
    // SAFETY: `words` is 32 bytes.
    unsafe { _mm256_loadu_si256(words.as_ptr().cast()) }
}
