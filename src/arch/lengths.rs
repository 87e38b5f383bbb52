//! Keys of mixed lengths, for the kernels that hash a group of keys at once
//! only from keys of one length: whether keys look like one length (from a
//! sample, to decide cheaply), and groups of one length class as they come.

/// Keys whose lengths [`looks_one_length`] compares.
const SAMPLED: usize = 64;

/// Whether `keys` (at least one) look like keys of one length, from a sample
/// of [`SAMPLED`] spread over them: the AVX2 kernel's work. A key of another
/// length the sample misses is still hashed right, one key at a time.
pub(crate) fn looks_one_length(keys: &[&[u8]]) -> bool {
    let Some(first) = keys.first() else {
        return false;
    };
    keys.iter()
        .step_by(keys.len().div_ceil(SAMPLED))
        .all(|key| key.len() == first.len())
}

/// Length classes of keys of mixed lengths: 0 to 63 bytes, and longer
/// ([`groups_by_length`]).
pub(crate) const CLASSES: usize = 65;

/// Keys of mixed lengths in groups of `N` of one length class (0 to 63
/// bytes, and longer keys together): each key waits with others of its
/// class until they are `N`; at the end, each class's keys left, padded
/// with copies of their first. `emit(group, at, n, class)` takes each group
/// as it comes: its first `n` keys are those at indexes `at` of `keys`,
/// the others copies of its first; below the last class, every key is
/// `class` bytes long. (One pass, each key's slice copied once: ordering
/// the keys by length first, then reading them in that order, cost more.)
#[inline(always)]
pub(crate) fn groups_by_length<'k, const N: usize>(
    keys: &[&'k [u8]],
    mut emit: impl FnMut(&[&'k [u8]; N], &[usize; N], usize, usize),
) {
    let Some(&first) = keys.first() else { return };
    // `waiting[c]` holds keys of class `c` only: its first `count[c]`
    // entries are this round's, the others an earlier round's (or `first`
    // before any, never read: a group is emitted when it has `N` keys, or
    // at the end padded with its own first key).
    let mut waiting = [[first; N]; CLASSES];
    let mut at = [[0usize; N]; CLASSES];
    let mut count = [0usize; CLASSES];
    for (i, &key) in keys.iter().enumerate() {
        let c = key.len().min(CLASSES - 1);
        let n = count[c];
        waiting[c][n] = key;
        at[c][n] = i;
        if n + 1 == N {
            emit(&waiting[c], &at[c], N, c);
            count[c] = 0;
        } else {
            count[c] = n + 1;
        }
    }
    for (c, ((waiting, at), &n)) in waiting.iter_mut().zip(&at).zip(&count).enumerate() {
        if n > 0 {
            let first = waiting[0];
            waiting[n..].fill(first);
            emit(waiting, at, n, c);
        }
    }
}
