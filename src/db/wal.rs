//! The write-ahead logs a database recovers into its memtables: LevelDB's
//! log format (`log.rs`) holding one `WriteBatch` a record (a sequence
//! number, a count, then tagged entries, RocksDB's with their column
//! families). [`Memtable`] replays them as recovery does, and answers for
//! a key what a `Get` meets there before any table: the key's entries,
//! newest first, and the range tombstones that cover it.

use std::collections::HashMap;
use std::fmt;

use crate::format::{varint32, EntryKind, KeyEntry, KeyOrder};

use super::log::{RecordProblem, Records};
use super::{Engine, Manifest};

/// What is wrong with a write-ahead log.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WalProblem {
    /// A log record that does not read (RocksDB's default point-in-time
    /// recovery stops there, keeping the writes before it; LevelDB's drops
    /// what it spoils and reads on).
    Record {
        /// The record's offset in the log.
        offset: u64,
        /// What is wrong with it.
        what: RecordProblem,
    },
    /// A record that is no `WriteBatch`: what does not read in it.
    Batch {
        /// The record's offset in the log.
        offset: u64,
        /// What does not read.
        what: &'static str,
    },
}

impl fmt::Display for WalProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WalProblem::Record { offset, what } => {
                write!(f, "log record at offset {offset}: {what}")
            }
            WalProblem::Batch { offset, what } => {
                write!(f, "write batch in the record at offset {offset}: {what}")
            }
        }
    }
}

/// One entry of a `WriteBatch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchEntry<'a> {
    /// The column family (0 in LevelDB's batches).
    pub column_family: u32,
    /// Its sequence number.
    pub sequence: u64,
    /// What it writes; `None` for a range deletion of keys `key` to `end`.
    pub kind: Option<EntryKind>,
    /// Its user key (a range deletion's first key).
    pub key: &'a [u8],
    /// A range deletion's end key (not deleted).
    pub end: &'a [u8],
}

/// A mark of a two-phase-commit transaction in a `WriteBatch`: the entries
/// between `BeginPrepare` and `EndPrepare` take effect at the `Commit` of
/// the same id, with its sequence numbers, and never after a `Rollback`
/// (RocksDB's write-committed transactions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker<'a> {
    /// The start of a prepared section.
    BeginPrepare,
    /// Its end, and the transaction's id.
    EndPrepare(&'a [u8]),
    /// The commit of the transaction of this id.
    Commit(&'a [u8]),
    /// Its rollback.
    Rollback(&'a [u8]),
}

/// What a `WriteBatch` holds, entry by entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchItem<'a> {
    /// An entry that writes a key.
    Entry(BatchEntry<'a>),
    /// A transaction's mark, at the sequence number the next entry takes.
    Marker(Marker<'a>, u64),
}

/// Reads a `WriteBatch` as RocksDB's `WriteBatchInternal::Iterate` does
/// (LevelDB's are the two first kinds, without column families), calling
/// `each` with every entry that writes a key and every transaction mark;
/// marks, log data and no-ops take no sequence number.
pub fn for_each_batch_entry<'a>(
    batch: &'a [u8],
    mut each: impl FnMut(BatchItem<'a>),
) -> Result<(), &'static str> {
    if batch.len() < 12 {
        return Err("shorter than its 12-byte header");
    }
    let mut sequence = u64::from_le_bytes(batch[..8].try_into().expect("8 bytes"));
    let mut rest = &batch[12..];
    while let Some((&tag, after)) = rest.split_first() {
        rest = after;
        // The column family variants carry the family's id first.
        let (kind, family) = match tag {
            0x4 | 0x5 | 0x6 | 0x8 | 0xE | 0x10 | 0x17 | 0x19 => {
                let (family, after) = varint32(rest).ok_or("a column family that does not read")?;
                rest = after;
                (column_family_form(tag), family)
            }
            other => (other, 0),
        };
        let entry = |kind, key, end| {
            BatchItem::Entry(BatchEntry {
                column_family: family,
                sequence,
                kind,
                key,
                end,
            })
        };
        let mark = |marker| BatchItem::Marker(marker, sequence);
        match kind {
            // A value, a merge operand, a blob index, an entity, a value
            // with a preferred sequence number: key and value.
            0x1 | 0x2 | 0x11 | 0x16 | 0x18 => {
                let key = slice(&mut rest)?;
                slice(&mut rest)?;
                each(entry(Some(EntryKind::of(kind)), key, &[]));
            }
            // Deletions: the key.
            0x0 | 0x7 => each(entry(Some(EntryKind::of(kind)), slice(&mut rest)?, &[])),
            0xF => {
                let (start, end) = (slice(&mut rest)?, slice(&mut rest)?);
                each(entry(None, start, end));
            }
            // Log data.
            0x3 => {
                slice(&mut rest)?;
                continue;
            }
            // The end, commit or rollback of a prepared transaction (its
            // id); a commit with a timestamp first.
            0xA => {
                each(mark(Marker::EndPrepare(slice(&mut rest)?)));
                continue;
            }
            0xB => {
                each(mark(Marker::Commit(slice(&mut rest)?)));
                continue;
            }
            0xC => {
                each(mark(Marker::Rollback(slice(&mut rest)?)));
                continue;
            }
            0x15 => {
                slice(&mut rest)?;
                each(mark(Marker::Commit(slice(&mut rest)?)));
                continue;
            }
            // The beginnings of prepared transactions; no-ops.
            0x9 | 0x12 | 0x13 => {
                each(mark(Marker::BeginPrepare));
                continue;
            }
            0xD => continue,
            _ => return Err("an unknown tag"),
        }
        sequence = sequence.wrapping_add(1);
    }
    Ok(())
}

/// Reads a Pebble batch (`batchrepr.Reader`, applied as
/// `memTable.apply` applies it): a sequence number, a count, then entries
/// of a kind byte, a key and, for the kinds that carry one, a value. Calls
/// `each` with the point entries and range deletions; every entry but log
/// data takes a sequence number (range keys too, which write no point key),
/// and they must be as many as the count says. Returns whether the batch
/// ingests tables (IngestSST, Excise): its keys are then in tables the
/// batch names by number, not in the batch.
pub fn for_each_pebble_batch_entry<'a>(
    batch: &'a [u8],
    mut each: impl FnMut(BatchEntry<'a>),
) -> Result<bool, &'static str> {
    if batch.len() < 12 {
        return Err("shorter than its 12-byte header");
    }
    let first = u64::from_le_bytes(batch[..8].try_into().expect("8 bytes"));
    let count = u32::from_le_bytes(batch[8..12].try_into().expect("4 bytes"));
    let mut sequence = first;
    let mut rest = &batch[12..];
    let mut ingests = false;
    while let Some((&kind, after)) = rest.split_first() {
        rest = after;
        // Pebble's kinds past DeleteSized are Excise (24) alone.
        if kind > 24 {
            return Err("an unknown kind");
        }
        let key = slice(&mut rest)?;
        // Set, Merge, RangeDelete, the range keys, DeleteSized, Excise.
        let value = match kind {
            1 | 2 | 15 | 19..=21 | 23 | 24 => slice(&mut rest)?,
            _ => &[],
        };
        let point = match kind {
            0 | 23 => Some(EntryKind::Deletion),
            1 | 18 => Some(EntryKind::Value),
            2 => Some(EntryKind::Merge),
            7 => Some(EntryKind::SingleDeletion),
            _ => None,
        };
        match kind {
            3 => continue,
            15 => each(BatchEntry {
                column_family: 0,
                sequence,
                kind: None,
                key,
                end: value,
            }),
            22 | 24 => ingests = true,
            _ => {
                if let Some(kind) = point {
                    each(BatchEntry {
                        column_family: 0,
                        sequence,
                        kind: Some(kind),
                        key,
                        end: &[],
                    });
                }
            }
        }
        sequence = sequence.wrapping_add(1);
    }
    if !ingests && sequence.wrapping_sub(first) != u64::from(count) {
        return Err("a count other than its entries'");
    }
    Ok(ingests)
}

/// The plain tag of a column family variant.
/// A batch's length-prefixed key or value, taken from the front of `rest`.
fn slice<'a>(rest: &mut &'a [u8]) -> Result<&'a [u8], &'static str> {
    let (len, after) = varint32(rest).ok_or("a length that does not read")?;
    let len = len as usize;
    if len > after.len() {
        return Err("a key or value past the end of the batch");
    }
    let (bytes, after) = after.split_at(len);
    *rest = after;
    Ok(bytes)
}

fn column_family_form(tag: u8) -> u8 {
    match tag {
        0x4 => 0x0,
        0x5 => 0x1,
        0x6 => 0x2,
        0x8 => 0x7,
        0xE => 0xF,
        0x10 => 0x11,
        0x17 => 0x16,
        _ => 0x18,
    }
}

/// The memtables recovery rebuilds from the live write-ahead logs: each
/// column family's entries by user key (without a timestamp), and its
/// range tombstones. Memory grows with the logs' bytes, no more.
#[derive(Clone, Debug, Default)]
pub struct Memtable {
    entries: HashMap<(u32, Vec<u8>), Vec<KeyEntry>>,
    tombstones: Vec<(u32, Vec<u8>, Vec<u8>, u64)>,
    orders: HashMap<u32, Option<KeyOrder>>,
    /// Families whose memtable holds what this crate cannot judge (a range
    /// deletion under a comparator it does not know): their Gets are
    /// unknown. `None` in it stands for every family (a log it cannot
    /// read: compressed; Pebble's ingested tables, which the log names).
    undecidable: std::collections::HashSet<Option<u32>>,
    /// The open prepared section's entries, and the prepared transactions
    /// by id, waiting for their commit.
    preparing: Option<Vec<Owned>>,
    prepared: HashMap<Vec<u8>, Vec<Owned>>,
    /// Pebble's last log replayed and its last batch's sequence number:
    /// the segments of one log (a WAL failover's) may repeat a batch.
    pebble_last: Option<(u64, u64)>,
}

/// A batch entry held until its transaction commits: its family, kind
/// (`None`: a range deletion), key and end key.
type Owned = (u32, Option<EntryKind>, Vec<u8>, Vec<u8>);

/// What a `Get` meets in the memtables (see [`Memtable::get`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemtableAnswer {
    /// The key's entries, newest first.
    pub entries: Vec<KeyEntry>,
    /// The largest sequence number of the range tombstones covering the
    /// key (0: none).
    pub covering: u64,
    /// Whether the memtable holds what this crate cannot judge for the key
    /// (a range deletion under an unknown comparator, a compressed log).
    pub undecidable: bool,
}

impl Memtable {
    /// Replays the log numbered `number` (its bytes `log`) as recovery
    /// does: in RocksDB's, each column family's writes in logs at or past
    /// its log number, up to the first record that does not read, which
    /// ends the log (returned, with the writes before it kept); in
    /// LevelDB's (without `paranoid_checks`), past every damaged part,
    /// which is dropped (the first returned, with every write read kept). A
    /// log RocksDB compressed (`wal_compression`) is not read: every `Get`
    /// is then unknown.
    pub fn replay(
        &mut self,
        number: u64,
        log: &[u8],
        manifest: &Manifest,
    ) -> Result<(), WalProblem> {
        if manifest.engine() == Engine::Pebble {
            return self.replay_pebble(number, log, manifest);
        }
        let leveldb = manifest.engine() == Engine::LevelDb;
        let mut records = Records::new(log, number);
        if leveldb {
            records = records.resyncing();
        }
        let mut bad_batch = None;
        for record in &mut records {
            let (offset, batch) = match record {
                Ok(record) => record,
                Err((offset, what)) => {
                    if what == (RecordProblem::UnknownType { kind: 9 }) {
                        self.undecidable.insert(None);
                    }
                    return Err(WalProblem::Record { offset, what });
                }
            };
            let read = for_each_batch_entry(&batch, |item| match item {
                BatchItem::Entry(e) => {
                    let family = e.column_family;
                    let live = manifest.column_families().contains_key(&family);
                    // LevelDB replays its logs whole.
                    let flushed = manifest.engine() == Engine::RocksDb
                        && number < manifest.log_number(family);
                    if live && !flushed {
                        let owned = (family, e.kind, e.key.to_vec(), e.end.to_vec());
                        match &mut self.preparing {
                            Some(section) => section.push(owned),
                            None => self.apply(owned, e.sequence, manifest),
                        }
                    }
                }
                BatchItem::Marker(Marker::BeginPrepare, _) => self.preparing = Some(Vec::new()),
                BatchItem::Marker(Marker::EndPrepare(xid), _) => {
                    let section = self.preparing.take().unwrap_or_default();
                    self.prepared.insert(xid.to_vec(), section);
                }
                BatchItem::Marker(Marker::Commit(xid), sequence) => {
                    let section = self.prepared.remove(xid).unwrap_or_default();
                    for (i, owned) in section.into_iter().enumerate() {
                        self.apply(owned, sequence.wrapping_add(i as u64), manifest);
                    }
                }
                BatchItem::Marker(Marker::Rollback(xid), _) => {
                    self.prepared.remove(xid);
                }
            });
            if let Err(what) = read {
                let problem = WalProblem::Batch { offset, what };
                if !leveldb {
                    return Err(problem);
                }
                // LevelDB keeps the batch's entries before the problem and
                // reads on.
                bad_batch.get_or_insert(problem);
            }
        }
        let dropped = records.dropped().first();
        match (dropped, bad_batch) {
            (Some(&(offset, what)), Some(WalProblem::Batch { offset: at, .. })) if offset < at => {
                Err(WalProblem::Record { offset, what })
            }
            (_, Some(problem)) => Err(problem),
            (Some(&(offset, what)), None) => Err(WalProblem::Record { offset, what }),
            (None, None) => Ok(()),
        }
    }

    /// [`Memtable::replay`] of Pebble's log (or one segment of it: the
    /// segments of one log are replayed in their order, and a batch
    /// repeated from an earlier segment, at a sequence number already
    /// replayed, is passed over, as Pebble's WAL reader does): up to the
    /// first record or batch that does not read, which ends it.
    fn replay_pebble(
        &mut self,
        number: u64,
        log: &[u8],
        manifest: &Manifest,
    ) -> Result<(), WalProblem> {
        for record in Records::new(log, number).pebble() {
            let (offset, batch) =
                record.map_err(|(offset, what)| WalProblem::Record { offset, what })?;
            if batch.len() < 12 {
                let what = "shorter than its 12-byte header";
                return Err(WalProblem::Batch { offset, what });
            }
            let sequence = u64::from_le_bytes(batch[..8].try_into().expect("8 bytes"));
            // A batch of log data alone (a count of 0) takes no sequence
            // number, and is not replayed.
            if batch[8..12] == [0; 4] {
                continue;
            }
            if let Some((_, last)) = self.pebble_last.filter(|(n, _)| *n == number) {
                if sequence <= last {
                    continue;
                }
            }
            self.pebble_last = Some((number, sequence));
            let mut entries = Vec::new();
            let ingests = for_each_pebble_batch_entry(&batch, |e| {
                entries.push((0, e.kind, e.key.to_vec(), e.end.to_vec(), e.sequence));
            })
            .map_err(|what| WalProblem::Batch { offset, what })?;
            for (family, kind, key, end, sequence) in entries {
                self.apply((family, kind, key, end), sequence, manifest);
            }
            if ingests {
                self.undecidable.insert(None);
            }
        }
        Ok(())
    }

    /// An entry (or range deletion) into its family's memtable.
    fn apply(&mut self, (family, kind, key, end): Owned, sequence: u64, manifest: &Manifest) {
        let order = *self
            .orders
            .entry(family)
            .or_insert_with(|| manifest.key_order(family).ok());
        let strip = |key: &[u8]| order.map_or(key, |o| o.strip(key)).to_vec();
        match (kind, order) {
            (Some(kind), _) => self
                .entries
                .entry((family, strip(&key)))
                .or_default()
                .push(KeyEntry { kind, sequence }),
            (None, Some(_)) => self
                .tombstones
                .push((family, strip(&key), strip(&end), sequence)),
            (None, None) => {
                self.undecidable.insert(Some(family));
            }
        }
    }

    /// What a `Get` of user key `key` (without a timestamp) in column
    /// family `family` meets in the memtables: the key's entries, newest
    /// first, the range tombstones covering it, and whether the memtable
    /// holds what this crate cannot judge.
    pub fn get(&self, family: u32, key: &[u8]) -> MemtableAnswer {
        let mut entries = self
            .entries
            .get(&(family, key.to_vec()))
            .cloned()
            .unwrap_or_default();
        entries.sort_by_key(|e| std::cmp::Reverse(e.sequence));
        let order = self.orders.get(&family).copied().flatten();
        let covering = self
            .tombstones
            .iter()
            .filter(|(f, start, end, _)| {
                *f == family && order.is_some_and(|o| o.range_covers(start, end, key))
            })
            .map(|t| t.3)
            .max()
            .unwrap_or(0);
        let undecidable =
            self.undecidable.contains(&None) || self.undecidable.contains(&Some(family));
        MemtableAnswer {
            entries,
            covering,
            undecidable,
        }
    }

    /// Whether the memtables hold no entry, no range tombstone, and
    /// nothing this crate cannot judge.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.tombstones.is_empty() && self.undecidable.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(sequence: u64, records: &[&[u8]]) -> Vec<u8> {
        let mut out = sequence.to_le_bytes().to_vec();
        out.extend_from_slice(&(records.len() as u32).to_le_bytes());
        for r in records {
            out.extend_from_slice(r);
        }
        out
    }

    #[test]
    fn batches_read_as_rocksdb_iterates_them() {
        let records: [&[u8]; 8] = [
            b"\x01\x01a\x02v1",    // value a
            b"\x05\x02\x01b\x00",  // family 2: value b
            b"\x03\x03log",        // log data: no sequence
            b"\x00\x01c",          // deletion c
            b"\x0f\x01d\x01f",     // range deletion [d, f)
            b"\x06\x07\x01e\x01+", // family 7: merge e
            b"\x0d",               // no-op
            b"\x07\x01g",          // single deletion g
        ];
        let b = batch(100, &records);
        let mut seen = Vec::new();
        for_each_batch_entry(&b, |item| {
            if let BatchItem::Entry(e) = item {
                let (key, end) = (e.key.to_vec(), e.end.to_vec());
                seen.push((e.column_family, e.sequence, e.kind, key, end))
            }
        })
        .unwrap();
        let v = |x: &str| x.as_bytes().to_vec();
        assert_eq!(
            seen,
            [
                (0, 100, Some(EntryKind::Value), v("a"), v("")),
                (2, 101, Some(EntryKind::Value), v("b"), v("")),
                (0, 102, Some(EntryKind::Deletion), v("c"), v("")),
                (0, 103, None, v("d"), v("f")),
                (7, 104, Some(EntryKind::Merge), v("e"), v("")),
                (0, 105, Some(EntryKind::SingleDeletion), v("g"), v("")),
            ]
        );
        // Cut anywhere inside a record: an error; between records, not.
        let ends: Vec<usize> = records
            .iter()
            .scan(12, |at, r| {
                *at += r.len();
                Some(*at)
            })
            .collect();
        for cut in 12..b.len() {
            let ok = cut == 12 || ends.contains(&cut);
            assert_eq!(for_each_batch_entry(&b[..cut], |_| {}).is_ok(), ok, "{cut}");
        }
        // A tag no engine writes, a header cut short: errors.
        assert!(for_each_batch_entry(&batch(1, &[b"\x42"]), |_| {}).is_err());
        assert!(for_each_batch_entry(&[0; 11], |_| {}).is_err());
    }
}
