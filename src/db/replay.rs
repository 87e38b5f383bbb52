//! The version edits replayed in order, as `VersionSet::Recover` replays
//! them: atomic groups, column families, each level's live tables.

use std::collections::{BTreeMap, HashMap};

use super::edit::Edit;
use super::{
    key_order, BlobFile, EditProblem, Engine, KeyOrder, LiveTable, Manifest, ManifestError,
    PebbleBlobFile,
};

/// The version being built as edits are applied.
#[derive(Default)]
pub(super) struct Replay {
    pub(super) comparators: BTreeMap<u32, String>,
    pub(super) families: BTreeMap<u32, String>,
    /// Each family's live tables, by file number: a dropped family goes
    /// at once, whatever it holds.
    pub(super) live: HashMap<u32, HashMap<u64, LiveTable>>,
    /// Each family's blob files, by number, as added and since collected.
    pub(super) blobs: HashMap<u32, BTreeMap<u64, BlobFile>>,
    pub(super) log_numbers: BTreeMap<u32, u64>,
    pub(super) prev_log_number: u64,
    pub(super) group: Vec<Edit>,
    pub(super) edits: usize,
    /// Whether an edit gave the log number, the next file number and the
    /// last sequence number, without which neither engine opens the
    /// database.
    pub(super) seen: [bool; 3],
    pub(super) rocksdb: bool,
    /// Whether an edit holds a tag or field only Pebble writes.
    pub(super) pebble: bool,
    /// The first tag Pebble refuses, and its edit's offset.
    pub(super) not_pebble: Option<(u64, u32)>,
    /// Pebble's backing tables: file number, size.
    pub(super) backings: HashMap<u64, u64>,
    /// Pebble's blob files by id.
    pub(super) pebble_blobs: BTreeMap<u64, PebbleBlobFile>,
    /// The first edit (its offset) adding a table below LevelDB's levels.
    pub(super) deep: Option<(u64, u32)>,
}

impl Replay {
    pub(super) fn apply(&mut self, edit: Edit, offset: u64) -> Result<(), EditProblem> {
        self.rocksdb |= edit.rocksdb;
        self.pebble |= edit.pebble;
        if let Some(tag) = edit.not_pebble {
            self.not_pebble.get_or_insert((offset, tag));
        }
        if let Some(level) = edit.added.iter().map(|t| t.level).find(|&l| l >= 7) {
            self.deep.get_or_insert((offset, level));
        }
        for (seen, given) in self.seen.iter_mut().zip(edit.given) {
            *seen |= given;
        }
        match edit.remaining_in_group {
            // An atomic group takes effect when its last edit is read; one
            // the log ends inside never does (RocksDB's `AtomicGroupReadBuffer`).
            Some(remaining) => {
                self.group.push(edit);
                if remaining == 0 {
                    for edit in std::mem::take(&mut self.group) {
                        self.apply_one(edit)?;
                    }
                }
            }
            // An edit of no group while a group is open: RocksDB's error.
            None if !self.group.is_empty() => return Err(EditProblem::OutsideAtomicGroup),
            None => self.apply_one(edit)?,
        }
        Ok(())
    }

    pub(super) fn apply_one(&mut self, edit: Edit) -> Result<(), EditProblem> {
        self.edits += 1;
        let family = edit.column_family;
        if let Some(number) = edit.log_number {
            self.log_numbers.insert(family, number);
        }
        if let Some(number) = edit.prev_log_number {
            self.prev_log_number = number;
        }
        if let Some(name) = edit.comparator {
            self.comparators.entry(family).or_insert(name);
        }
        if let Some(name) = edit.add_family {
            self.families.insert(family, name);
        } else if edit.drop_family {
            self.families.remove(&family);
            self.live.remove(&family);
            self.blobs.remove(&family);
            self.log_numbers.remove(&family);
            return Ok(());
        }
        // Pebble's backings: created before the edit's tables name them,
        // removed once none does (`BulkVersionEdit.Accumulate`).
        for (number, size) in edit.backings_created {
            self.backings.insert(number, size);
        }
        for number in edit.backings_removed {
            self.backings.remove(&number);
        }
        for file in edit.pebble_blobs_added {
            self.pebble_blobs.insert(file.id, file);
        }
        for (id, number) in edit.pebble_blobs_removed {
            if self
                .pebble_blobs
                .get(&id)
                .is_some_and(|b| b.number == number)
            {
                self.pebble_blobs.remove(&id);
            }
        }
        let live = self.live.entry(family).or_default();
        for (level, number) in edit.deleted {
            if live.get(&number).is_some_and(|t| t.level == level) {
                live.remove(&number);
            }
        }
        for mut table in edit.added {
            table.column_family = family;
            live.insert(table.number, table);
        }
        // `VersionBuilder::ApplyBlobFileAddition` and `...Garbage`.
        let blobs = self.blobs.entry(family).or_default();
        for (number, addition, counts) in edit.blobs {
            match (addition, blobs.get_mut(&number)) {
                (true, Some(_)) => return Err(EditProblem::BlobFileAddedTwice { number }),
                (true, None) => {
                    let blob = BlobFile {
                        column_family: family,
                        number,
                        total: counts,
                        garbage: (0, 0),
                    };
                    blobs.insert(number, blob);
                }
                (false, None) => return Err(EditProblem::BlobFileUnknown { number }),
                (false, Some(blob)) => {
                    let count = blob.garbage.0.checked_add(counts.0);
                    let bytes = blob.garbage.1.checked_add(counts.1);
                    match (count, bytes) {
                        (Some(c), Some(b)) if c <= blob.total.0 && b <= blob.total.1 => {
                            blob.garbage = (c, b);
                        }
                        _ => return Err(EditProblem::BlobGarbageOverflow { number }),
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn finish(mut self) -> Result<Manifest, ManifestError> {
        for (seen, field) in
            self.seen
                .iter()
                .zip(["log number", "next file number", "last sequence number"])
        {
            if !*seen {
                return Err(ManifestError::Missing { field });
            }
        }
        let engine = match (self.pebble, self.rocksdb) {
            (true, _) => Engine::Pebble,
            (false, true) => Engine::RocksDb,
            (false, false) => Engine::LevelDb,
        };
        // Pebble's decoder refuses every tag it does not know.
        if let (Engine::Pebble, Some((offset, tag))) = (engine, self.not_pebble) {
            return Err(ManifestError::Edit {
                offset,
                what: EditProblem::UnknownTag { tag },
            });
        }
        // LevelDB and Pebble have 7 levels (`config::kNumLevels`,
        // `manifest.NumLevels`); RocksDB as many as its options say.
        if engine != Engine::RocksDb {
            if let Some((offset, level)) = self.deep {
                return Err(ManifestError::Edit {
                    offset,
                    what: EditProblem::LevelOutOfRange { level, limit: 7 },
                });
            }
        }
        self.families
            .entry(0)
            .or_insert_with(|| "default".to_string());
        let mut tables = Vec::new();
        for (&family, live) in &mut self.live {
            let order = key_order(self.comparators.get(&family).map(String::as_str))
                .unwrap_or(KeyOrder::Bytewise);
            // RocksDB orders level 0 by epoch only where every table of
            // the family has one (`PromoteEpochNumberRequirementIfNeeded`).
            let epochs = live.values().all(|t| t.epoch_number.is_some_and(|e| e > 0));
            let mut family_tables: Vec<LiveTable> = live.drain().map(|(_, t)| t).collect();

            if !epochs {
                family_tables.iter_mut().for_each(|t| t.epoch_number = None);
            }
            family_tables.sort_by(|a, b| {
                a.level.cmp(&b.level).then_with(|| match a.level {
                    0 => a.newest_first(b),
                    _ => order
                        .compare(a.smallest_user_key(), b.smallest_user_key())
                        .then(a.number.cmp(&b.number)),
                })
            });
            // A virtual table's file is its backing's, at the size the
            // backing's creation recorded.
            for table in &mut family_tables {
                let number = table.number;
                if let Some(backing) = table.pebble.as_mut().and_then(|p| p.backing.as_mut()) {
                    let size = self.backings.get(&backing.number);
                    backing.size = *size.ok_or(ManifestError::NoBacking {
                        table: number,
                        backing: backing.number,
                    })?;
                }
            }
            tables.extend(family_tables);
        }
        tables.sort_by_key(|t| t.column_family);
        let blob_files = live_blob_files(&tables, self.blobs);
        Ok(Manifest {
            comparators: self.comparators,
            column_families: self.families,
            tables,
            blob_files,
            log_numbers: self.log_numbers,
            prev_log_number: self.prev_log_number,
            edits: self.edits,
            truncated_tail: false,
            engine,
            not_pebble: self.not_pebble,
            deep: self.deep,
            pebble_blob_files: self.pebble_blobs.into_values().collect(),
            pebble_get: super::PebbleGet::default(),
        })
    }
}

/// The blob files a version holds (`VersionBuilder::SaveBlobFilesTo`):
/// from the oldest one a live table links to (the oldest its blob indexes
/// name) on, less those no table links to whose blobs are all garbage.
pub(super) fn live_blob_files(
    tables: &[LiveTable],
    blobs: HashMap<u32, BTreeMap<u64, BlobFile>>,
) -> Vec<BlobFile> {
    let mut out = Vec::new();
    let mut families: Vec<_> = blobs.into_iter().collect();
    families.sort_by_key(|(family, _)| *family);
    for (family, files) in families {
        let linked: std::collections::BTreeSet<u64> = tables
            .iter()
            .filter(|t| t.column_family == family && files.contains_key(&t.oldest_blob_file))
            .map(|t| t.oldest_blob_file)
            .collect();
        let Some(&oldest) = linked.first() else {
            continue;
        };
        out.extend(files.into_values().filter(|b| {
            b.number >= oldest && (linked.contains(&b.number) || b.garbage.0 < b.total.0)
        }));
    }
    out
}
