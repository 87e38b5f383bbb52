//! A key looked up as LevelDB's `Table::InternalGet` looks it up: the index
//! seek, the filter of the block it picks, the key's first entry there.

use super::keys::{compare_internal, KeyFormat};
use super::Table;
use crate::format::Corruption;
use crate::format::{seek_tag, user_key};
use crate::format::{BlockHandle, BlockKind};
use crate::{BloomFilterPolicy, Error, FilterBlockReader};

/// What LevelDB's table lookup decides for a key before it reads a data block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// The index has no entry >= the key: not in the table.
    PastLastKey,
    /// The index points to the data block at `offset`; `may_match` is the
    /// filter's answer (`true` when the table has no usable filter).
    Block {
        /// Offset of the data block.
        offset: u64,
        /// Whether LevelDB would read the block.
        may_match: bool,
    },
}

/// LevelDB's `Table::InternalGet` up to the data-block read: seeks the index
/// block as LevelDB does (binary search over its restart points, then entry by
/// entry) for the first separator >= the key (bytewise; for internal keys, the
/// lookup key with the largest sequence number), then asks the table's filter
/// block, read with `policy` (the Bloom policy that wrote it; `None` for a
/// table whose filter this crate cannot read: every key may match). An index
/// that the seek finds corrupt, or whose entry is not a block handle, is the
/// error LevelDB's lookup returns.
///
/// `key` is a user key in both formats: a database's tables filter user keys
/// (LevelDB's `InternalFilterPolicy`), and the probe asks the filter for the
/// user key whatever the format, so that the format and the policy cannot
/// disagree.
pub fn probe(
    table: &Table<'_>,
    policy: Option<&BloomFilterPolicy>,
    key_format: KeyFormat,
    key: &[u8],
) -> Result<Probe, Error> {
    let Some(handle) = index_seek(table, key_format, key)? else {
        return Ok(Probe::PastLastKey);
    };
    let filter = policy.zip(table.filter_block());
    let may_match = filter.is_none_or(|(policy, filter)| {
        FilterBlockReader::for_few_lookups(policy, &filter.block.contents)
            .key_may_match(handle.offset, key)
    });
    Ok(Probe::Block {
        offset: handle.offset,
        may_match,
    })
}

/// Whether the table holds an entry (a value or a deletion) of user key
/// `key` where LevelDB's `Table::InternalGet` looks: in the data block the
/// index picks, at the first entry not before the lookup key. A `Get` that
/// reads this table stops here when it does.
pub fn holds_key(table: &Table<'_>, key_format: KeyFormat, key: &[u8]) -> Result<bool, Error> {
    Ok(entry_type(table, key_format, key)?.is_some())
}

/// The type byte of the entry of user key `key` that LevelDB's
/// `Table::InternalGet` meets (see [`holds_key`]): 1 a value, 0 a deletion
/// (for a table of user keys, always 1); `None` where it meets none.
pub fn entry_type(
    table: &Table<'_>,
    key_format: KeyFormat,
    key: &[u8],
) -> Result<Option<u8>, Error> {
    let Some(handle) = index_seek(table, key_format, key)? else {
        return Ok(None);
    };
    let block = table.read_block(BlockKind::Data, handle)?;
    let mut entries = block.entries();
    let lookup = lookup_key(key_format, key);
    match key_format {
        KeyFormat::User => entries.seek(&lookup, <[u8]>::cmp),
        KeyFormat::Internal => entries.seek(&lookup, compare_internal),
    }
    if let Some(what) = entries.error() {
        return Err(Error::CorruptBlock {
            block: BlockKind::Data,
            offset: handle.offset,
            what,
        });
    }
    if !entries.valid() {
        return Ok(None);
    }
    let found = entries.key();
    Ok(match key_format {
        KeyFormat::User => (found == key).then_some(1),
        KeyFormat::Internal => {
            (found.len() >= 8 && user_key(found) == key).then(|| found[found.len() - 8])
        }
    })
}

/// The key a lookup of user key `key` seeks: for internal keys, with the
/// largest sequence number, so that it sorts before every entry of `key`.
fn lookup_key(key_format: KeyFormat, key: &[u8]) -> Vec<u8> {
    match key_format {
        KeyFormat::User => key.to_vec(),
        KeyFormat::Internal => [key, &seek_tag(1).to_le_bytes()[..]].concat(),
    }
}

/// The data block LevelDB's index seek picks for `key`; `None` past the
/// last key.
fn index_seek(
    table: &Table<'_>,
    key_format: KeyFormat,
    key: &[u8],
) -> Result<Option<BlockHandle>, Error> {
    let lookup = lookup_key(key_format, key);
    let index = match key_format {
        KeyFormat::User => {
            let mut index = table.index_seeker(false, <[u8]>::cmp);
            index.seek(&lookup, <[u8]>::cmp);
            index
        }
        KeyFormat::Internal => {
            let mut index = table.index_seeker(true, compare_internal);
            index.seek(&lookup, compare_internal);
            index
        }
    };
    let corrupt = |what| Error::CorruptBlock {
        block: BlockKind::Index,
        offset: table.index_handle().offset,
        what,
    };
    if !index.valid() {
        return match index.error() {
            Some(what) => Err(corrupt(what)),
            None => Ok(None),
        };
    }
    let (handle, _) = BlockHandle::decode(index.value()).ok_or(corrupt(Corruption::NotAHandle))?;
    Ok(Some(handle))
}
