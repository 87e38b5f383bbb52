//! A MANIFEST's version edits decoded, tag by tag (LevelDB's
//! db/version_edit.cc, RocksDB's db/version_edit.cc, Pebble's
//! internal/manifest/version_edit.go): the tables added and removed,
//! column families, log and sequence numbers, blob files, Pebble's backing
//! tables.

use super::{Backing, EditProblem, LiveTable, PebbleBlobFile, PebbleTable, PointKeys, MAX_LEVELS};
use crate::format::{varint32, varint64};

/// One version edit: the parts that change the live tables.
#[derive(Default)]
pub(super) struct Edit {
    pub(super) comparator: Option<String>,
    pub(super) column_family: u32,
    pub(super) add_family: Option<String>,
    pub(super) drop_family: bool,
    pub(super) deleted: Vec<(u32, u64)>,
    pub(super) added: Vec<LiveTable>,
    /// Blob file records: the file's number, whether it is an addition
    /// (else garbage), and the blobs' count and bytes.
    pub(super) blobs: Vec<(u64, bool, (u64, u64))>,
    /// The column family's log number: its writes in older logs are in
    /// its tables.
    pub(super) log_number: Option<u64>,
    /// LevelDB's previous log number, a log still replayed.
    pub(super) prev_log_number: Option<u64>,
    /// RocksDB's atomic groups: the edits still to come in this one's group.
    pub(super) remaining_in_group: Option<u32>,
    /// Whether it gives the log number, next file number, last sequence.
    pub(super) given: [bool; 3],
    /// Whether it holds a tag only RocksDB (or Pebble) writes.
    pub(super) rocksdb: bool,
    /// Whether it holds a tag or a new-file field only Pebble writes.
    pub(super) pebble: bool,
    /// The first tag (or new-file field) it holds that Pebble's decoder
    /// refuses: a MANIFEST holding one is not Pebble's.
    pub(super) not_pebble: Option<u32>,
    /// Pebble's backing tables created (file number, size) and removed.
    pub(super) backings_created: Vec<(u64, u64)>,
    pub(super) backings_removed: Vec<u64>,
    /// Pebble's blob files added, and removed (file id, file number).
    pub(super) pebble_blobs_added: Vec<PebbleBlobFile>,
    pub(super) pebble_blobs_removed: Vec<(u64, u64)>,
}

/// The bytes of an edit, read field by field.
pub(super) struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    pub(super) fn v32(&mut self, field: &'static str) -> Result<u32, EditProblem> {
        let (v, rest) = varint32(self.0).ok_or(EditProblem::Truncated { field })?;
        self.0 = rest;
        Ok(v)
    }
    pub(super) fn v64(&mut self, field: &'static str) -> Result<u64, EditProblem> {
        let (v, rest) = varint64(self.0).ok_or(EditProblem::Truncated { field })?;
        self.0 = rest;
        Ok(v)
    }
    pub(super) fn bytes(&mut self, field: &'static str) -> Result<&'a [u8], EditProblem> {
        let len = self.v32(field)? as usize;
        if len > self.0.len() {
            return Err(EditProblem::Truncated { field });
        }
        let (bytes, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(bytes)
    }
    pub(super) fn level(&mut self) -> Result<u32, EditProblem> {
        let level = self.v32("level")?;
        match level < MAX_LEVELS {
            true => Ok(level),
            false => Err(EditProblem::LevelOutOfRange {
                level,
                limit: MAX_LEVELS,
            }),
        }
    }
    pub(super) fn key(&mut self, field: &'static str) -> Result<Vec<u8>, EditProblem> {
        let key = self.bytes(field)?;
        match key.len() >= 8 {
            true => Ok(key.to_vec()),
            false => Err(EditProblem::ShortKey { len: key.len() }),
        }
    }
    /// RocksDB's custom fields (of a new file, a blob file): tag and
    /// length-prefixed value pairs up to the terminating tag `end` (1 for a
    /// new file, 0 for a blob file's records); `each` takes the ones it
    /// knows and says whether it did. `unframed` reads the value of a tag
    /// Pebble writes without a length (its new files' fields 66 and 69)
    /// and gives it whole.
    pub(super) fn custom(
        &mut self,
        field: &'static str,
        end: u32,
        mut unframed: impl FnMut(u32, &mut Self) -> Result<bool, EditProblem>,
        mut each: impl FnMut(u32, &[u8]) -> Result<bool, EditProblem>,
    ) -> Result<(), EditProblem> {
        loop {
            let tag = self.v32(field)?;
            if tag == end {
                return Ok(());
            }
            if unframed(tag, self)? {
                continue;
            }
            let value = self.bytes(field)?;
            if !each(tag, value)? && tag & (1 << 6) != 0 {
                return Err(EditProblem::UnknownRequiredField { tag });
            }
        }
    }
}

/// RocksDB's tags past this bit are safe to ignore where unknown.
pub(super) const SAFE_TO_IGNORE: u32 = 1 << 13;

impl Edit {
    /// LevelDB's and RocksDB's `VersionEdit::DecodeFrom`.
    pub(super) fn decode(bytes: &[u8]) -> Result<Edit, EditProblem> {
        let mut edit = Edit::default();
        let mut input = Fields(bytes);
        while !input.0.is_empty() {
            let tag = input.v32("tag")?;
            edit.rocksdb |= tag >= 10;
            // Pebble's decoder reads LevelDB's tags, new files of RocksDB's
            // forms, and its own; any other is "unknown tag" to it.
            if !matches!(tag, 1..=7 | 9 | 100 | 102..=108) {
                edit.not_pebble.get_or_insert(tag);
            }
            edit.pebble |= matches!(tag, 104..=108);
            if let Some(given) = [2, 3, 4].iter().position(|&t| t == tag) {
                edit.given[given] = true;
            }
            match tag {
                1 => {
                    let name = input.bytes("comparator name")?;
                    edit.comparator = Some(String::from_utf8_lossy(name).into_owned());
                }
                2 => edit.log_number = Some(input.v64("log number")?),
                9 => edit.prev_log_number = Some(input.v64("previous log number")?),
                3 | 4 | 10 => {
                    input.v64("file or sequence number")?;
                }
                5 => {
                    input.level()?;
                    input.key("compaction cursor")?;
                }
                6 => {
                    let level = input.level()?;
                    edit.deleted.push((level, input.v64("deleted file")?));
                }
                7 | 100 | 102 | 103 | 104 => {
                    let table = new_file(tag, &mut input, &mut edit)?;
                    edit.added.push(table);
                }
                // Pebble's backing tables: one created (its file number and
                // size), for the virtual tables of the same edit on; one
                // removed, no virtual table left on it.
                105 => {
                    let number = input.v64("created backing table")?;
                    let size = input.v64("backing table size")?;
                    edit.backings_created.push((number, size));
                }
                106 => edit
                    .backings_removed
                    .push(input.v64("removed backing table")?),
                // Pebble's blob files (v2.1): an id, the file's number, its
                // size, its values' size and creation time; one removed by
                // id and number.
                107 => {
                    let file = PebbleBlobFile {
                        id: input.v64("blob file id")?,
                        number: input.v64("blob file number")?,
                        size: input.v64("blob file size")?,
                        value_size: input.v64("blob file value size")?,
                    };
                    input.v64("blob file creation time")?;
                    edit.pebble_blobs_added.push(file);
                }
                108 => {
                    let id = input.v64("deleted blob file id")?;
                    let number = input.v64("deleted blob file number")?;
                    edit.pebble_blobs_removed.push((id, number));
                }
                200 => edit.column_family = input.v32("set column family id")?,
                201 => {
                    let name = input.bytes("column family add")?;
                    edit.add_family = Some(String::from_utf8_lossy(name).into_owned());
                }
                202 => edit.drop_family = true,
                203 => {
                    input.v32("max column family")?;
                }
                300 => edit.remaining_in_group = Some(input.v32("remaining entries")?),
                // Blob file addition, and garbage (and their deprecated
                // forms past the ignore bit): the file's number, a count of
                // blobs and their bytes, for an addition its checksum's
                // method and value, then custom fields to tag 0
                // (`BlobFileAddition::DecodeFrom`).
                400 | 401 | 8194 | 8195 => {
                    let number = input.v64("blob file number")?;
                    let counts = (input.v64("blob count")?, input.v64("blob bytes")?);
                    let addition = tag == 400 || tag == 8194;
                    if addition {
                        input.bytes("blob file checksum method")?;
                        input.bytes("blob file checksum value")?;
                    }
                    input.custom(
                        "blob file custom field",
                        0,
                        |_, _| Ok(false),
                        |_, _| Ok(false),
                    )?;
                    edit.blobs.push((number, addition, counts));
                }
                // WAL addition: its number and tagged fields to tag 1.
                8196 => {
                    input.v64("WAL log number")?;
                    loop {
                        match input.v32("WAL addition tag")? {
                            1 => break,
                            2 => {
                                input.v64("WAL file size")?;
                            }
                            tag => return Err(EditProblem::UnknownTag { tag }),
                        }
                    }
                }
                8197 => {
                    input.v64("WAL log number")?;
                }
                tag if tag & SAFE_TO_IGNORE != 0 => {
                    input.bytes("safely ignorable tag")?;
                }
                tag => return Err(EditProblem::UnknownTag { tag }),
            }
        }
        Ok(edit)
    }
}

/// A new-file entry: LevelDB's (tag 7), RocksDB's three later forms, and
/// Pebble's (104: range keys, their bounds beside the point keys').
pub(super) fn new_file(
    tag: u32,
    input: &mut Fields<'_>,
    edit: &mut Edit,
) -> Result<LiveTable, EditProblem> {
    let level = input.level()?;
    let number = input.v64("new-file number")?;
    let path_id = if tag == 102 {
        input.v32("new-file path id")?
    } else {
        0
    };
    let size = input.v64("new-file size")?;
    let (smallest, largest, point_keys) = match tag {
        104 => pebble_bounds(input)?,
        _ => (
            input.key("new-file smallest key")?,
            input.key("new-file largest key")?,
            PointKeys::Bounds,
        ),
    };
    let mut table = LiveTable {
        column_family: 0,
        level,
        number,
        size,
        smallest,
        largest,
        seqnos: (0, 0),
        epoch_number: None,
        path_id,
        oldest_blob_file: 0,
        timestamps_persisted: true,
        pebble: None,
    };
    let mut pebble_fields = PebbleTable {
        point_keys,
        ..PebbleTable::default()
    };
    if tag != 7 {
        table.seqnos = (input.v64("smallest seqno")?, input.v64("largest seqno")?);
    }
    if tag == 103 || tag == 104 {
        // Pebble's fields without a length: 66, the backing table's number
        // (a virtual table), and 69, blob references (a depth, a count, and
        // for each a blob file id and a value size).
        let mut pebble = false;
        let mut backing = None;
        let unframed = |tag: u32, input: &mut Fields<'_>| {
            match tag {
                66 => backing = Some(input.v64("virtual table's backing")?),
                69 => {
                    input.v64("blob reference depth")?;
                    let count = input.v64("blob references")?;
                    // Each reference is two varints of a byte at least:
                    // the count is checked against what is left.
                    if count > input.0.len() as u64 {
                        return Err(EditProblem::Truncated {
                            field: "blob references",
                        });
                    }
                    for _ in 0..count {
                        input.v64("blob reference file id")?;
                        input.v64("blob reference value size")?;
                    }
                }
                _ => return Ok(false),
            }
            pebble = true;
            Ok(true)
        };
        let mut prefix = Vec::new();
        let mut suffix = Vec::new();
        let mut not_pebble = None;
        input.custom("new-file4 custom field", 1, unframed, |tag, value| {
            match tag {
                // kPathId: one byte (Pebble refuses it).
                65 => {
                    not_pebble.get_or_insert(tag);
                    match value {
                        [id] => table.path_id = u32::from(*id),
                        _ => return Err(EditProblem::Truncated { field: "path id" }),
                    }
                }
                // Pebble's synthetic prefix and suffix (v2): what the keys of
                // a virtual table's backing file gain before the prefix and in
                // place of the suffix.
                67 => prefix = value.to_vec(),
                68 => suffix = value.to_vec(),
                // kEpochNumber: a varint64.
                13 => {
                    let (epoch, _) = varint64(value).ok_or(EditProblem::Truncated {
                        field: "epoch number",
                    })?;
                    table.epoch_number = Some(epoch);
                }
                // kUserDefinedTimestampsPersisted: one byte, 1 or not.
                16 => match value {
                    [persisted] => table.timestamps_persisted = *persisted == 1,
                    _ => {
                        return Err(EditProblem::Truncated {
                            field: "user-defined timestamps persisted",
                        })
                    }
                },
                // kOldestBlobFileNumber: a varint64.
                4 => {
                    let (number, _) = varint64(value).ok_or(EditProblem::Truncated {
                        field: "oldest blob file number",
                    })?;
                    table.oldest_blob_file = number;
                }
                // The others RocksDB knows (need-compaction, times,
                // checksums, temperature, timestamps, unique id, sizes);
                // Pebble writes 2 (needs compaction) and 6 (creation time).
                2..=17 => {}
                _ => return Ok(false),
            }
            Ok(true)
        })?;
        edit.pebble |= pebble || !prefix.is_empty() || !suffix.is_empty();
        // The backing's size is the one its creation recorded: the replay
        // gives it.
        pebble_fields.backing = backing.map(|number| Backing { number, size: 0 });
        if let Some(tag) = not_pebble {
            edit.not_pebble.get_or_insert(tag);
        }
        pebble_fields.synthetic_prefix = prefix;
        pebble_fields.synthetic_suffix = suffix;
    }
    if pebble_fields != PebbleTable::default() {
        table.pebble = Some(Box::new(pebble_fields));
    }
    Ok(table)
}

/// The bounds of Pebble's new file 104: a marker byte (bit 0: the table
/// has point keys; bits 1 and 2: its smallest and largest bounds are its
/// point keys', else its range keys'), the point keys' bounds where it has
/// any, then the range keys' bounds. The table's bounds, and its point
/// keys'.
fn pebble_bounds(input: &mut Fields<'_>) -> Result<(Vec<u8>, Vec<u8>, PointKeys), EditProblem> {
    let (&marker, rest) = input.0.split_first().ok_or(EditProblem::Truncated {
        field: "new-file5 bounds marker",
    })?;
    input.0 = rest;
    let points = match marker & 1 {
        1 => Some((
            input.key("new-file5 smallest point key")?,
            input.key("new-file5 largest point key")?,
        )),
        // Pebble's check: no point keys, no point bound.
        _ if marker & 0b110 != 0 => return Err(EditProblem::BoundsMarker { marker }),
        _ => None,
    };
    let range_smallest = input.key("new-file5 smallest range key")?;
    let range_largest = input.key("new-file5 largest range key")?;
    Ok(match points {
        None => (range_smallest, range_largest, PointKeys::None),
        Some((smallest, largest)) => (
            match marker & 2 {
                0 => range_smallest,
                _ => smallest.clone(),
            },
            match marker & 4 {
                0 => range_largest,
                _ => largest.clone(),
            },
            PointKeys::Within { smallest, largest },
        ),
    })
}
