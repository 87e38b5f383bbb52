//! Pebble's own tables (`testdata/pebble/`, or the directory
//! `PEBBLE_TABLES` names): written by Pebble v1.1.5 and v2.1.7 in every
//! table format, with Pebble's filter answer for each probe key. Each is
//! read as Pebble wrote it, its filter rebuilt byte for byte (or not
//! checked, under a comparer whose Split only its code knows), and each
//! key answered as Pebble's reader answers it.

use crate::vectors::pebble_tables;
use leveldb_filter::format::{EntryKind, TableStep};
use leveldb_filter::rocksdb::{FilterCheck, LegacyBloomBuilder, Verdict};
use leveldb_filter::{AnyTable, TableFormat};

/// Every table opens as Pebble's, in the format Pebble wrote, with the
/// keys, blocks and index Pebble reported.
#[test]
fn pebble_tables_read_as_pebble_wrote_them() {
    for t in pebble_tables() {
        let name = &t.name;
        let table = match AnyTable::open(&t.bytes) {
            Ok(AnyTable::Pebble(table)) => table,
            Ok(other) => panic!("{name}: read as {:?}", other.format()),
            Err(e) => panic!("{name}: {e}"),
        };
        let format = TableFormat::of(&t.bytes).unwrap();
        assert_eq!(
            format,
            TableFormat::Pebble {
                format: table.format()
            },
            "{name}"
        );
        assert_eq!(table.format().to_string(), t.spec["table_format"], "{name}");
        let walk = table.walk().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(walk.keys, t.spec["point_keys"].as_u64().unwrap(), "{name}");
        assert_eq!(table.props().point_keys(), Some(walk.keys), "{name}");
        assert_eq!(
            walk.data_blocks,
            t.spec["data_blocks"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            table.props().two_level_index(),
            t.spec["two_level_index"].as_bool().unwrap(),
            "{name}"
        );
        assert_eq!(
            table.props().comparer().as_deref(),
            t.spec["comparer"].as_str(),
            "{name}"
        );
    }
}

/// Each filter rebuilt from the table's keys, byte for byte, at the bits
/// per key Pebble was given; NOT CHECKED only where neither the comparer's
/// Split nor the blocks' stored prefixes give the filter's keys.
#[test]
fn pebble_filters_rebuild_byte_for_byte() {
    let (mut built, mut not_checked) = (0, 0);
    for t in pebble_tables() {
        let name = &t.name;
        let AnyTable::Pebble(table) = AnyTable::open(&t.bytes).unwrap() else {
            panic!("{name}: not Pebble's")
        };
        let verdict = table
            .check_filter()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let bpk = t.spec["bits_per_key"].as_f64().unwrap_or(0.0);
        let known = table.comparer().is_some() || table.format().columnar();
        match verdict {
            Verdict::NoFilter => assert!(t.spec["filter_block_length"].is_null(), "{name}"),
            Verdict::NotChecked { .. } => {
                assert!(!known, "{name}: a comparer or schema known here");
                not_checked += 1;
            }
            Verdict::Filters(reports) => {
                assert!(known, "{name}: checked under an unknown comparer");
                let [report] = &reports[..] else {
                    panic!("{name}: {reports:?}")
                };
                match &report.check {
                    FilterCheck::Built {
                        bits_per_key: (lo, hi),
                    } => {
                        assert!(
                            *lo <= bpk && bpk <= *hi,
                            "{name}: {lo}..{hi}, built at {bpk}"
                        );
                    }
                    FilterCheck::Rebuilt => {
                        assert_eq!(
                            report.bytes, 0,
                            "{name}: only an empty filter has no bits per key"
                        );
                        assert_eq!(t.spec["point_keys"], 0, "{name}");
                    }
                    other => panic!("{name}: {other:?}"),
                }
                built += 1;
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(
        built >= 30 && not_checked >= 4,
        "{built} built, {not_checked} not checked"
    );
}

/// Each probe key answered as Pebble's filter answered it, and no key a
/// table holds answered absent; under each comparer this crate knows
/// (bytewise, CockroachDB's, testkeys), a `Get` finds every written key's
/// entries in the block the index points to, and none of a key not
/// written.
#[test]
fn pebble_answers_match_pebbles() {
    let (mut compared, mut found) = (0, std::collections::BTreeMap::new());
    for t in pebble_tables() {
        let name = &t.name;
        let AnyTable::Pebble(table) = AnyTable::open(&t.bytes).unwrap() else {
            panic!("{name}: not Pebble's")
        };
        for (key, written, may_match) in &t.answers {
            let ours = table.filter_answer(key);
            match ours {
                Some(answer) => {
                    assert_eq!(answer.may_match(), *may_match, "{name}: key {key:02x?}");
                    compared += 1;
                }
                // No filter, or a Split only its comparer's code knows.
                None => assert!(
                    table.filter().is_none() || table.comparer().is_none(),
                    "{name}"
                ),
            }
            let (step, _) = table
                .get_step(key)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            if *written {
                assert_ne!(
                    step,
                    TableStep::Absent,
                    "{name}: written key {key:02x?} absent"
                );
            }
            if let (Some(_), false, TableStep::Read(entries)) = (table.comparer(), written, &step) {
                assert!(entries.is_empty(), "{name}: unwritten {key:02x?} found");
            }
            if table.comparer().is_some() && *written {
                let TableStep::Read(entries) = &step else {
                    panic!("{name}: key {key:02x?}: {step:?}")
                };
                *found.entry(t.spec["comparer"].to_string()).or_insert(0) += 1;
                assert!(
                    !entries.is_empty(),
                    "{name}: key {key:02x?} not in its block"
                );
                assert!(
                    entries
                        .iter()
                        .all(|e| !matches!(e.kind, EntryKind::Other(_))),
                    "{name}: {entries:?}"
                );
            }
        }
    }
    assert!(compared > 5000, "{compared} answers compared");
    assert_eq!(
        found.len(),
        3,
        "written keys found under each comparer: {found:?}"
    );
}

/// `LegacyBloomBuilder::pebble` builds Pebble's filter bytes from the
/// tables' keys' prefixes, at the bits per key Pebble was given: equal to
/// the filter Pebble's writer put in every table that has one and keys.
#[test]
fn the_builder_writes_pebbles_filters() {
    let mut built = 0;
    for t in pebble_tables() {
        let name = &t.name;
        let AnyTable::Pebble(table) = AnyTable::open(&t.bytes).unwrap() else {
            panic!("{name}: not Pebble's")
        };
        let (Some((_, Ok(stored))), Some(comparer)) = (table.filter(), table.comparer()) else {
            continue;
        };
        if stored.is_empty() {
            continue;
        }
        let mut prefixes = Vec::new();
        table
            .for_each_key(|key, _| prefixes.push(comparer.prefix(key).to_vec()))
            .unwrap();
        let bpk = t.spec["bits_per_key"].as_u64().unwrap() as u32;
        let ours = LegacyBloomBuilder::pebble(bpk).build(prefixes.iter().map(|p| &p[..]));
        assert!(
            ours == stored,
            "{name}: the builder's filter differs from Pebble's"
        );
        built += 1;
    }
    assert!(built >= 30, "{built} filters built");
}

mod crafted;
