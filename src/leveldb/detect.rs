//! What a table does not say of itself: whether its keys are a database's
//! internal keys, and which hash variant its filter was written with (under
//! `leveldb.BuiltinBloomFilter`, LevelDB <= 1.17 wrote it signed and
//! goleveldb unsigned). Judged from the table's own keys, as far as they
//! read: a damaged index is salvaged from its restart points.

use std::collections::BTreeSet;
use std::fmt;

use super::{variants_for_name, verify_filter, KeyFormat, KeyStats, Table, TableFilter};
use super::{VariantFound, Verdict, VerifyOptions};
use crate::format::{BlockHandle, BlockIter, BlockKind};
use crate::{BloomFilterPolicy, Error, FilterBlockReader, HashVariant};

/// What [`detect`] judges a table's keys from.
#[derive(Clone, Copy, Debug)]
pub enum Evidence<'s> {
    /// A pass over the keys that read every block ([`Table::key_stats`]).
    Stats(&'s KeyStats),
    /// The table as LevelDB's lookups read it, damaged or not: the keys of
    /// the blocks that read, and the statistics of a pass that checked
    /// every block, where it passed.
    Reads(Option<&'s KeyStats>),
}

/// How [`detect`] found a filter's hash variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Basis {
    /// The caller gave it.
    Given,
    /// The policy's name has one variant.
    PolicyName,
    /// Either does: no key of the table hashes differently under the two.
    NoKeyTellsApart,
    /// The filter rebuilt from the table's keys under this one.
    Rebuilt,
    /// The filter does not rebuild; the table's keys miss it the fewest
    /// times under this one (a filter has no false negatives).
    FewestMisses,
    /// Nothing tells: the filter does not rebuild and the keys miss it as
    /// often under either. The reader decides (LevelDB's signed, goleveldb's
    /// unsigned); this is the name's first variant.
    Guess,
    /// The policy is none this crate knows.
    UnknownPolicy,
}

impl fmt::Display for Basis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Basis::Given => "as given",
            Basis::PolicyName => "from the policy name",
            Basis::NoKeyTellsApart => "no key tells them apart",
            Basis::Rebuilt => "decided from the table's keys",
            Basis::FewestMisses => "the table's keys miss the filter the fewest times under it",
            Basis::Guess => "a guess: the filter does not rebuild",
            Basis::UnknownPolicy => "unknown policy",
        })
    }
}

/// A table's filter block, and the variant to read it with.
#[derive(Clone, Debug)]
pub struct FilterFound<'t, 'a> {
    /// The filter block and its policy's name.
    pub filter: &'t TableFilter<'a>,
    /// The variant to read it with; `None` for a policy this crate does
    /// not know.
    pub variant: Option<HashVariant>,
    /// What the table says of the variant: one, or either (`None` for an
    /// unknown policy).
    pub found: Option<VariantFound>,
    /// How it was found.
    pub basis: Basis,
}

/// The table's key format and its filter, as [`detect`] finds them.
#[derive(Clone, Debug)]
pub struct Detected<'t, 'a> {
    /// Given, or from the keys' form.
    pub key_format: KeyFormat,
    /// `None` for a table without a filter block.
    pub filter: Option<FilterFound<'t, 'a>>,
}

/// The table's key format, from `given.key_format` or the keys' form, and
/// its filter with the hash variant to read it with: from `given.variant`,
/// else the policy name. Only under `leveldb.BuiltinBloomFilter`, and only
/// when some key hashes differently under the two variants, is the filter
/// rebuilt to tell which; where it does not rebuild, the variant is the one
/// under which the keys miss it the fewest times.
///
/// From [`Evidence::Reads`] (a table read as LevelDB's lookups read it),
/// the key format is internal where the data keys or the index's look
/// internal (a damaged key can break the data keys' order), and the variant
/// is judged from the keys of the blocks that read.
pub fn detect<'t, 'a>(
    table: &'t Table<'a>,
    evidence: Evidence<'_>,
    given: VerifyOptions,
) -> Result<Detected<'t, 'a>, Error> {
    let (looks_internal, stats) = match evidence {
        Evidence::Stats(stats) => (stats.looks_internal, Some(stats)),
        Evidence::Reads(checked) => {
            // A pass that checked every block finds what an unchecked one
            // would: walked again only where it failed.
            let data = checked.map_or_else(
                || table.key_stats().is_ok_and(|stats| stats.looks_internal),
                |stats| stats.looks_internal,
            );
            (data || index_looks_internal(table), None)
        }
    };
    let key_format = given.key_format.unwrap_or(if looks_internal {
        KeyFormat::Internal
    } else {
        KeyFormat::User
    });
    let Some(filter) = table.filter_block() else {
        return Ok(Detected {
            key_format,
            filter: None,
        });
    };
    let found = |variant: Option<HashVariant>, found, basis| Detected {
        key_format,
        filter: Some(FilterFound {
            filter,
            variant,
            found,
            basis,
        }),
    };
    let Some(named) = variants_for_name(&filter.name) else {
        return Ok(found(None, None, Basis::UnknownPolicy));
    };
    let one = |v: HashVariant| match v {
        HashVariant::Unsigned => VariantFound::Unsigned,
        HashVariant::Signed => VariantFound::Signed,
    };
    let (variant, what, basis) = match (given.variant, named, stats) {
        (Some(v), _, _) => (v, one(v), Basis::Given),
        (None, &[v], _) => (v, one(v), Basis::PolicyName),
        (None, _, Some(stats)) if !stats.tells_variants_apart(key_format) => {
            (named[0], VariantFound::Either, Basis::NoKeyTellsApart)
        }
        (None, _, Some(stats)) => {
            let options = VerifyOptions {
                key_format: Some(key_format),
                ..VerifyOptions::default()
            };
            match verify_filter(table, stats, options)? {
                Verdict::Match {
                    variant: VariantFound::Signed,
                    ..
                } => (HashVariant::Signed, VariantFound::Signed, Basis::Rebuilt),
                Verdict::Match {
                    variant: VariantFound::Unsigned,
                    ..
                } => (
                    HashVariant::Unsigned,
                    VariantFound::Unsigned,
                    Basis::Rebuilt,
                ),
                _ => fewest_misses(table, filter, key_format, named[0]),
            }
        }
        (None, _, None) => fewest_misses(table, filter, key_format, named[0]),
    };
    Ok(found(Some(variant), Some(what), basis))
}

/// Whether the index's keys (read in order, up to any damage) look like a
/// database's: each at least 8 bytes, its tag's type 0 or 1 (LevelDB's
/// separators carry the largest sequence number and type 1).
fn index_looks_internal(table: &Table<'_>) -> bool {
    let mut any = false;
    for entry in table.index_entries() {
        let Ok(entry) = entry else { break };
        let key = &entry.key;
        if key.len() < 8 || key[key.len() - 8] > 1 {
            return false;
        }
        any = true;
    }
    any
}

/// The variant under which the keys of the data blocks that read miss
/// their block's filter the fewest times (under the variant that wrote it,
/// a key is missed only where the filter or the key is damaged; under the
/// other, every key whose hash differs is missed but by chance);
/// `fallback` where the counts tie.
fn fewest_misses(
    table: &Table<'_>,
    filter: &TableFilter<'_>,
    format: KeyFormat,
    fallback: HashVariant,
) -> (HashVariant, VariantFound, Basis) {
    let variants = [HashVariant::Unsigned, HashVariant::Signed];
    let readers = variants.map(|v| {
        FilterBlockReader::new(
            BloomFilterPolicy::new(10).with_hash(v),
            &filter.block.contents,
        )
    });
    let mut misses = [0usize; 2];
    for handle in table.salvaged_data_handles() {
        let Ok(block) = table.read_block(BlockKind::Data, handle) else {
            continue;
        };
        let mut entries = block.entries();
        while let Ok(Some((key, _))) = entries.next_entry() {
            let key = match format {
                KeyFormat::Internal if key.len() >= 8 => &key[..key.len() - 8],
                _ => key,
            };
            for (missed, reader) in misses.iter_mut().zip(&readers) {
                *missed += usize::from(!reader.key_may_match(handle.offset, key));
            }
        }
    }
    match misses[0].cmp(&misses[1]) {
        std::cmp::Ordering::Less => (
            HashVariant::Unsigned,
            VariantFound::Unsigned,
            Basis::FewestMisses,
        ),
        std::cmp::Ordering::Greater => (
            HashVariant::Signed,
            VariantFound::Signed,
            Basis::FewestMisses,
        ),
        std::cmp::Ordering::Equal => {
            let found = match fallback {
                HashVariant::Unsigned => VariantFound::Unsigned,
                HashVariant::Signed => VariantFound::Signed,
            };
            (fallback, found, Basis::Guess)
        }
    }
}

impl Table<'_> {
    /// The data blocks the index points to, past damage: the index walked
    /// in order, and where the walk meets damage, walked again from each
    /// restart point (each starts a whole key), last to first, each walk
    /// ending where an earlier one went on: then in offset order, each
    /// once. Linear in the index's size, whatever its restart array says.
    pub fn salvaged_data_handles(&self) -> Vec<BlockHandle> {
        let mut handles = Vec::new();
        for entry in self.index_entries() {
            match entry {
                Ok(entry) => handles.push(entry.handle),
                Err(_) => return salvaged(&self.index_block().contents, handles),
            }
        }
        handles
    }
}

/// [`Table::salvaged_data_handles`] past damage: `index` walked from each
/// restart point.
fn salvaged(index: &[u8], walked: Vec<BlockHandle>) -> Vec<BlockHandle> {
    let mut seen: BTreeSet<BlockHandle> = walked.into_iter().collect();
    let Some(count) = index.len().checked_sub(4).map(|at| &index[at..]) else {
        return seen.into_iter().collect();
    };
    let count = u32::from_le_bytes(count.try_into().unwrap_or_default()) as usize;
    let Some(entries_end) = count
        .checked_mul(4)
        .and_then(|array| index.len().checked_sub(4 + array))
    else {
        return seen.into_iter().collect();
    };
    // The entries, then a restart array of one restart at 0: from any
    // restart point on, a block of its own (one copy for every walk).
    let mut entries_alone = index[..entries_end].to_vec();
    entries_alone.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
    for i in (0..count).rev() {
        let at = entries_end + 4 * i;
        let restart = u32::from_le_bytes(index[at..at + 4].try_into().unwrap_or_default()) as usize;
        if restart >= entries_end {
            continue;
        }
        let mut entries = BlockIter::new(&entries_alone[restart..]);
        while let Ok(Some((_, value))) = entries.next_entry() {
            match BlockHandle::decode(value) {
                Some((handle, _)) if seen.insert(handle) => {}
                _ => break,
            }
        }
    }
    seen.into_iter().collect()
}
