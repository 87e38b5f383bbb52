//! Pebble's MANIFESTs, directories and logs, crafted as Pebble writes them
//! (internal/manifest/version_edit.go, vfs/atomicfs/marker.go,
//! record/record.go, batchrepr): what its own databases in `testdata/db/`
//! do not all hold.

use super::tests::{bytes, ikey, log, meta, numbers, varint};
use super::*;
use crate::format::EntryKind;

/// An internal key at Pebble's exclusive sentinel: a range deletion's end.
fn sentinel(user: &str) -> Vec<u8> {
    let mut key = user.as_bytes().to_vec();
    key.extend_from_slice(&((MAX_SEQUENCE << 8) | 0xf).to_le_bytes());
    key
}

/// Pebble's new file 103 at `level`, its bounds internal keys, then its
/// custom fields (tag and value already encoded) and the terminating tag.
fn new_file(out: &mut Vec<u8>, level: u64, number: u64, bounds: (&[u8], &[u8]), custom: &[u8]) {
    varint(out, 103);
    varint(out, level);
    varint(out, number);
    varint(out, 100 + number);
    bytes(out, bounds.0);
    bytes(out, bounds.1);
    varint(out, 1);
    varint(out, number);
    // The creation time, which Pebble writes for every table it makes.
    varint(out, 6);
    bytes(out, &[0x80, 0x01]);
    out.extend_from_slice(custom);
    varint(out, 1);
}

/// Pebble's new file 104: its bounds marker, point keys' bounds where
/// the marker says so, the range keys' bounds.
fn new_file5(
    out: &mut Vec<u8>,
    number: u64,
    marker: u8,
    points: Option<(&str, &str)>,
    ranges: (&str, &str),
) {
    varint(out, 104);
    varint(out, 0);
    varint(out, number);
    varint(out, 500);
    out.push(marker);
    if let Some((smallest, largest)) = points {
        bytes(out, &ikey(smallest, 3));
        bytes(out, &ikey(largest, 3));
    }
    bytes(out, &ikey(ranges.0, 4));
    bytes(out, &ikey(ranges.1, 4));
    varint(out, 1);
    varint(out, number);
    varint(out, 1);
}

/// The field naming a virtual table's backing: 66 and a varint, no length.
fn virtual_of(backing: u64) -> Vec<u8> {
    let mut field = Vec::new();
    varint(&mut field, 66);
    varint(&mut field, backing);
    field
}

fn first_edit() -> Vec<u8> {
    let mut edit = Vec::new();
    varint(&mut edit, 1);
    bytes(&mut edit, b"leveldb.BytewiseComparator");
    edit.extend(meta());
    edit
}

fn tag(out: &mut Vec<u8>, tag: u64, values: &[u64]) {
    varint(out, tag);
    for &v in values {
        varint(out, v);
    }
}

#[test]
fn an_excise_makes_virtual_tables_of_a_backing_table() {
    let mut flush = first_edit();
    new_file(&mut flush, 6, 10, (&ikey("a", 1), &ikey("z", 1)), &[]);
    new_file(&mut flush, 6, 11, (&ikey("za", 1), &ikey("zz", 1)), &[]);
    // The excise of [d, k): table 10 goes, its backing stays, and two
    // virtual tables hold what is left of it.
    let mut excise = Vec::new();
    tag(&mut excise, 105, &[10, 4321]);
    tag(&mut excise, 6, &[6, 10]);
    new_file(
        &mut excise,
        6,
        20,
        (&ikey("a", 1), &ikey("c", 1)),
        &virtual_of(10),
    );
    new_file(
        &mut excise,
        6,
        21,
        (&ikey("k", 1), &ikey("z", 1)),
        &virtual_of(10),
    );
    let manifest = Manifest::parse(&log(&[flush.clone(), excise.clone()])).unwrap();
    assert_eq!(manifest.engine(), Engine::Pebble);
    let tables = manifest.tables();
    assert_eq!(numbers(&tables.iter().collect::<Vec<_>>()), [20, 21, 11]);
    let backing = Some(Backing {
        number: 10,
        size: 4321,
    });
    assert_eq!(
        (tables[0].backing(), tables[1].backing()),
        (backing, backing)
    );
    assert_eq!((tables[0].file_number(), tables[0].file_size()), (10, 4321));
    assert_eq!(tables[0].size, 120);
    assert_eq!(tables[0].file_names(Engine::Pebble)[0], "000010.sst");
    assert_eq!((tables[2].backing(), tables[2].file_size()), (None, 111));
    assert!(tables[2].pebble.is_none(), "no Pebble field: nothing boxed");
    // A Get asks a virtual table within its bounds alone: the excised span
    // is in no table.
    let order = |key: &str| numbers(&manifest.get_order(0, key.as_bytes()).unwrap());
    assert_eq!(order("b"), [20]);
    assert_eq!(order("e"), Vec::<u64>::new());
    assert_eq!(order("m"), [21]);
    assert_eq!(order("zb"), [11]);

    // The virtual tables go, then the backing: nothing of 10 is left.
    let mut gone = Vec::new();
    tag(&mut gone, 6, &[6, 20]);
    tag(&mut gone, 6, &[6, 21]);
    tag(&mut gone, 106, &[10]);
    let manifest = Manifest::parse(&log(&[flush.clone(), excise.clone(), gone])).unwrap();
    assert_eq!(numbers(&manifest.tables().iter().collect::<Vec<_>>()), [11]);

    // A backing removed while a virtual table is on it, or never created:
    // Pebble does not open the database.
    let mut early = Vec::new();
    tag(&mut early, 106, &[10]);
    let removed = Manifest::parse(&log(&[flush.clone(), excise, early]));
    assert_eq!(
        removed.unwrap_err(),
        ManifestError::NoBacking {
            table: 20,
            backing: 10
        }
    );
    let mut orphan = Vec::new();
    new_file(
        &mut orphan,
        5,
        30,
        (&ikey("a", 1), &ikey("b", 1)),
        &virtual_of(99),
    );
    let never = Manifest::parse(&log(&[flush, orphan]));
    assert_eq!(
        never.unwrap_err(),
        ManifestError::NoBacking {
            table: 30,
            backing: 99
        }
    );
}

#[test]
fn an_exclusive_bound_does_not_hold_its_own_key() {
    // Level 0: a table ending at a range deletion's end "m" (exclusive),
    // and newer ones; level 1: the same at "t", and the next table from
    // "t" on.
    let mut edit = first_edit();
    tag(&mut edit, 105, &[3, 10]);
    new_file(&mut edit, 0, 20, (&ikey("a", 1), &sentinel("m")), &[]);
    new_file(&mut edit, 0, 21, (&ikey("k", 1), &ikey("p", 1)), &[]);
    new_file(&mut edit, 0, 22, (&ikey("m", 1), &ikey("m", 1)), &[]);
    new_file(&mut edit, 1, 30, (&ikey("a", 1), &sentinel("t")), &[]);
    new_file(&mut edit, 1, 31, (&ikey("t", 1), &ikey("z", 1)), &[]);
    let manifest = Manifest::parse(&log(&[edit])).unwrap();
    let order = |key: &str| numbers(&manifest.get_order(0, key.as_bytes()).unwrap());
    // Newest first by largest sequence number (the table's number here).
    assert_eq!(order("m"), [22, 21, 30]);
    assert_eq!(order("l"), [21, 20, 30]);
    assert_eq!(order("t"), [31]);
    assert_eq!(order("s"), [30]);
}

#[test]
fn v1_reads_the_first_table_at_or_past_the_key_in_each_level_and_sublevel() {
    // Level 0, oldest first: 10 [c, m] (sublevel 0), 11 [a, f] (over 10:
    // 1), 12 [p, z] (over nothing: 0), 13 [b, q] (over all: 2). Level 1:
    // [d, g], [k, n].
    let mut edit = first_edit();
    tag(&mut edit, 105, &[3, 10]);
    for (number, range) in [
        (10, ("c", "m")),
        (11, ("a", "f")),
        (12, ("p", "z")),
        (13, ("b", "q")),
    ] {
        new_file(
            &mut edit,
            0,
            number,
            (&ikey(range.0, 1), &ikey(range.1, 1)),
            &[],
        );
    }
    new_file(&mut edit, 1, 20, (&ikey("d", 1), &ikey("g", 1)), &[]);
    new_file(&mut edit, 1, 21, (&ikey("k", 1), &ikey("n", 1)), &[]);
    let manifest = Manifest::parse(&log(&[edit])).unwrap();
    assert_eq!(manifest.pebble_get(), Some(PebbleGet::V2));
    let v1 = located(
        &[
            "marker.format-version.000001.016",
            "marker.manifest.000001.MANIFEST-000001",
        ],
        None,
    )
    .unwrap();
    let v1 = manifest
        .clone()
        .in_directory(&v1, Some("[Options]\n  wal_dir=\n"))
        .unwrap();
    assert_eq!(v1.pebble_get(), Some(PebbleGet::V1));
    let order = |m: &Manifest, key: &str| numbers(&m.get_order(0, key.as_bytes()).unwrap());
    // v2: the tables holding the key, newest first.
    assert_eq!(order(&manifest, "h"), [13, 10]);
    assert_eq!(order(&manifest, "o"), [13]);
    // v1: sublevel 2 (13), 1 (11 ends before h: none), 0 (10, which holds
    // h; at o, 12 starts past it but is the first at or past it); level 1's
    // first table at or past the key, holding it or not.
    assert_eq!(order(&v1, "h"), [13, 10, 21]);
    assert_eq!(order(&v1, "o"), [13, 12]);
    assert_eq!(order(&v1, "0"), [13, 11, 10, 20]);
    // Level 6 asks no filter.
    let table = |level| LiveTable {
        level,
        ..manifest.tables()[0].clone()
    };
    assert!(v1.asks_filter(&table(5)) && !v1.asks_filter(&table(6)));
    // The release: v1 to 12, v2 from 17, between them what OPTIONS say.
    let v2_options = "[Options]\n  key_schema=DefaultKeySchema(leveldb.BytewiseComparator,16)\n";
    assert_eq!(PebbleGet::of(None, None), PebbleGet::V1);
    assert_eq!(PebbleGet::of(Some(13), Some(v2_options)), PebbleGet::V2);
    assert_eq!(PebbleGet::of(Some(16), Some("[Options]\n")), PebbleGet::V1);
    assert_eq!(PebbleGet::of(Some(24), None), PebbleGet::V2);
}

#[test]
fn range_key_tables_record_their_point_keys_bounds_apart() {
    let mut edit = first_edit();
    // Points [c, e] within range keys [a, x]; the bounds: the smallest a
    // range key's, the largest a point key's (marker bits 0 and 2).
    new_file5(&mut edit, 40, 0b101, Some(("c", "e")), ("a", "x"));
    // Range keys alone.
    new_file5(&mut edit, 41, 0b000, None, ("m", "p"));
    // Both bounds the point keys'.
    new_file5(&mut edit, 42, 0b111, Some(("q", "s")), ("r", "r"));
    let manifest = Manifest::parse(&log(&[edit])).unwrap();
    assert_eq!(manifest.engine(), Engine::Pebble);
    let table = |n: u64| manifest.tables().iter().find(|t| t.number == n).unwrap();
    let t = table(40);
    assert_eq!(
        (t.smallest_user_key(), t.largest_user_key()),
        (&b"a"[..], &b"e"[..])
    );
    let (smallest, largest) = t.point_bounds().unwrap();
    assert_eq!(
        (user_key(smallest), user_key(largest)),
        (&b"c"[..], &b"e"[..])
    );
    assert_eq!(
        (
            table(41).pebble.as_ref().map(|p| p.point_keys.clone()),
            table(41).point_bounds()
        ),
        (Some(PointKeys::None), None)
    );
    assert_eq!(table(41).largest_user_key(), b"p");
    assert_eq!(
        (table(42).smallest_user_key(), table(42).largest_user_key()),
        (&b"q"[..], &b"s"[..])
    );
    // A Get reads point keys: b lies in table 40's bounds, not its points';
    // n in no point keys at all.
    let order = |key: &str| numbers(&manifest.get_order(0, key.as_bytes()).unwrap());
    assert_eq!(order("b"), Vec::<u64>::new());
    assert_eq!(order("d"), [40]);
    assert_eq!(order("n"), Vec::<u64>::new());
    assert_eq!(order("s"), [42]);

    // No point keys, and a bound said to be a point key's: Pebble's error.
    let mut bad = first_edit();
    new_file5(&mut bad, 43, 0b010, None, ("a", "b"));
    let error = Manifest::parse(&log(&[bad])).unwrap_err();
    assert!(
        matches!(
            error,
            ManifestError::Edit {
                what: EditProblem::BoundsMarker { marker: 2 },
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn pebbles_fields_without_a_length_and_its_blob_files() {
    let mut edit = first_edit();
    // Blob references (69: depth, count, then id and value size each),
    // then a synthetic prefix and suffix, then the backing (66): each
    // field read as Pebble writes it.
    let mut custom = Vec::new();
    tag(&mut custom, 69, &[2, 2, 7, 300, 8, 400]);
    varint(&mut custom, 67);
    bytes(&mut custom, b"pre/");
    varint(&mut custom, 68);
    bytes(&mut custom, b"@5");
    custom.extend(virtual_of(12));
    tag(&mut edit, 105, &[12, 999]);
    new_file(
        &mut edit,
        4,
        50,
        (&ikey("pre/a", 1), &ikey("pre/b", 1)),
        &custom,
    );
    // Blob files: added, one replaced by another physical file (a rewrite),
    // one removed.
    tag(&mut edit, 107, &[7, 60, 5000, 4000, 1_700_000_000]);
    tag(&mut edit, 107, &[8, 61, 6000, 5000, 1_700_000_000]);
    tag(&mut edit, 107, &[9, 62, 100, 90, 1_700_000_000]);
    let mut later = Vec::new();
    tag(&mut later, 107, &[7, 63, 3000, 2500, 1_700_000_100]);
    tag(&mut later, 108, &[7, 60]);
    tag(&mut later, 108, &[9, 62]);
    let manifest = Manifest::parse(&log(&[edit, later])).unwrap();
    let t = &manifest.tables()[0];
    assert_eq!(
        (t.backing(), t.level),
        (
            Some(Backing {
                number: 12,
                size: 999
            }),
            4
        )
    );
    assert_eq!(t.synthetic(), (&b"pre/"[..], &b"@5"[..]));
    let blobs: Vec<(u64, u64, u64)> = manifest
        .pebble_blob_files()
        .iter()
        .map(|b| (b.id, b.number, b.value_size))
        .collect();
    assert_eq!(blobs, [(7, 63, 2500), (8, 61, 5000)]);

    // A count of references past the edit's end is cut short, not read on.
    let mut edit = first_edit();
    let mut custom = Vec::new();
    tag(&mut custom, 69, &[1, u64::MAX]);
    new_file(&mut edit, 4, 51, (&ikey("a", 1), &ikey("b", 1)), &custom);
    let error = Manifest::parse(&log(&[edit])).unwrap_err();
    assert!(
        matches!(
            error,
            ManifestError::Edit {
                what: EditProblem::Truncated { .. },
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn a_pebble_manifest_refuses_what_pebble_refuses() {
    // A column family, in a MANIFEST with Pebble's own tags: Pebble's
    // "column families are not supported".
    let mut edit = first_edit();
    tag(&mut edit, 105, &[3, 10]);
    tag(&mut edit, 200, &[1]);
    let error = Manifest::parse(&log(&[edit])).unwrap_err();
    assert!(
        matches!(
            error,
            ManifestError::Edit {
                what: EditProblem::UnknownTag { tag: 200 },
                ..
            }
        ),
        "{error}"
    );
    // Its path id field (65) too.
    let mut edit = first_edit();
    let mut custom = Vec::new();
    varint(&mut custom, 65);
    bytes(&mut custom, &[1]);
    custom.extend(virtual_of(3));
    tag(&mut edit, 105, &[3, 10]);
    new_file(&mut edit, 1, 20, (&ikey("a", 1), &ikey("b", 1)), &custom);
    let error = Manifest::parse(&log(&[edit])).unwrap_err();
    assert!(matches!(
        error,
        ManifestError::Edit {
            what: EditProblem::UnknownTag { tag: 65 },
            ..
        }
    ));
    // Pebble has 7 levels.
    let mut edit = first_edit();
    tag(&mut edit, 105, &[3, 10]);
    new_file(&mut edit, 7, 21, (&ikey("a", 1), &ikey("b", 1)), &[]);
    let error = Manifest::parse(&log(&[edit])).unwrap_err();
    assert!(matches!(
        error,
        ManifestError::Edit {
            what: EditProblem::LevelOutOfRange { level: 7, limit: 7 },
            ..
        }
    ));
}

/// What a Pebble directory's names say: markers, and the newest OPTIONS.
fn located(names: &[&str], current: Option<&[u8]>) -> Result<LiveManifest, (String, String)> {
    let mut dir = DirNames::default();
    for name in names {
        dir.add(name);
    }
    dir.live_manifest(current)
        .map_err(|(file, problem)| (file, problem.to_string()))
}

#[test]
fn the_directory_says_pebble_where_the_manifest_cannot() {
    // Pebble at FormatMostCompatible writes tags RocksDB writes too.
    let mut edit = first_edit();
    new_file(&mut edit, 0, 5, (&ikey("a", 1), &ikey("b", 1)), &[]);
    let manifest = Manifest::parse(&log(&[edit])).unwrap();
    assert_eq!(manifest.engine(), Engine::RocksDb);
    let plain = located(&["CURRENT", "OPTIONS-000003"], Some(b"MANIFEST-000001\n")).unwrap();
    let pebble = "[Version]\n  pebble_version=0.1\n\n[Options]\n  wal_dir=\n";
    let rocksdb = "[Version]\n  rocksdb_version=7.8.3\n";
    let engine = |located: &LiveManifest, options| {
        manifest
            .clone()
            .in_directory(located, options)
            .unwrap()
            .engine()
    };
    assert_eq!(engine(&plain, Some(pebble)), Engine::Pebble);
    assert_eq!(engine(&plain, Some(rocksdb)), Engine::RocksDb);
    assert_eq!(engine(&plain, None), Engine::RocksDb);
    let markers = located(
        &["marker.format-version.000001.001", "CURRENT"],
        Some(b"MANIFEST-000001\n"),
    )
    .unwrap();
    assert!(markers.pebble_markers);
    assert_eq!(engine(&markers, None), Engine::Pebble);
    // Pebble's Get order: no RocksDB rule of three level-0 tables.
    let pebble_manifest = manifest.clone().in_directory(&markers, None).unwrap();
    assert!(pebble_manifest.get_order(0, b"m").unwrap().is_empty());
    assert_eq!(numbers(&manifest.get_order(0, b"m").unwrap()), [5]);

    // A directory of Pebble's whose MANIFEST holds what Pebble refuses.
    let mut edit = first_edit();
    tag(&mut edit, 200, &[1]);
    let foreign = Manifest::parse(&log(&[edit])).unwrap();
    assert!(foreign.clone().in_directory(&plain, Some(rocksdb)).is_ok());
    assert!(matches!(
        foreign.in_directory(&plain, Some(pebble)),
        Err(ManifestError::Edit {
            what: EditProblem::UnknownTag { tag: 200 },
            ..
        })
    ));
}

#[test]
fn markers_name_the_manifest_from_format_2_current_below() {
    let current = Some(&b"MANIFEST-000005\n"[..]);
    // LevelDB's and RocksDB's, and Pebble's most compatible format.
    let live = located(
        &["CURRENT", "000004.log", "OPTIONS-000007", "OPTIONS-000012"],
        current,
    )
    .unwrap();
    assert_eq!(
        (live.name.as_str(), &live.pointer),
        ("MANIFEST-000005", &ManifestPointer::Current)
    );
    assert_eq!((live.pebble_format, live.pebble_markers), (None, false));
    assert_eq!(live.options_file.as_deref(), Some("OPTIONS-000012"));
    // The highest iteration wins, whatever the names' order; below format
    // 2 Pebble reads CURRENT, marker or not.
    let names = [
        "marker.manifest.000003.MANIFEST-000009",
        "marker.format-version.000002.016",
        "marker.manifest.000012.MANIFEST-000031",
        "marker.format-version.000001.015",
        "CURRENT",
    ];
    let live = located(&names, Some(b"MANIFEST-000000\n")).unwrap();
    assert_eq!(live.name, "MANIFEST-000031");
    assert_eq!(live.pebble_format, Some(16));
    let file = "marker.manifest.000012.MANIFEST-000031".to_string();
    assert_eq!(
        live.pointer,
        ManifestPointer::Marker {
            file,
            iteration: 12
        }
    );
    let old = [
        "marker.format-version.000001.001",
        "marker.manifest.000001.MANIFEST-000002",
        "CURRENT",
    ];
    assert_eq!(located(&old, current).unwrap().name, "MANIFEST-000005");
    // A placeholder CURRENT is not trusted over a marker, and without one
    // names nothing.
    let no_format = ["marker.manifest.000004.MANIFEST-000008", "CURRENT"];
    assert_eq!(
        located(&no_format, Some(b"MANIFEST-000000\n"))
            .unwrap()
            .name,
        "MANIFEST-000008"
    );
    let error = located(&["CURRENT"], Some(b"MANIFEST-000000\n")).unwrap_err();
    assert!(error.1.contains("placeholder"), "{error:?}");
    // Pebble opens the file of the number its marker names.
    let short = [
        "marker.format-version.000002.003",
        "marker.manifest.000002.MANIFEST-7",
    ];
    assert_eq!(located(&short, None).unwrap().name, "MANIFEST-000007");
}

#[test]
fn markers_pebble_refuses_are_errors_naming_the_file() {
    let error = |names: &[&str]| located(names, None).unwrap_err();
    // Every `marker.` file must parse.
    for bad in [
        "marker.manifest",
        "marker.manifest.12",
        "marker.manifest.x1.MANIFEST-000001",
        "marker.manifest.-1.MANIFEST-1",
    ] {
        assert_eq!(error(&[bad, "marker.format-version.000001.016"]).0, bad);
    }
    // Two of one iteration naming different MANIFESTs.
    let tie = [
        "marker.manifest.000002.MANIFEST-000004",
        "marker.manifest.000002.MANIFEST-000005",
        "marker.format-version.000001.016",
    ];
    assert!(error(&tie).1.contains("same iteration"));
    // Values that are no MANIFEST, no version.
    let (file, what) = error(&[
        "marker.manifest.000002.CURRENT",
        "marker.format-version.000001.016",
    ]);
    assert_eq!(file, "marker.manifest.000002.CURRENT");
    assert!(what.contains("does not name a MANIFEST"), "{what}");
    for version in ["000", "x16", ""] {
        let name = format!("marker.format-version.000001.{version}");
        assert_eq!(
            error(&[&name, "marker.manifest.000001.MANIFEST-000001"]).0,
            name
        );
    }
    // A format whose marker names the MANIFEST, and none does.
    let (file, what) = error(&["marker.format-version.000001.016", "CURRENT"]);
    assert_eq!(file, ".");
    assert!(what.contains("format major version 16"), "{what}");
    // Markers of other names are Pebble's business, not the MANIFEST's.
    let other = [
        "marker.other.000001.x",
        "marker.format-version.000001.016",
        "marker.manifest.000001.MANIFEST-000003",
    ];
    assert_eq!(located(&other, None).unwrap().name, "MANIFEST-000003");
}

#[test]
fn a_directory_is_located_from_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path();
    // No CURRENT, no marker: no database.
    std::fs::write(path.join("000005.sst"), b"").unwrap();
    assert!(locate_manifest(path).unwrap().is_none());
    std::fs::write(path.join("marker.format-version.000001.024"), b"").unwrap();
    std::fs::write(path.join("marker.manifest.000003.MANIFEST-000010"), b"").unwrap();
    // CURRENT is not read from format 2 on: a damaged one does not matter.
    std::fs::write(path.join("CURRENT"), b"garbage").unwrap();
    let live = locate_manifest(path).unwrap().unwrap();
    assert_eq!(
        (live.name.as_str(), live.pebble_format),
        ("MANIFEST-000010", Some(24))
    );
    // Below it, CURRENT is read, and its damage named with its path.
    std::fs::remove_file(path.join("marker.format-version.000001.024")).unwrap();
    let error = locate_manifest(path).unwrap_err();
    assert_eq!(error.path, path.join("CURRENT"));
    assert!(matches!(
        error.problem,
        LocateProblem::Current(CurrentProblem::NoNewline)
    ));
}

/// One physical record as Pebble writes it: legacy (types 1 to 4),
/// recyclable (5 to 8) or WAL-sync (9 to 12), the latter two with the log
/// number and, for WAL-sync, the offset synced to.
fn record(kind: u8, number: u32, payload: &[u8]) -> Vec<u8> {
    let mut typed = vec![kind];
    if kind >= 5 {
        typed.extend_from_slice(&number.to_le_bytes());
    }
    if kind >= 9 {
        typed.extend_from_slice(&1234u64.to_le_bytes());
    }
    typed.extend_from_slice(payload);
    let masked = crc32c::crc32c(&typed)
        .rotate_right(15)
        .wrapping_add(0xa282ead8);
    let mut out = masked.to_le_bytes().to_vec();
    out.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    out.extend(typed);
    out
}

/// A batch entry as Pebble encodes it: a kind, a key, a value where the
/// kind has one.
type RawEntry<'a> = (u8, &'a [u8], Option<&'a [u8]>);

/// A Pebble batch of raw entries.
fn pebble_batch(sequence: u64, count: u32, entries: &[RawEntry<'_>]) -> Vec<u8> {
    let mut out = sequence.to_le_bytes().to_vec();
    out.extend_from_slice(&count.to_le_bytes());
    for (kind, key, value) in entries {
        out.push(*kind);
        bytes(&mut out, key);
        if let Some(value) = value {
            bytes(&mut out, value);
        }
    }
    out
}

#[test]
fn pebble_batches_read_as_its_memtable_applies_them() {
    let batch = pebble_batch(
        100,
        8,
        &[
            (1, b"a", Some(b"v")),
            (3, b"log data", None),
            (0, b"b", None),
            (7, b"c", None),
            (2, b"d", Some(b"+")),
            (15, b"e", Some(b"g")),
            (21, b"r", Some(b"suffix and value")),
            (23, b"f", Some(&[5])),
            (18, b"h", None),
        ],
    );
    let mut seen = Vec::new();
    let ingests = for_each_pebble_batch_entry(&batch, |e| {
        seen.push((e.sequence, e.kind, e.key.to_vec(), e.end.to_vec()));
    });
    assert_eq!(ingests, Ok(false));
    let v = |s: &str| s.as_bytes().to_vec();
    assert_eq!(
        seen,
        [
            (100, Some(EntryKind::Value), v("a"), v("")),
            (101, Some(EntryKind::Deletion), v("b"), v("")),
            (102, Some(EntryKind::SingleDeletion), v("c"), v("")),
            (103, Some(EntryKind::Merge), v("d"), v("")),
            (104, None, v("e"), v("g")),
            // 105: the range key, which writes no point key.
            (106, Some(EntryKind::Deletion), v("f"), v("")),
            (107, Some(EntryKind::Value), v("h"), v("")),
        ]
    );
    // A count other than the entries', a kind past Pebble's, a cut: errors.
    let wrong = pebble_batch(1, 2, &[(1, b"a", Some(b"v"))]);
    assert!(for_each_pebble_batch_entry(&wrong, |_| {}).is_err());
    let unknown = pebble_batch(1, 1, &[(25, b"a", None)]);
    assert!(for_each_pebble_batch_entry(&unknown, |_| {}).is_err());
    for cut in 0..batch.len() - 1 {
        assert!(
            for_each_pebble_batch_entry(&batch[..cut], |_| {}).is_err(),
            "{cut}"
        );
    }
    // An ingest names tables: its keys are not in the batch.
    let ingest = pebble_batch(9, 2, &[(22, &[12], None), (22, &[13], None)]);
    assert_eq!(
        for_each_pebble_batch_entry(&ingest, |_| unreachable!()),
        Ok(true)
    );
}

/// A Pebble MANIFEST whose log number is 7.
fn pebble_manifest() -> Manifest {
    let mut edit = first_edit();
    tag(&mut edit, 2, &[7]);
    tag(&mut edit, 105, &[3, 10]);
    Manifest::parse(&log(&[edit])).unwrap()
}

#[test]
fn pebbles_logs_wal_sync_records_recycled_tails_and_failover_segments() {
    let manifest = pebble_manifest();
    assert!(manifest.replays_log(7) && manifest.replays_log(9) && !manifest.replays_log(6));
    let put = |seq, key: &[u8]| pebble_batch(seq, 1, &[(1, key, Some(b"v"))]);
    let entries = |memtable: &Memtable, key: &[u8]| -> Vec<u64> {
        memtable
            .get(0, key)
            .entries
            .iter()
            .map(|e| e.sequence)
            .collect()
    };
    // A WAL-sync record whole, one in fragments (types 10, 11, 12); then
    // the tail of the file's use as log 6: it ends the log.
    let long = put(11, &[b'k'; 40]);
    let segment_0 = [
        record(9, 7, &put(10, b"a")),
        record(10, 7, &long[..10]),
        record(11, 7, &long[10..30]),
        record(12, 7, &long[30..]),
        record(5, 6, &put(3, b"stale")),
        record(9, 7, &put(12, b"after the stale record")),
    ]
    .concat();
    let mut memtable = Memtable::default();
    memtable.replay(7, &segment_0, &manifest).unwrap();
    assert_eq!(entries(&memtable, b"a"), [10]);
    assert_eq!(entries(&memtable, &[b'k'; 40]), [11]);
    assert!(entries(&memtable, b"stale").is_empty());
    assert!(entries(&memtable, b"after the stale record").is_empty());
    // Read as LevelDB and RocksDB read their logs, a WAL-sync record's
    // header is not one: its checksum fails.
    let leveldb = Manifest::parse(&log(&[first_edit()])).unwrap();
    assert!(Memtable::default().replay(7, &segment_0, &leveldb).is_err());

    // The next segment of log 7 (a WAL failover) repeats batch 11: it is
    // replayed once; a batch of log data alone takes no sequence number.
    let segment_1 = [
        record(5, 7, &long),
        record(5, 7, &pebble_batch(12, 0, &[(3, b"x", None)])),
        record(5, 7, &put(12, b"b")),
    ]
    .concat();
    memtable.replay(7, &segment_1, &manifest).unwrap();
    assert_eq!(entries(&memtable, &[b'k'; 40]), [11]);
    assert_eq!(entries(&memtable, b"b"), [12]);
    // Log 8 starts afresh; its EOF trailer (log 9's number, at a record's
    // start) ends it.
    let next = [
        record(5, 8, &put(12, b"c")),
        record(5, 9, &[]),
        record(5, 8, &put(13, b"d")),
    ]
    .concat();
    memtable.replay(8, &next, &manifest).unwrap();
    assert_eq!(
        (entries(&memtable, b"c"), entries(&memtable, b"d")),
        (vec![12], vec![])
    );
    // An ingest in a log: every Get is unknown (its tables are named, not
    // held); damage ends the log, named.
    let ingest = record(9, 9, &pebble_batch(20, 1, &[(22, &[12], None)]));
    let mut damaged = record(9, 9, &put(21, b"e"));
    damaged[20] ^= 1;
    let mut memtable = Memtable::default();
    let problem = memtable.replay(9, &[ingest, damaged].concat(), &manifest);
    assert!(matches!(
        problem,
        Err(WalProblem::Record {
            what: RecordProblem::Checksum { .. },
            ..
        })
    ));
    assert!(memtable.get(0, b"z").undecidable);
}
