//! Databases as deployed (`testdata/deployed/`, and fresh ones from
//! `DEPLOYED_VECTORS`) through the command line: `verify DIR` exits 0 with
//! no MISMATCH (NOT CHECKED counted apart, a problem only with --strict),
//! `inspect DIR` lists the blob files RocksDB lists, and `probe` answers
//! each key as RocksDB's `Get` did, or more cautiously, never absent for a
//! key RocksDB found.

use std::process::Output;

use crate::run::ldbfilter;
use crate::vectors::{deployed, Deployed};

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn dir(db: &Deployed) -> &str {
    db.db.dir.to_str().unwrap()
}

#[test]
fn verify_exits_0_and_counts_what_it_cannot_check() {
    for db in deployed() {
        let out = ldbfilter(&["verify", "--json", dir(&db)], "");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{} {stderr}", db.db.name);
        let lines = json_lines(&out);
        let tables: Vec<&serde_json::Value> =
            lines.iter().filter(|l| l["type"] == "table").collect();
        assert_eq!(tables.len(), db.db.live.len(), "{}", db.db.name);
        // RocksDB 6.28 names a fixed prefix extractor without its length.
        let unknown_extractor =
            db.feature == "extractor" || db.feature.starts_with("blockbased-prefix");
        let expect = if unknown_extractor {
            "not-checked"
        } else {
            "ok"
        };
        for table in &tables {
            // optimize_filters_for_hits: the last level's tables have none.
            let none = db.feature == "hits" && table["status"] == "no-filter";
            assert!(table["status"] == expect || none, "{} {table}", db.db.name);
        }
        let summary = lines.last().unwrap();
        assert_eq!(summary["type"], "summary");
        assert_eq!(summary["problems"], 0, "{}", db.db.name);
        let not_checked = if expect == "ok" { 0 } else { tables.len() };
        assert_eq!(summary["not_checked"], not_checked, "{}", db.db.name);
        // --strict makes a filter that cannot be checked a problem.
        let strict = ldbfilter(&["verify", "--strict", dir(&db)], "");
        let code = if expect == "ok" { 0 } else { 1 };
        assert_eq!(strict.status.code(), Some(code), "{}", db.db.name);
    }
}

#[test]
fn inspect_lists_the_blob_files() {
    for db in deployed().into_iter().filter(|d| d.feature == "blob") {
        let out = ldbfilter(&["inspect", "--json", dir(&db)], "");
        assert_eq!(out.status.code(), Some(0), "{}", db.db.name);
        let lines = json_lines(&out);
        let database = lines.iter().find(|l| l["type"] == "database").unwrap();
        let listed: Vec<(String, u64, u64, u64, u64)> = database["column_families"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|family| {
                let name = family["name"].as_str().unwrap().to_string();
                family["blob_files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(move |b| {
                        let n = |f: &str| b[f].as_u64().unwrap();
                        let number = b["file"].as_str().unwrap().trim_end_matches(".blob");
                        (
                            name.clone(),
                            number.parse().unwrap(),
                            n("blobs"),
                            n("bytes"),
                            n("garbage_blobs"),
                        )
                    })
            })
            .collect();
        match db.blob_stats {
            // The engine gave the files' count and garbage bytes alone.
            Some((files, garbage)) => {
                let garbage_listed: u64 = database["column_families"][0]["blob_files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b["garbage_bytes"].as_u64().unwrap())
                    .sum();
                assert_eq!((listed.len() as u64, garbage_listed), (files, garbage));
            }
            None => {
                let expected: Vec<(String, u64, u64, u64, u64)> = db
                    .blobs
                    .iter()
                    .map(|b| {
                        (
                            b.family.clone(),
                            b.number,
                            b.total.0,
                            b.total.1,
                            b.garbage.0,
                        )
                    })
                    .collect();
                assert_eq!(listed, expected, "{}", db.db.name);
            }
        }
        // A blob file gone is a problem of the database, exit 1.
        let copy = tempfile::tempdir().unwrap();
        for entry in std::fs::read_dir(&db.db.dir).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, copy.path().join(path.file_name().unwrap())).unwrap();
        }
        let gone = copy.path().join(format!("{:06}.blob", listed[0].1));
        std::fs::remove_file(&gone).unwrap();
        let out = ldbfilter(&["verify", copy.path().to_str().unwrap()], "");
        assert_eq!(out.status.code(), Some(1), "{}", db.db.name);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("blob file") && stderr.contains("missing"),
            "{stderr}"
        );
    }
}

/// `probe DIR` against RocksDB's `Get` key by key: where this crate knows
/// the comparator and the filters, the same tables skipped and `found`
/// exactly for the keys RocksDB found (deletions of every kind, merge
/// operands, optimize_filters_for_hits, the write-ahead log); under a
/// custom comparator or extractor, fewer tables skipped, and no key RocksDB
/// found ever `not-found`.
#[test]
fn probe_answers_as_rocksdb_or_more_cautiously() {
    for db in deployed() {
        let families: std::collections::BTreeSet<&str> =
            db.db.gets.iter().map(|g| g.family.as_str()).collect();
        // The outcome is RocksDB's but under a custom comparator; the tables
        // skipped too, but where the filter cannot be judged (a custom
        // extractor; block-based filters, which RocksDB 7.0 and later ignore
        // and 6.x reads).
        let exact = db.feature != "comparator";
        let same_skips =
            exact && db.feature != "extractor" && !db.feature.starts_with("blockbased");
        let mut skipped = 0;
        for family in families {
            let gets: Vec<_> = db.db.gets.iter().filter(|g| g.family == family).collect();
            let keys: String = gets.iter().map(|g| format!("{}\n", hex(&g.key))).collect();
            let args = ["probe", "--json", "--column-family", family, dir(&db)];
            let out = ldbfilter(&args, &keys);
            assert_eq!(out.status.code(), Some(0), "{}", db.db.name);
            let answers = json_lines(&out);
            assert_eq!(answers.len(), gets.len());
            for (get, answer) in gets.iter().zip(&answers) {
                let what = format!("{} {family} {answer}", db.db.name);
                assert_eq!(answer["key_hex"], hex(&get.key));
                let ours = answer["skipped_by_filter"].as_u64().unwrap();
                let theirs = get.useful.unwrap();
                match same_skips {
                    true => assert_eq!(ours, theirs, "{what}"),
                    false => assert!(ours <= theirs || !exact, "{what}"),
                }
                skipped += ours;
                let outcome = answer["outcome"].as_str().unwrap();
                match exact {
                    true => assert_eq!(outcome == "found", get.found, "{what}"),
                    false if get.found => {
                        assert!(matches!(outcome, "found" | "unknown"), "{what}")
                    }
                    false => {}
                }
            }
        }
        assert!(skipped > 0 || !same_skips && exact, "{}", db.db.name);
    }
}

/// `probe TABLE` of each key a table of the custom comparator holds: never
/// absent, never past the last key; no data block is sought (offset null).
#[test]
fn probe_of_a_table_of_an_unknown_comparator_never_answers_absent_for_its_keys() {
    for db in deployed().into_iter().filter(|d| d.feature == "comparator") {
        for row in &db.db.live {
            let path = db.db.dir.join(format!("{:06}.sst", row.number));
            let bytes = std::fs::read(&path).unwrap();
            let sst = leveldb_filter::rocksdb::Table::open(&bytes).unwrap();
            let mut keys = String::new();
            sst.for_each_key(|key, _| keys.push_str(&format!("{}\n", hex(key))))
                .unwrap();
            let out = ldbfilter(&["probe", "--json", path.to_str().unwrap()], &keys);
            assert_eq!(out.status.code(), Some(0));
            let answers = json_lines(&out);
            assert_eq!(answers.len(), keys.lines().count());
            for answer in answers {
                assert_eq!(answer["answer"], "may-match", "{} {answer}", db.db.name);
                assert!(answer["offset"].is_null(), "{answer}");
            }
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("my.ReverseSuffix"), "{stderr}");
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
