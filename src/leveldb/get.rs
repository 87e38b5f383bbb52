//! What LevelDB's `Get` meets in a database's table (`Table::InternalGet`):
//! the index's block for the key, the filter, and the key's first entry.

use super::{entry_type, probe, KeyFormat, Probe, Table};
use crate::format::{EntryKind, KeyEntry, TableStep};
use crate::{BloomFilterPolicy, Error};

impl Table<'_> {
    /// LevelDB's `Table::InternalGet` of user key `key` at a database's
    /// table (internal keys), its filter read by `policy` (`None`: no
    /// filter this crate reads, so every key may match). LevelDB's `Get`
    /// stops at the key's first entry; a type past 1 is corruption to it
    /// (`ParseInternalKey`), given as [`EntryKind::Other`]. The entry's
    /// sequence number is given as 0: LevelDB's lookup does not read it.
    pub fn get_step(
        &self,
        policy: Option<&BloomFilterPolicy>,
        key: &[u8],
    ) -> Result<TableStep, Error> {
        Ok(match probe(self, policy, KeyFormat::Internal, key)? {
            Probe::PastLastKey => TableStep::PastLastKey,
            Probe::Block {
                may_match: false, ..
            } => TableStep::Absent,
            Probe::Block {
                may_match: true, ..
            } => {
                let entry = entry_type(self, KeyFormat::Internal, key)?;
                let entry = entry.map(|byte| KeyEntry {
                    kind: match byte {
                        0 | 1 => EntryKind::of(byte),
                        other => EntryKind::Other(other),
                    },
                    sequence: 0,
                });
                TableStep::Read(entry.into_iter().collect())
            }
        })
    }
}
