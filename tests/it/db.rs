//! Database directories the real engines wrote: the MANIFEST replayed gives
//! the live tables the engine lists (LevelDB's `leveldb.sstables` property,
//! RocksDB's `GetLiveFilesMetaData`), with their levels, sizes and key
//! ranges.

use std::collections::{BTreeMap, BTreeSet};

use leveldb_filter::db::{current_manifest, Manifest};

use crate::vectors::{databases, LiveRow};

#[test]
fn the_manifest_lists_the_tables_the_engine_lists() {
    let databases = databases();
    assert!(databases.len() >= 3, "LevelDB's and RocksDB's databases");
    for db in databases {
        let current = std::fs::read(db.dir.join("CURRENT")).unwrap();
        let name = current_manifest(&current).unwrap();
        let manifest = Manifest::parse(&std::fs::read(db.dir.join(name)).unwrap()).unwrap();
        let families = manifest.column_families();
        let ours: BTreeMap<u64, LiveRow> = manifest
            .tables()
            .iter()
            .map(|t| {
                let row = LiveRow {
                    family: families[&t.column_family].clone(),
                    level: t.level,
                    number: t.number,
                    size: t.size,
                    range: (
                        t.smallest_user_key().to_vec(),
                        t.largest_user_key().to_vec(),
                    ),
                };
                (t.number, row)
            })
            .collect();
        let theirs: BTreeMap<u64, LiveRow> = db
            .live
            .iter()
            .map(|row| (row.number, row.clone()))
            .collect();
        assert_eq!(ours, theirs, "{}", db.name);
        // The checked-in databases hold tables at three levels or more. A
        // fresh one's levels are what the engine's background work made
        // of the same writes (RocksDB 9.8.4's and 11.12's dynamic level
        // sizes may skip level 5): level 0 and a deeper one at least.
        let levels: BTreeSet<u32> = ours.values().map(|t| t.level).collect();
        let least = if db.checked_in { 3 } else { 2 };
        assert!(
            levels.len() >= least && levels.contains(&0),
            "{}: tables at {least} levels or more, level 0 among them",
            db.name
        );
        // A key the engine's `Get` found lies in the range of a table of
        // its Get order, which holds each deeper level's one candidate at
        // most.
        // And a RocksDB `Get` whose filters skipped n tables had n tables
        // or more in its order.
        for get in &db.gets {
            let family = manifest.column_family(&get.family).unwrap();
            let order = manifest.get_order(family, &get.key).unwrap();
            let skipped = get.useful.unwrap_or(0) as usize;
            assert!(
                order.len() >= skipped + usize::from(get.found),
                "{}: {:?}",
                db.name,
                get.key
            );
            let deeper: Vec<u32> = order.iter().map(|t| t.level).filter(|&l| l > 0).collect();
            assert!(deeper.windows(2).all(|w| w[0] < w[1]), "one table a level");
        }
    }
}
