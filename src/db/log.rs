//! The log format LevelDB and RocksDB write MANIFESTs in (`db/log_format.h`):
//! 32 KiB blocks of physical records, each a masked CRC-32C, a length, a
//! type and the payload; a logical record is one full record or a first,
//! middles and a last. RocksDB's recyclable types carry a 4-byte log number:
//! a record of another number is left from the file's previous use, and
//! ends the log. Pebble's logs (`record/record.go`) are the same, and its
//! WAL-sync types (9 to 12: full, first, middle, last) carry the log number
//! and an 8-byte offset the log was synced to; the types RocksDB gives 9 to
//! 11 (its metadata) are not Pebble's.

use std::fmt;

use crate::format::unmask;

const BLOCK: usize = 32 * 1024;
const HEADER: usize = 7;
const RECYCLABLE_HEADER: usize = 11;
/// Pebble's WAL-sync header: the recyclable one and the synced offset.
const WAL_SYNC_HEADER: usize = 19;

/// What is wrong with a physical log record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordProblem {
    /// Its CRC-32C does not match.
    Checksum {
        /// The CRC the header holds (unmasked).
        expected: u32,
        /// The CRC of the type and payload.
        found: u32,
    },
    /// Its length runs past its 32 KiB block, before the end of the file.
    BadLength {
        /// The length the header gives.
        length: u16,
    },
    /// A type neither engine writes in a MANIFEST.
    UnknownType {
        /// The type byte.
        kind: u8,
    },
    /// A middle or last fragment with no first before it.
    MissingStart,
    /// A first or full record while a fragmented one is unfinished.
    MissingEnd,
}

impl fmt::Display for RecordProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RecordProblem::Checksum { expected, found } => write!(
                f,
                "checksum mismatch: the header says {expected:#010x}, the contents give {found:#010x}"
            ),
            RecordProblem::BadLength { length } => {
                write!(f, "length {length} runs past its 32 KiB block")
            }
            RecordProblem::UnknownType { kind } => write!(f, "unknown record type {kind}"),
            RecordProblem::MissingStart => write!(f, "a fragment with no first fragment before it"),
            RecordProblem::MissingEnd => write!(f, "a fragmented record with no last fragment"),
        }
    }
}

/// A physical record: its offset, type and payload.
type Physical<'a> = (usize, u8, &'a [u8]);

/// The logical records of a log, each with the offset of its first
/// physical record; stops at the first problem (its offset and what).
pub(super) struct Records<'a> {
    log: &'a [u8],
    /// The low 32 bits of the log's number (0 for a MANIFEST), which its
    /// recyclable records carry.
    number: u32,
    at: usize,
    failed: bool,
    truncated: bool,
    /// LevelDB's recovery: a problem drops what it spoils and the reading
    /// goes on (kept in `dropped`) rather than ending the log.
    resync: bool,
    dropped: Vec<(u64, RecordProblem)>,
    /// Pebble's record types (its WAL-sync ones, no RocksDB metadata).
    pebble: bool,
}

impl<'a> Records<'a> {
    /// The records of the log numbered `number` (a WAL's file number; 0 for
    /// a MANIFEST, as both engines read one).
    pub(super) fn new(log: &'a [u8], number: u64) -> Self {
        Records {
            log,
            number: number as u32,
            at: 0,
            failed: false,
            truncated: false,
            resync: false,
            dropped: Vec::new(),
            pebble: false,
        }
    }

    /// Read as Pebble's `record.Reader` reads a log: types 9 to 12 are its
    /// WAL-sync fragments, and no type is metadata to skip.
    pub(super) fn pebble(mut self) -> Self {
        self.pebble = true;
        self
    }

    /// Read as LevelDB's recovery reads a log (without `paranoid_checks`):
    /// a damaged physical record drops the rest of its block, a fragment
    /// without its first or last drops the unfinished record, an unknown
    /// type drops the record, and the reading goes on with what follows;
    /// the problems are [`dropped`](Self::dropped), none an item.
    pub(super) fn resyncing(mut self) -> Self {
        self.resync = true;
        self
    }

    /// The problems a resyncing read dropped, in order.
    pub(super) fn dropped(&self) -> &[(u64, RecordProblem)] {
        &self.dropped
    }

    /// Whether the log ended in a record cut short.
    pub(super) fn truncated_tail(&self) -> bool {
        self.truncated
    }

    /// The next physical record: its offset, type and payload; `None` at
    /// the end (a header or payload cut short by the end of the file is
    /// the end, as both engines read it).
    fn physical(&mut self) -> Option<Result<Physical<'a>, (u64, RecordProblem)>> {
        loop {
            let left_in_block = BLOCK - self.at % BLOCK;
            if left_in_block < HEADER {
                // The block's trailer: zeros too short for a header.
                self.at += left_in_block;
                continue;
            }
            let rest = self.log.get(self.at..).filter(|r| !r.is_empty())?;
            if rest.len() < HEADER {
                self.truncated = true;
                return None;
            }
            let offset = self.at;
            let mut kind = rest[6];
            // Recyclable fragments, a recyclable timestamp-size record, and
            // a recyclable predecessor-WAL record (RocksDB 9.10+); Pebble's
            // recyclable and WAL-sync fragments.
            let (recyclable, header) = match (self.pebble, kind) {
                (true, 5..=8) => (true, RECYCLABLE_HEADER),
                (true, 9..=12) => (true, WAL_SYNC_HEADER),
                (false, 5..=8 | 11 | 131) => (true, RECYCLABLE_HEADER),
                _ => (false, HEADER),
            };
            let length = u16::from_le_bytes([rest[4], rest[5]]);
            let end = header + usize::from(length);
            if end > left_in_block {
                if rest.len() < left_in_block {
                    // The file ends inside the block: a write cut short.
                    self.truncated = true;
                    return None;
                }
                return Some(Err((offset as u64, RecordProblem::BadLength { length })));
            }
            if rest.len() < end {
                self.truncated = true;
                return None;
            }
            if recyclable
                && u32::from_le_bytes([rest[7], rest[8], rest[9], rest[10]]) != self.number
            {
                // `kOldRecord`: RocksDB reads it as the end of the file.
                return None;
            }
            self.at += end;
            if kind == 0 && length == 0 {
                // Preallocated space (RocksDB) or an mmap writer's padding:
                // the rest of the block is dropped, as both engines drop it.
                self.at += left_in_block - end;
                return Some(Ok((offset, 0, &[])));
            }
            let expected = unmask(u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]));
            let found = crc32c::crc32c(&rest[6..end]);
            if expected != found {
                return Some(Err((
                    offset as u64,
                    RecordProblem::Checksum { expected, found },
                )));
            }
            if self.pebble && (9..=12).contains(&kind) {
                // A WAL-sync fragment is in the place of the legacy one.
                kind -= 8;
            }
            return Some(Ok((offset, kind, &rest[header..end])));
        }
    }
}

impl Iterator for Records<'_> {
    type Item = Result<(u64, Vec<u8>), (u64, RecordProblem)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let mut record: Option<(usize, Vec<u8>)> = None;
        let item = loop {
            let (offset, kind, payload) = match self.physical() {
                None => {
                    // A record whose last fragment was never written is
                    // dropped, as both engines drop it.
                    self.truncated |= record.is_some();
                    return None;
                }
                Some(Err((offset, what))) if self.resync => {
                    // LevelDB drops the rest of the block and the record
                    // being put together.
                    self.dropped.push((offset, what));
                    self.at = (offset as usize / BLOCK + 1) * BLOCK;
                    record = None;
                    continue;
                }
                Some(Err(problem)) => break Err(problem),
                Some(Ok(physical)) => physical,
            };
            let problem = |what| Err((offset as u64, what));
            // A first fragment with no bytes, then a full or first record:
            // what an old writer left, which both engines pass over.
            if matches!(kind, 1 | 2 | 5 | 6) && record.as_ref().is_some_and(|r| r.1.is_empty()) {
                record = None;
            }
            match (kind, &mut record) {
                // Dropped padding ends a fragmented record: an error.
                (0, Some(_)) if payload.is_empty() => break problem(RecordProblem::MissingEnd),
                (0, None) if payload.is_empty() => {}
                (1 | 5, None) => break Ok((offset as u64, payload.to_vec())),
                (2 | 6, None) => record = Some((offset, payload.to_vec())),
                (3 | 7, Some((_, bytes))) => bytes.extend_from_slice(payload),
                (4 | 8, Some((start, bytes))) => {
                    bytes.extend_from_slice(payload);
                    break Ok((*start as u64, std::mem::take(bytes)));
                }
                (3 | 4 | 7 | 8, None) if self.resync => {
                    self.dropped
                        .push((offset as u64, RecordProblem::MissingStart));
                }
                (3 | 4 | 7 | 8, None) => break problem(RecordProblem::MissingStart),
                (1 | 2 | 5 | 6, Some(_)) if self.resync => {
                    // The unfinished record is dropped; this one is read.
                    self.dropped
                        .push((offset as u64, RecordProblem::MissingEnd));
                    match kind {
                        1 | 5 => break Ok((offset as u64, payload.to_vec())),
                        _ => record = Some((offset, payload.to_vec())),
                    }
                }
                (1 | 2 | 5 | 6, Some(_)) => break problem(RecordProblem::MissingEnd),
                // RocksDB's records of timestamp sizes (WALs), which a
                // MANIFEST does not hold, and types it marks as safe to
                // ignore (bit 7): skipped as metadata.
                (10 | 11 | 128.., _) if !self.pebble => {}
                (kind, _) if self.resync => {
                    self.dropped
                        .push((offset as u64, RecordProblem::UnknownType { kind }));
                    record = None;
                }
                (kind, _) => break problem(RecordProblem::UnknownType { kind }),
            }
        };
        self.failed = item.is_err();
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One physical record: RocksDB's recyclable header where `number` is
    /// given.
    fn physical(kind: u8, number: Option<u32>, payload: &[u8]) -> Vec<u8> {
        let mut typed = vec![kind];
        typed.extend(number.map(u32::to_le_bytes).into_iter().flatten());
        typed.extend_from_slice(payload);
        let masked = crc32c::crc32c(&typed)
            .rotate_right(15)
            .wrapping_add(0xa282ead8);
        let mut out = masked.to_le_bytes().to_vec();
        out.extend_from_slice(&(payload.len() as u16).to_le_bytes());
        out.extend(typed);
        out
    }

    fn read(log: &[u8], number: u64) -> Vec<Vec<u8>> {
        Records::new(log, number)
            .map(|r| r.map(|(_, record)| record).unwrap())
            .collect()
    }

    #[test]
    fn a_recycled_logs_records_of_another_number_end_it() {
        let log = [
            physical(5, Some(7), b"full"),
            // A predecessor-WAL record (ignorable, recyclable): skipped whole.
            physical(131, Some(7), b"info"),
            physical(6, Some(7), b"fir"),
            physical(8, Some(7), b"st"),
            // Left from the file's use as log 3.
            physical(5, Some(3), b"stale"),
            physical(5, Some(7), b"after"),
        ]
        .concat();
        assert_eq!(read(&log, 7), [b"full".to_vec(), b"first".to_vec()]);
        // Log number 7 + 2^32 carries the same low bits.
        assert_eq!(read(&log, 7 + (1 << 32)).len(), 2);
        // A stale first fragment: the record it starts is dropped.
        let cut = [physical(6, Some(7), b"fi"), physical(8, Some(2), b"rst")].concat();
        let mut records = Records::new(&cut, 7);
        assert!(records.next().is_none());
        assert!(records.truncated_tail());
        // Legacy records carry no number.
        let legacy = [physical(1, None, b"a"), physical(1, None, b"b")].concat();
        assert_eq!(read(&legacy, 9).len(), 2);
    }

    #[test]
    fn leveldbs_recovery_drops_what_damage_spoils_and_reads_on() {
        let mut bad = physical(1, None, b"damaged");
        bad[9] ^= 1;
        let mut log = [
            physical(1, None, b"a"),
            physical(2, None, b"unfini"),
            physical(1, None, b"b"),
            bad,
            physical(1, None, b"lost with its block"),
        ]
        .concat();
        log.resize(BLOCK, 0);
        log.extend([physical(4, None, b"no start"), physical(1, None, b"c")].concat());
        log.extend(physical(9, None, b"unknown"));
        log.extend(physical(1, None, b"d"));
        let mut records = Records::new(&log, 0).resyncing();
        let read: Vec<Vec<u8>> = (&mut records).map(|r| r.unwrap().1).collect();
        assert_eq!(read, [&b"a"[..], b"b", b"c", b"d"]);
        let dropped: Vec<RecordProblem> = records.dropped().iter().map(|d| d.1).collect();
        assert!(matches!(
            dropped[..],
            [
                RecordProblem::MissingEnd,
                RecordProblem::Checksum { .. },
                RecordProblem::MissingStart,
                RecordProblem::UnknownType { kind: 9 }
            ]
        ));
        // Read as RocksDB's point-in-time recovery reads it: up to the first.
        let strict: Vec<_> = Records::new(&log, 0).collect();
        assert_eq!(strict.len(), 2);
        assert!(strict[1].is_err());
    }
}
