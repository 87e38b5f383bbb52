//! Databases written with features real deployments turn on
//! (`testdata/deployed/`, and fresh ones from `DEPLOYED_VECTORS`): blob
//! files, a custom comparator over partitioned filters, user-defined
//! timestamps, a custom prefix extractor. The MANIFEST lists what the
//! engine lists; every table's filter checks out (or is said not to be
//! checkable); no key a table holds is ever answered absent.

use std::collections::BTreeMap;

use leveldb_filter::db::{current_manifest, KeyOrder, Manifest};
use leveldb_filter::rocksdb::{Lookup, Table, Verdict};

use crate::vectors::{deployed, BlobRow, Deployed};

fn manifest(db: &Deployed) -> Manifest {
    let dir = &db.db.dir;
    let current = std::fs::read(dir.join("CURRENT")).unwrap();
    let name = current_manifest(&current).unwrap();
    Manifest::parse(&std::fs::read(dir.join(name)).unwrap()).unwrap()
}

/// Each live table's file, read at the size the MANIFEST records.
fn tables(db: &Deployed) -> Vec<(u64, Vec<u8>)> {
    let manifest = manifest(db);
    manifest
        .tables()
        .iter()
        .map(|t| {
            let bytes = std::fs::read(db.db.dir.join(format!("{:06}.sst", t.number))).unwrap();
            assert_eq!(bytes.len() as u64, t.size, "{} {}", db.db.name, t.number);
            (t.number, bytes)
        })
        .collect()
}

fn of(feature: &str) -> Vec<Deployed> {
    let found: Vec<Deployed> = deployed()
        .into_iter()
        .filter(|d| d.feature == feature)
        .collect();
    assert!(!found.is_empty(), "a {feature} database");
    found
}

#[test]
fn the_manifest_lists_the_tables_and_blob_files_the_engine_lists() {
    let all = deployed();
    assert!(all.len() >= 8, "the eight features");
    // RocksDB 6.28's block-based filters, at every format_version.
    let block_based = all
        .iter()
        .filter(|d| d.feature.starts_with("blockbased-fv"));
    assert!(block_based.count() >= 6);
    for db in all {
        let manifest = manifest(&db);
        let families = manifest.column_families();
        let mut ours: Vec<(String, u32, u64, u64)> = manifest
            .tables()
            .iter()
            .map(|t| {
                (
                    families[&t.column_family].clone(),
                    t.level,
                    t.number,
                    t.size,
                )
            })
            .collect();
        let mut theirs: Vec<(String, u32, u64, u64)> = db
            .db
            .live
            .iter()
            .map(|r| (r.family.clone(), r.level, r.number, r.size))
            .collect();
        ours.sort();
        theirs.sort();
        assert_eq!(ours, theirs, "{}", db.db.name);
        let blobs: Vec<BlobRow> = manifest
            .blob_files()
            .iter()
            .map(|b| BlobRow {
                family: families[&b.column_family].clone(),
                number: b.number,
                total: b.total,
                garbage: b.garbage,
            })
            .collect();
        match db.blob_stats {
            // The engine gave the files' count and garbage bytes alone.
            Some((files, garbage)) => {
                let ours = (blobs.len() as u64, blobs.iter().map(|b| b.garbage.1).sum());
                assert_eq!(ours, (files, garbage), "{}", db.db.name);
            }
            None => assert_eq!(blobs, db.blobs, "{}", db.db.name),
        }
        // The blob databases' edits drop blobs as garbage: some file holds some.
        if db.feature == "blob" {
            assert!(blobs.len() > 1, "{}", db.db.name);
            assert!(blobs.iter().any(|b| b.garbage.0 > 0), "{}", db.db.name);
        }
    }
}

#[test]
fn every_filter_checks_out_or_is_said_not_checkable() {
    for db in deployed() {
        for (number, bytes) in tables(&db) {
            let sst = Table::open(&bytes).unwrap();
            let what = format!("{} {number}", db.db.name);
            let stats = sst.for_each_key(|_, _| {}).unwrap();
            assert_eq!(stats.out_of_order, None, "{what}");
            // RocksDB 6.28 names a fixed prefix extractor without its length.
            let unknown_extractor =
                db.feature == "extractor" || db.feature.starts_with("blockbased-prefix");
            match (unknown_extractor, sst.check_filter().unwrap()) {
                (true, Verdict::NotChecked { .. }) => {}
                (true, verdict) => panic!("{what}: {verdict:?}"),
                // Compactions to the last level write no filter there.
                (_, Verdict::NoFilter) if db.feature == "hits" => {
                    assert!(sst.filter_name().is_none(), "{what}")
                }
                (_, verdict @ Verdict::Filters(_)) => assert!(verdict.ok(), "{what}: {verdict:?}"),
                (_, verdict) => panic!("{what}: {verdict:?}"),
            }
        }
    }
}

#[test]
fn tables_know_their_order_and_timestamps() {
    for db in deployed() {
        for (number, bytes) in tables(&db) {
            let sst = Table::open(&bytes).unwrap();
            let (order, timestamp) = match db.feature.as_str() {
                "comparator" => (None, 0),
                "timestamps" => (Some(KeyOrder::BytewiseU64Ts), 8),
                _ => (Some(KeyOrder::Bytewise), 0),
            };
            assert_eq!(sst.key_order(), order, "{} {number}", db.db.name);
            assert_eq!(sst.timestamp_size(), timestamp, "{} {number}", db.db.name);
        }
    }
}

/// Every key each table holds (without its timestamp), looked up in that
/// table: never past its last key, never ruled out by its filter. In the
/// table of a comparator this crate does not know, no block is sought.
#[test]
fn a_key_a_table_holds_is_never_answered_absent() {
    for db in deployed() {
        let timestamp = if db.feature == "timestamps" { 8 } else { 0 };
        let mut looked_up = 0;
        for (number, bytes) in tables(&db) {
            let sst = Table::open(&bytes).unwrap();
            let mut keys = Vec::new();
            sst.for_each_key(|key, _| keys.push(key[..key.len() - timestamp].to_vec()))
                .unwrap();
            for key in keys {
                let what = format!("{} {number} {key:?}", db.db.name);
                match sst.lookup(&key).unwrap() {
                    Lookup::Block { handle, may_match } => {
                        assert!(may_match, "{what}");
                        assert!(sst.block_holds_key(handle, &key).unwrap(), "{what}");
                        assert_ne!(db.feature, "comparator", "{what}");
                    }
                    Lookup::Unordered { may_match } => {
                        assert!(may_match, "{what}");
                        assert_eq!(db.feature, "comparator", "{what}");
                    }
                    other => panic!("{what}: {other:?}"),
                }
                looked_up += 1;
            }
        }
        assert!(looked_up > 500, "{}", db.db.name);
    }
}

/// Under user-defined timestamps the MANIFEST's key ranges hold timestamps
/// and a `Get` names keys without: a key RocksDB's `Get` found lies in the
/// range of a table of the Get order.
#[test]
fn gets_by_timestamped_key_ranges() {
    for db in of("timestamps") {
        let manifest = manifest(&db);
        let mut found = BTreeMap::new();
        for get in db.db.gets.iter().filter(|g| g.found) {
            let family = manifest.column_family(&get.family).unwrap();
            let order = manifest.get_order(family, &get.key).unwrap();
            assert!(!order.is_empty(), "{} {:?}", db.db.name, get.key);
            *found.entry(get.family.clone()).or_insert(0) += 1;
        }
        assert_eq!(found.len(), 2, "both families found keys");
    }
}
