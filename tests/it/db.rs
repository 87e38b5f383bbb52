//! Database directories the real engines wrote: the MANIFEST replayed gives
//! the live tables the engine lists (LevelDB's `leveldb.sstables` property,
//! RocksDB's `GetLiveFilesMetaData`, Pebble's `DB.SSTables`), with their
//! levels, sizes and key ranges; and for RocksDB and Pebble, each `Get`
//! walked through the write-ahead logs and the tables answers as the
//! engine's `Get` did.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use leveldb_filter::db::{
    locate_manifest, pebble_step_without_filter, Engine, GetWalk, LiveTable, Manifest, Memtable,
    Outcome, PebbleGet, TableStep,
};
use leveldb_filter::format::TableFile;
use leveldb_filter::AnyTable;

use crate::vectors::{databases, GoldenDb, LiveRow};

/// The database's MANIFEST, found as its engine finds it and read as its
/// directory says.
fn manifest_of(dir: &Path) -> Manifest {
    let located = locate_manifest(dir).unwrap().expect("a database");
    let manifest = Manifest::parse(&std::fs::read(dir.join(&located.name)).unwrap()).unwrap();
    let options = located
        .options_file
        .as_ref()
        .map(|name| std::fs::read_to_string(dir.join(name)).unwrap());
    manifest.in_directory(&located, options.as_deref()).unwrap()
}

#[test]
fn the_manifest_lists_the_tables_the_engine_lists() {
    let databases = databases();
    assert!(
        databases.len() >= 6,
        "LevelDB's, RocksDB's and Pebble's databases"
    );
    for db in databases {
        let manifest = manifest_of(&db.dir);
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
                    backing: t.backing().map(|b| b.number),
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
        // or more in its order. (Pebble's hold keys in their logs too.)
        let memtable = memtable(&db.dir, &manifest);
        for get in &db.gets {
            let family = manifest.column_family(&get.family).unwrap();
            let order = manifest.get_order(family, &get.key).unwrap();
            let skipped = get.useful.unwrap_or(0) as usize;
            let in_memtable = !memtable.get(family, &get.key).entries.is_empty();
            assert!(
                order.len() >= skipped + usize::from(get.found && !in_memtable),
                "{}: {:?}",
                db.name,
                get.key
            );
            let deeper: Vec<u32> = order.iter().map(|t| t.level).filter(|&l| l > 0).collect();
            assert!(deeper.windows(2).all(|w| w[0] < w[1]), "one table a level");
        }
    }
}

/// The write-ahead logs recovery replays, replayed.
fn memtable(dir: &Path, manifest: &Manifest) -> Memtable {
    let mut logs: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            Some((name.strip_suffix(".log")?.parse().ok()?, e.path()))
        })
        .filter(|(number, _)| manifest.replays_log(*number))
        .collect();
    logs.sort();
    let mut memtable = Memtable::default();
    for (number, path) in logs {
        memtable
            .replay(number, &std::fs::read(path).unwrap(), manifest)
            .unwrap();
    }
    memtable
}

/// What the `Get` of `key` in column family `family` returns: the
/// memtables, then each table of the Get order, as the engine reads them;
/// and how many tables' filters ruled the key out.
fn get(
    db: &GoldenDb,
    manifest: &Manifest,
    memtable: &Memtable,
    family: u32,
    key: &[u8],
) -> (Outcome, u64) {
    let mut walk = GetWalk::new(manifest.engine());
    let answer = memtable.get(family, key);
    if !walk.step(&TableStep::Read(answer.entries), answer.covering) {
        return (walk.outcome(), 0);
    }
    let mut absent = 0;
    for table in manifest.get_order(family, key).unwrap() {
        let (step, covering) = table_step(db, manifest, table, key);
        absent += u64::from(step == TableStep::Absent);
        if !walk.step(&step, covering) {
            break;
        }
    }
    (walk.outcome(), absent)
}

/// One table's step of a `Get`: its file (a virtual table's backing's) at
/// the size the MANIFEST records, opened as the engine opens it.
fn table_step(
    db: &GoldenDb,
    manifest: &Manifest,
    table: &LiveTable,
    key: &[u8],
) -> (TableStep, u64) {
    let names = table.file_names(manifest.engine());
    let path = names
        .iter()
        .map(|n| db.dir.join(n))
        .find(|p| p.is_file())
        .unwrap();
    let file = TableFile::open(&path).unwrap();
    assert!(file.len() >= table.file_size(), "{}", path.display());
    let file = file.prefix(table.file_size());
    let filter = manifest.asks_filter(table);
    let order = manifest.key_order(table.column_family).ok();
    match AnyTable::open_for_lookups(&file).unwrap() {
        AnyTable::RocksDb(t) => t.get_step(key, !filter).unwrap(),
        AnyTable::Pebble(t) if filter => table.virtual_step(order, key, t.get_step(key).unwrap()),
        AnyTable::Pebble(t) => {
            let step = pebble_step_without_filter(&t, key).unwrap();
            table.virtual_step(order, key, step)
        }
        AnyTable::LevelDb(_) => panic!("{}: a LevelDB table", path.display()),
    }
}

/// RocksDB's and Pebble's `Get`s, walked here through the logs and tables
/// (their tables ask their filters themselves): found exactly where the
/// engine found the key, and in Pebble's, as many tables' filters ruling
/// the key out as Pebble's `Filter.Hits` counted (v1 asks the filter of the
/// first table at or past the key in each level and sublevel, v2 of the
/// tables holding it; neither of a level-6 table's).
#[test]
fn gets_walked_through_logs_and_tables_answer_as_the_engine() {
    let mut walked = BTreeMap::new();
    for db in databases() {
        let manifest = manifest_of(&db.dir);
        if manifest.engine() == Engine::LevelDb {
            continue;
        }
        let memtable = memtable(&db.dir, &manifest);
        let mut outcomes = BTreeMap::new();
        let mut in_memtable = 0;
        for row in &db.gets {
            let family = manifest.column_family(&row.family).unwrap();
            let (outcome, absent) = get(&db, &manifest, &memtable, family, &row.key);
            assert_eq!(
                outcome == Outcome::Found,
                row.found,
                "{} {:02x?}: {outcome}",
                db.name,
                row.key
            );
            if let (Engine::Pebble, Some(useful)) = (manifest.engine(), row.useful) {
                assert_eq!(absent, useful, "{} {:02x?}: filters", db.name, row.key);
            }
            in_memtable += usize::from(!memtable.get(family, &row.key).entries.is_empty());
            *outcomes.entry(outcome.name()).or_insert(0) += 1;
        }
        let release = manifest.pebble_get();
        walked.insert(db.name.clone(), (release, outcomes, in_memtable));
    }
    let pebble: Vec<_> = walked.values().filter(|(r, ..)| r.is_some()).collect();
    let releases: BTreeSet<_> = pebble.iter().map(|(r, ..)| format!("{r:?}")).collect();
    assert_eq!(releases.len(), 2, "v1's and v2's Gets: {walked:?}");
    // Each Pebble database's Gets meet values and deletions; one's, keys
    // in its log.
    for (_, outcomes, _) in &pebble {
        for outcome in ["found", "deleted", "not-found"] {
            assert!(outcomes.get(outcome).is_some_and(|&n| n > 0), "{walked:?}");
        }
    }
    assert!(pebble.iter().any(|(.., logged)| *logged > 0), "{walked:?}");
}

/// Pebble's databases as their directories name them: the MANIFEST a
/// marker names (the highest iteration; an older MANIFEST is still there),
/// or CURRENT at the most compatible format; virtual tables read from
/// their backing tables' files; the release whose `Get` is walked.
#[test]
fn pebble_directories_name_their_manifest_and_virtual_tables_their_backing() {
    let mut virtual_tables = 0;
    let mut formats = BTreeSet::new();
    for db in databases() {
        let located = locate_manifest(&db.dir).unwrap().unwrap();
        let manifest = manifest_of(&db.dir);
        if manifest.engine() != Engine::Pebble {
            assert!(!located.pebble_markers, "{}", db.name);
            continue;
        }
        formats.insert(located.pebble_format);
        // v1 writes formats up to 16, v2 from 13 (its OPTIONS tell).
        let release = match located.pebble_format {
            Some(17..) => PebbleGet::V2,
            Some(13..)
                if std::fs::read_to_string(db.dir.join(located.options_file.unwrap()))
                    .unwrap()
                    .contains("key_schema=") =>
            {
                PebbleGet::V2
            }
            _ => PebbleGet::V1,
        };
        assert_eq!(manifest.pebble_get(), Some(release), "{}", db.name);
        for table in manifest.tables() {
            let Some(backing) = table.backing() else {
                continue;
            };
            virtual_tables += 1;
            let path = db.dir.join(format!("{:06}.sst", backing.number));
            let size = std::fs::metadata(&path).unwrap().len();
            assert_eq!(size, backing.size, "{}", path.display());
            // Its share of the backing table's bytes.
            assert!(table.size < backing.size, "{}", db.name);
        }
    }
    assert!(virtual_tables >= 8, "{virtual_tables} virtual tables");
    // FormatMostCompatible (no marker: CURRENT), v1's newest and v2's.
    assert!(
        formats.contains(&None) && formats.contains(&Some(16)) && formats.contains(&Some(24)),
        "{formats:?}"
    );
}
