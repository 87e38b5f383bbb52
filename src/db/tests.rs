use super::*;
use crate::format::EntryKind;

/// LevelDB's `log::Writer`: records fragmented across 32 KiB blocks.
pub(super) fn log(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for record in records {
        let mut rest = &record[..];
        let mut first = true;
        loop {
            let left = 32768 - out.len() % 32768;
            if left < 7 {
                out.resize(out.len() + left, 0);
                continue;
            }
            let take = rest.len().min(left - 7);
            let last = take == rest.len();
            let kind: u8 = match (first, last) {
                (true, true) => 1,
                (true, false) => 2,
                (false, false) => 3,
                (false, true) => 4,
            };
            let mut typed = vec![kind];
            typed.extend_from_slice(&rest[..take]);
            let crc = crc32c::crc32c(&typed);
            let masked = crc.rotate_right(15).wrapping_add(0xa282ead8);
            out.extend_from_slice(&masked.to_le_bytes());
            out.extend_from_slice(&(take as u16).to_le_bytes());
            out.extend_from_slice(&typed);
            rest = &rest[take..];
            first = false;
            if last {
                break;
            }
        }
    }
    out
}

pub(super) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(super) fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

pub(super) fn ikey(user: &str, seq: u64) -> Vec<u8> {
    let mut k = user.as_bytes().to_vec();
    k.extend_from_slice(&((seq << 8) | 1).to_le_bytes());
    k
}

/// A LevelDB new-file entry (tag 7).
fn new_file(out: &mut Vec<u8>, level: u64, number: u64, smallest: &str, largest: &str) {
    varint(out, 7);
    varint(out, level);
    varint(out, number);
    varint(out, 1000 + number);
    bytes(out, &ikey(smallest, number));
    bytes(out, &ikey(largest, number));
}

fn deleted(out: &mut Vec<u8>, level: u64, number: u64) {
    varint(out, 6);
    varint(out, level);
    varint(out, number);
}

/// The log number, next file number and last sequence number, without
/// which neither engine opens a database.
pub(super) fn meta() -> Vec<u8> {
    let mut edit = Vec::new();
    for (tag, value) in [(2, 3), (3, 100), (4, 1000)] {
        varint(&mut edit, tag);
        varint(&mut edit, value);
    }
    edit
}

/// A LevelDB-like history: files flushed to level 0, compacted to 1 and
/// 2, one moved down a level in the same edit that deletes it above.
fn history() -> Vec<Vec<u8>> {
    let mut first = Vec::new();
    varint(&mut first, 1);
    bytes(&mut first, b"leveldb.BytewiseComparator");
    first.extend(meta());
    let mut flush = Vec::new();
    new_file(&mut flush, 0, 4, "a", "m");
    new_file(&mut flush, 0, 5, "c", "z");
    let mut compact = Vec::new();
    deleted(&mut compact, 0, 4);
    deleted(&mut compact, 0, 5);
    new_file(&mut compact, 1, 6, "a", "f");
    new_file(&mut compact, 1, 7, "g", "z");
    let mut moved = Vec::new();
    deleted(&mut moved, 1, 6);
    new_file(&mut moved, 2, 6, "a", "f");
    let mut later = Vec::new();
    new_file(&mut later, 0, 8, "b", "h");
    new_file(&mut later, 0, 9, "e", "e");
    vec![first, flush, compact, moved, later]
}

pub(super) fn numbers(tables: &[&LiveTable]) -> Vec<u64> {
    tables.iter().map(|t| t.number).collect()
}

#[test]
fn replays_additions_deletions_and_moves() {
    let manifest = Manifest::parse(&log(&history())).unwrap();
    assert_eq!(manifest.comparator(0), Some("leveldb.BytewiseComparator"));
    assert_eq!(manifest.edits(), 5);
    assert!(!manifest.truncated_tail());
    let live: Vec<(u32, u64)> = manifest
        .tables()
        .iter()
        .map(|t| (t.level, t.number))
        .collect();
    assert_eq!(live, [(0, 9), (0, 8), (1, 7), (2, 6)]);
    assert_eq!(manifest.tables()[3].size, 1006);
    assert_eq!(manifest.tables()[3].smallest_user_key(), b"a");
}

#[test]
fn get_order_is_level_0_newest_first_then_one_table_a_level() {
    let manifest = Manifest::parse(&log(&history())).unwrap();
    let order = |key: &str| numbers(&manifest.get_order(0, key.as_bytes()).unwrap());
    assert_eq!(order("e"), [9, 8, 6]);
    assert_eq!(order("g"), [8, 7]);
    assert_eq!(order("a"), [6]);
    assert_eq!(order("zz"), Vec::<u64>::new());
    assert_eq!(order("f"), [8, 6]);
    assert!(manifest.get_order(1, b"e").unwrap().is_empty());
}

#[test]
fn records_span_blocks_and_every_cut_reads_as_a_shorter_log() {
    let mut records = history();
    // An edit of 40,000 bytes: a first, a middle and a last fragment.
    let mut big = Vec::new();
    for n in 0..2000u64 {
        new_file(
            &mut big,
            3,
            100 + n,
            &format!("k{n:05}"),
            &format!("k{n:05}x"),
        );
    }
    assert!(big.len() > 32768);
    records.push(big);
    let bytes = log(&records);
    let whole = Manifest::parse(&bytes).unwrap();
    assert_eq!(whole.tables().len(), 4 + 2000);
    let first = log(&records[..1]).len();
    for cut in (0..bytes.len()).step_by(7) {
        // Before the first edit is whole, the log number and the others
        // are missing.
        if cut < first {
            let missing = Manifest::parse(&bytes[..cut]).unwrap_err();
            assert!(matches!(
                missing,
                ManifestError::Missing {
                    field: "log number"
                }
            ));
            continue;
        }
        let prefix = Manifest::parse(&bytes[..cut]).unwrap();
        assert!(prefix.edits() <= whole.edits());
        assert_eq!(
            prefix.truncated_tail(),
            prefix.edits() < whole.edits() && cut > 0 && !at_record_end(&records, cut)
        );
    }
}

/// Whether `cut` falls just after a whole record (or its block's padding).
fn at_record_end(records: &[Vec<u8>], cut: usize) -> bool {
    (0..=records.len()).any(|n| {
        let len = log(&records[..n]).len();
        cut == len || (cut > len && cut.is_multiple_of(32768) && cut - len < 7)
    })
}

#[test]
fn a_changed_byte_is_a_checksum_error_never_a_panic() {
    let bytes = log(&history());
    for at in 0..bytes.len() {
        for bit in [0x01, 0x80] {
            let mut damaged = bytes.clone();
            damaged[at] ^= bit;
            let result = Manifest::parse(&damaged);
            // A payload or type byte changed: the checksum says so.
            let header = record_starts(&bytes)
                .iter()
                .any(|&s| (s..s + 6).contains(&at));
            if !header {
                assert!(
                    matches!(
                        result,
                        Err(ManifestError::Record {
                            what: RecordProblem::Checksum { .. }
                                | RecordProblem::UnknownType { .. },
                            ..
                        })
                    ),
                    "byte {at} bit {bit:#x}: {result:?}"
                );
            }
        }
    }
}

fn record_starts(log: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    while at + 7 <= log.len() {
        starts.push(at);
        at += 7 + usize::from(u16::from_le_bytes([log[at + 4], log[at + 5]]));
    }
    starts
}

#[test]
fn rocksdb_edits_with_column_families_and_custom_fields() {
    let mut create = Vec::new();
    varint(&mut create, 200);
    varint(&mut create, 1);
    varint(&mut create, 201);
    bytes(&mut create, b"other");
    // kNewFile4: level, number, size, keys, seqnos, custom fields.
    let new_file4 = |custom: &[(u64, &[u8])]| {
        let mut add = Vec::new();
        varint(&mut add, 200);
        varint(&mut add, 1);
        varint(&mut add, 103);
        for v in [0, 12, 3000] {
            varint(&mut add, v);
        }
        bytes(&mut add, &ikey("a", 1));
        bytes(&mut add, &ikey("b", 2));
        varint(&mut add, 1);
        varint(&mut add, 2);
        for (tag, value) in custom {
            varint(&mut add, *tag);
            bytes(&mut add, value);
        }
        varint(&mut add, 1);
        // A tag from the future, safe to ignore.
        varint(&mut add, (1 << 13) | 77);
        bytes(&mut add, b"later");
        add
    };
    // kEpochNumber, and kFileCreationTime (ignored).
    let add = new_file4(&[(13, &[7]), (6, &[1, 2])]);
    let manifest = Manifest::parse(&log(&[meta(), create.clone(), add.clone()])).unwrap();
    assert_eq!(manifest.column_family("other"), Some(1));
    assert_eq!(manifest.column_family("default"), Some(0));
    let t = &manifest.tables()[0];
    assert_eq!(
        (t.column_family, t.level, t.number, t.size),
        (1, 0, 12, 3000)
    );
    assert_eq!((t.seqnos, t.epoch_number), ((1, 2), Some(7)));
    // A custom field not safe to ignore, unknown: an error, as in RocksDB.
    let required = new_file4(&[(13, &[7]), ((1 << 6) | 30, b"x")]);
    let result = Manifest::parse(&log(&[meta(), create.clone(), required]));
    assert!(
        matches!(
            result,
            Err(ManifestError::Edit {
                what: EditProblem::UnknownRequiredField { tag: 94 },
                ..
            })
        ),
        "{result:?}"
    );
    // Dropping the family drops its tables.
    let mut drop = Vec::new();
    varint(&mut drop, 200);
    varint(&mut drop, 1);
    varint(&mut drop, 202);
    let manifest = Manifest::parse(&log(&[meta(), create, add, drop])).unwrap();
    assert!(manifest.tables().is_empty());
    assert_eq!(manifest.column_family("other"), None);
}

#[test]
fn an_unknown_tag_or_a_short_key_is_an_error() {
    let mut unknown = Vec::new();
    varint(&mut unknown, 99);
    let result = Manifest::parse(&log(&[unknown]));
    assert_eq!(
        result.unwrap_err(),
        ManifestError::Edit {
            offset: 0,
            what: EditProblem::UnknownTag { tag: 99 }
        }
    );
    let mut short = Vec::new();
    varint(&mut short, 7);
    varint(&mut short, 0);
    varint(&mut short, 4);
    varint(&mut short, 10);
    bytes(&mut short, b"abc");
    assert!(matches!(
        Manifest::parse(&log(&[short])),
        Err(ManifestError::Edit {
            what: EditProblem::ShortKey { len: 3 },
            ..
        })
    ));
}

#[test]
fn an_incomplete_atomic_group_is_not_applied() {
    let grouped = |remaining: u64, number: u64| {
        let mut edit = Vec::new();
        varint(&mut edit, 300);
        varint(&mut edit, remaining);
        new_file(&mut edit, 1, number, "a", "b");
        edit
    };
    let whole = Manifest::parse(&log(&[meta(), grouped(1, 4), grouped(0, 5)])).unwrap();
    assert_eq!(whole.tables().len(), 2);
    let cut = Manifest::parse(&log(&[meta(), grouped(1, 4)])).unwrap();
    assert!(cut.tables().is_empty());
    // An edit of no group inside an open group: RocksDB's corruption.
    let outside = Manifest::parse(&log(&[meta(), grouped(1, 4), meta(), grouped(0, 5)]));
    assert!(matches!(
        outside,
        Err(ManifestError::Edit {
            what: EditProblem::OutsideAtomicGroup,
            ..
        })
    ));
}

#[test]
fn current_names_a_manifest_or_is_an_error() {
    assert_eq!(
        current_manifest(b"MANIFEST-000001\n"),
        Ok("MANIFEST-000001")
    );
    for bad in [
        &b"MANIFEST-000001"[..],
        b"MANIFEST-\n",
        b"MANIFEST-12a\n",
        b"../MANIFEST-1\n",
        b"",
    ] {
        assert!(current_manifest(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn unknown_comparators_have_no_get_order() {
    let mut edit = Vec::new();
    varint(&mut edit, 1);
    bytes(&mut edit, b"my.Comparator");
    let manifest = Manifest::parse(&log(&[meta(), edit])).unwrap();
    assert!(matches!(
        manifest.get_order(0, b"k"),
        Err(ManifestError::UnknownComparator { .. })
    ));
}

#[test]
fn leveldb_has_seven_levels() {
    let mut edit = meta();
    new_file(&mut edit, 7, 4, "a", "b");
    assert!(matches!(
        Manifest::parse(&log(&[edit])),
        Err(ManifestError::Edit {
            what: EditProblem::LevelOutOfRange { level: 7, limit: 7 },
            ..
        })
    ));
}

#[test]
fn an_empty_manifest_is_an_error_as_in_both_engines() {
    for bytes in [&[][..], &log(&[vec![1, 0]])[..]] {
        assert!(matches!(
            Manifest::parse(bytes),
            Err(ManifestError::Missing {
                field: "log number"
            })
        ));
    }
}

/// A RocksDB new-file entry (kNewFile4) of column family 0 with seqnos,
/// its largest key at sequence `largest_seq`.
fn new_file4(
    out: &mut Vec<u8>,
    level: u64,
    number: u64,
    range: (&str, &str),
    largest_seq: u64,
    epoch: Option<u64>,
) {
    varint(out, 103);
    varint(out, level);
    varint(out, number);
    varint(out, 1000);
    bytes(out, &ikey(range.0, 1));
    let mut largest = range.1.as_bytes().to_vec();
    largest.extend_from_slice(&((largest_seq << 8) | 0xf).to_le_bytes());
    bytes(out, &largest);
    varint(out, 1);
    varint(out, largest_seq.min(1 << 40));
    if let Some(epoch) = epoch {
        varint(out, 13);
        let mut value = Vec::new();
        varint(&mut value, epoch);
        bytes(out, &value);
    }
    varint(out, 1);
}

#[test]
fn rocksdb_get_order_follows_filepicker() {
    // Level 1: a table ending in a range deletion's sentinel at "m", the
    // next starting at "m"; then one whose last key "t" the next shares.
    let mut edit = meta();
    new_file4(&mut edit, 1, 10, ("a", "m"), (1 << 56) - 1, Some(1));
    new_file4(&mut edit, 1, 11, ("m", "t"), 5, Some(2));
    new_file4(&mut edit, 1, 12, ("t", "z"), 6, Some(3));
    new_file4(&mut edit, 0, 13, ("a", "b"), 7, Some(4));
    let manifest = Manifest::parse(&log(&[edit])).unwrap();
    assert_eq!(manifest.engine(), Engine::RocksDb);
    let order = |key: &str| numbers(&manifest.get_order(0, key.as_bytes()).unwrap());
    assert_eq!(order("m"), [11], "the sentinel does not hold its key");
    assert_eq!(order("t"), [11, 12], "one key's entries across two tables");
    assert_eq!(order("c"), [10]);

    // Only level 0, at most 3 tables: every one is consulted, newest
    // (by epoch) first; with a table lacking an epoch, by sequence.
    let mut edit = meta();
    new_file4(&mut edit, 0, 20, ("a", "b"), 9, Some(2));
    new_file4(&mut edit, 0, 21, ("x", "y"), 8, Some(3));
    let manifest = Manifest::parse(&log(&[edit])).unwrap();
    assert_eq!(numbers(&manifest.get_order(0, b"m").unwrap()), [21, 20]);
    let mut edit = meta();
    new_file4(&mut edit, 0, 20, ("a", "b"), 9, Some(2));
    new_file4(&mut edit, 0, 21, ("x", "y"), 8, None);
    let manifest = Manifest::parse(&log(&[edit])).unwrap();
    assert_eq!(numbers(&manifest.get_order(0, b"m").unwrap()), [20, 21]);
}

#[test]
fn comparators_are_per_column_family() {
    let mut edit = meta();
    varint(&mut edit, 1);
    bytes(&mut edit, b"leveldb.BytewiseComparator");
    let mut other = Vec::new();
    varint(&mut other, 200);
    varint(&mut other, 1);
    varint(&mut other, 201);
    bytes(&mut other, b"other");
    varint(&mut other, 1);
    bytes(&mut other, b"rocksdb.ReverseBytewiseComparator");
    let manifest = Manifest::parse(&log(&[edit, other])).unwrap();
    assert_eq!(manifest.key_order(0), Ok(KeyOrder::Bytewise));
    assert_eq!(manifest.key_order(1), Ok(KeyOrder::ReverseBytewise));
}

#[test]
fn padding_drops_the_rest_of_its_block_and_an_empty_first_fragment_is_passed_over() {
    let mut bytes = log(&[meta()]);
    // A zero-type, zero-length record: the rest of the block is dropped,
    // garbage included.
    bytes.extend_from_slice(&[0; 7]);
    bytes.extend_from_slice(b"garbage that is never read");
    bytes.resize(32768, 0xee);
    bytes.extend(log(&history()));
    let manifest = Manifest::parse(&bytes).unwrap();
    assert_eq!(manifest.tables().len(), 4);
    // An empty first fragment, then a full record.
    let empty_first = {
        let crc = crc32c::crc32c(&[2]);
        let masked = crc.rotate_right(15).wrapping_add(0xa282ead8);
        [&masked.to_le_bytes()[..], &[0, 0, 2]].concat()
    };
    let bytes = [empty_first, log(&history())].concat();
    assert_eq!(Manifest::parse(&bytes).unwrap().tables().len(), 4);
}

/// A blob file addition (tag 400) or garbage (401), custom fields ended by
/// tag 0 as `BlobFileAddition::EncodeTo` writes them.
fn blob(
    out: &mut Vec<u8>,
    addition: bool,
    number: u64,
    counts: (u64, u64),
    custom: &[(u64, &[u8])],
) {
    varint(out, if addition { 400 } else { 401 });
    varint(out, number);
    varint(out, counts.0);
    varint(out, counts.1);
    if addition {
        bytes(out, b"");
        bytes(out, b"");
    }
    for &(tag, value) in custom {
        varint(out, tag);
        bytes(out, value);
    }
    varint(out, 0);
}

/// A new file (tag 103) whose blob indexes reach back to blob file `oldest`.
fn new_file_linked(out: &mut Vec<u8>, number: u64, range: (&str, &str), oldest: u64) {
    varint(out, 103);
    varint(out, 1);
    varint(out, number);
    varint(out, 1000);
    bytes(out, &ikey(range.0, 1));
    bytes(out, &ikey(range.1, 1));
    varint(out, 1);
    varint(out, 1);
    varint(out, 4);
    let mut value = Vec::new();
    varint(&mut value, oldest);
    bytes(out, &value);
    varint(out, 1);
}

#[test]
fn blob_files_live_as_versionbuilder_keeps_them() {
    let mut first = meta();
    varint(&mut first, 1);
    bytes(&mut first, b"leveldb.BytewiseComparator");
    // Blob files 5 to 8; a table links to 6 (5 is before every link); 7
    // is all garbage, linked by none; 8 half garbage.
    for number in 5..=8 {
        blob(&mut first, true, number, (10, 1000), &[(7, b"ignored")]);
    }
    new_file_linked(&mut first, 20, ("a", "m"), 6);
    let mut second = Vec::new();
    blob(&mut second, false, 7, (10, 1000), &[]);
    blob(&mut second, false, 8, (5, 500), &[]);
    let manifest = Manifest::parse(&log(&[first.clone(), second])).unwrap();
    let live: Vec<(u64, (u64, u64))> = manifest
        .blob_files()
        .iter()
        .map(|b| (b.number, b.garbage))
        .collect();
    assert_eq!(live, [(6, (0, 0)), (8, (5, 500))]);
    assert_eq!(manifest.tables()[0].oldest_blob_file, 6);

    // RocksDB's errors: garbage past the total, of a file never added, a
    // file added twice, a custom field marked not safe to ignore.
    let edit_error = |edit: Vec<u8>| match Manifest::parse(&log(&[first.clone(), edit])) {
        Err(ManifestError::Edit { what, .. }) => what,
        other => panic!("{other:?}"),
    };
    let mut over = Vec::new();
    blob(&mut over, false, 8, (11, 10), &[]);
    assert_eq!(
        edit_error(over),
        EditProblem::BlobGarbageOverflow { number: 8 }
    );
    let mut unknown = Vec::new();
    blob(&mut unknown, false, 9, (1, 1), &[]);
    assert_eq!(
        edit_error(unknown),
        EditProblem::BlobFileUnknown { number: 9 }
    );
    let mut twice = Vec::new();
    blob(&mut twice, true, 5, (1, 1), &[]);
    assert_eq!(
        edit_error(twice),
        EditProblem::BlobFileAddedTwice { number: 5 }
    );
    let mut required = Vec::new();
    blob(&mut required, true, 9, (1, 1), &[(64, b"x")]);
    assert_eq!(
        edit_error(required),
        EditProblem::UnknownRequiredField { tag: 64 }
    );
    // Without a table linking to any, no blob file is live.
    let mut alone = meta();
    blob(&mut alone, true, 5, (10, 1000), &[]);
    assert!(Manifest::parse(&log(&[alone]))
        .unwrap()
        .blob_files()
        .is_empty());
}

/// A LevelDB `WriteBatch`: sequence `seq`, puts (`Some` value) and
/// deletions.
fn batch(seq: u64, writes: &[(&[u8], Option<&[u8]>)]) -> Vec<u8> {
    let mut out = seq.to_le_bytes().to_vec();
    out.extend_from_slice(&(writes.len() as u32).to_le_bytes());
    for (key, value) in writes {
        out.push(u8::from(value.is_some()));
        bytes(&mut out, key);
        if let Some(value) = value {
            bytes(&mut out, value);
        }
    }
    out
}

#[test]
fn leveldbs_wal_is_replayed_past_damage_rocksdbs_up_to_it() {
    let leveldb = Manifest::parse(&log(&history())).unwrap();
    let first = log(&[batch(1, &[(b"k", Some(b"v1"))])]);
    let mut damaged = log(&[batch(3, &[(b"k", Some(b"v2"))])]);
    damaged[8] ^= 1;
    let mut wal = [first.clone(), damaged].concat();
    // The rest of the block is dropped with the damaged record: the next
    // batch starts the next block.
    wal.resize(32768, 0);
    wal.extend(log(&[batch(5, &[(b"k", None)])]));
    let kinds = |memtable: &Memtable| -> Vec<(EntryKind, u64)> {
        let answer = memtable.get(0, b"k");
        answer
            .entries
            .iter()
            .map(|e| (e.kind, e.sequence))
            .collect()
    };

    let mut memtable = Memtable::default();
    let problem = memtable.replay(7, &wal, &leveldb);
    assert!(
        matches!(
            problem,
            Err(WalProblem::Record {
                offset,
                what: RecordProblem::Checksum { .. }
            }) if offset == first.len() as u64
        ),
        "{problem:?}"
    );
    assert_eq!(
        kinds(&memtable),
        [(EntryKind::Deletion, 5), (EntryKind::Value, 1)]
    );
    // A batch that does not read: LevelDB keeps what precedes the problem
    // in it, and reads on.
    let mut short = batch(9, &[(b"k", Some(b"v3")), (b"j", Some(b"w"))]);
    short.truncate(short.len() - 2);
    let wal = log(&[short, batch(12, &[(b"k", None)])]);
    let mut memtable = Memtable::default();
    assert!(matches!(
        memtable.replay(8, &wal, &leveldb),
        Err(WalProblem::Batch { offset: 0, .. })
    ));
    assert_eq!(
        kinds(&memtable),
        [(EntryKind::Deletion, 12), (EntryKind::Value, 9)]
    );
}
