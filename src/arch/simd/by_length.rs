//! Keys of mixed lengths hashed in lanes: each waits with others of its
//! length until they fill groups ([`hash_by_length`]), which are hashed as
//! keys of one length are; the hashes then go to a buffer or back into
//! the keys' order.

use super::{hash_same, Lanes};
use crate::arch::lengths::{groups_by_length, CLASSES};
use crate::HashVariant;

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
