//! LevelDB's `Hash` in lanes, for groups of keys of one length: their
//! words loaded 16 bytes at a time and transposed, a word of every key a
//! vector, the chains of multiplies of `G` groups interleaved (each is a
//! chain of dependent multiplies; two fill the gaps of one).

use super::Lanes;
use crate::hash::{M, SEED};
use crate::HashVariant;

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
