//! Database directories through the command line: the live tables from the
//! MANIFEST, `Get` walks checked against what the real engines' `Get`s did,
//! the JSON stream, exit statuses, and damage of each kind named.

use std::path::Path;
use std::process::Output;

use crate::run::ldbfilter;
use crate::vectors::{databases, GoldenDb};

fn run(args: &[&str]) -> Output {
    ldbfilter(args, "")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn verify_a_database_checks_its_live_tables_and_sums_up() {
    for db in databases() {
        let dir = db.dir.to_str().unwrap();
        let out = run(&["verify", dir]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            db.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), db.live.len() + 1, "{text}");
        assert!(
            lines[..db.live.len()]
                .iter()
                .all(|l| l.contains(": OK ") && l.contains("(level ")),
            "{text}"
        );
        let want = format!(
            "summary: {n} tables: {n} well, 0 with problems, 0 unreadable",
            n = db.live.len()
        );
        assert!(lines[db.live.len()].starts_with(&want), "{text}");

        let out = run(&["verify", "--json", dir]);
        let objects = json_lines(&out);
        let (tables, rest) = objects.split_at(db.live.len());
        assert!(tables
            .iter()
            .all(|t| t["type"] == "table" && t["status"] == "ok" && t["level"].is_u64()));
        let numbers: std::collections::BTreeSet<u64> = tables
            .iter()
            .map(|t| t["file_number"].as_u64().unwrap())
            .collect();
        let live: std::collections::BTreeSet<u64> = db.live.iter().map(|t| t.number).collect();
        assert_eq!(numbers, live, "{}", db.name);
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0]["type"], "summary");
        assert_eq!(rest[0]["exit_code"], 0);
        assert_eq!(rest[0]["tables"].as_u64(), Some(db.live.len() as u64));
    }
}

/// `probe DIR` walks the live tables as `Get` does: every key the engine's
/// `Get` found is found, and in RocksDB the tables skipped by their filters
/// are the ones RocksDB's own ticker counted for that `Get`.
#[test]
fn probe_walks_tables_as_the_engines_get_does() {
    for db in databases() {
        let families: std::collections::BTreeSet<&str> =
            db.gets.iter().map(|g| g.family.as_str()).collect();
        for family in families {
            let gets: Vec<_> = db.gets.iter().filter(|g| g.family == family).collect();
            let keys: String = gets.iter().map(|g| format!("{}\n", hex(&g.key))).collect();
            let out = ldbfilter(
                &[
                    "probe",
                    "--json",
                    "--column-family",
                    family,
                    db.dir.to_str().unwrap(),
                ],
                &keys,
            );
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let answers = json_lines(&out);
            assert_eq!(answers.len(), gets.len());
            let mut counted = 0;
            for (get, answer) in gets.iter().zip(&answers) {
                assert_eq!(answer["key_hex"], hex(&get.key));
                // Found exactly when the engine's `Get` returned a value: a
                // deleted key's walk ends at its deletion.
                let outcome = answer["outcome"].as_str().unwrap();
                assert_eq!(
                    outcome == "found",
                    get.found,
                    "{} {family} {answer}",
                    db.name
                );
                assert!(
                    matches!(outcome, "found" | "deleted" | "range-deleted" | "not-found"),
                    "{} {family} {answer}",
                    db.name
                );
                if let Some(useful) = get.useful {
                    assert_eq!(
                        answer["skipped_by_filter"].as_u64(),
                        Some(useful),
                        "{} {family} {answer}",
                        db.name
                    );
                    counted += useful;
                }
            }
            if gets.iter().any(|g| g.useful.is_some()) {
                assert!(
                    counted > 0,
                    "{}: some Get skipped a table by its filter",
                    db.name
                );
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A copy of a golden database, to damage.
fn copy(db: &GoldenDb) -> tempfile::TempDir {
    let to = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&db.dir).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.path().join(path.file_name().unwrap())).unwrap();
    }
    to
}

fn table_file(dir: &Path, number: u64) -> std::path::PathBuf {
    ["ldb", "sst"]
        .iter()
        .map(|ext| dir.join(format!("{number:06}.{ext}")))
        .find(|p| p.exists())
        .unwrap()
}

#[test]
fn damage_is_named_with_what_it_means_and_exit_1() {
    for db in databases() {
        let copy = copy(&db);
        let dir = copy.path();
        // Two tables of their own files (Pebble's virtual tables share
        // their backing's).
        let mut own = db.live.iter().filter(|t| t.backing.is_none());
        let (victim, gone) = (own.next().unwrap().number, own.next().unwrap().number);
        // A flipped byte in the first data block: its checksum fails.
        let path = table_file(dir, victim);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[10] ^= 0x40;
        std::fs::write(&path, bytes).unwrap();
        std::fs::remove_file(table_file(dir, gone)).unwrap();
        let out = run(&["verify", dir.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("{gone:06}."))
                && stderr.contains("missing: the MANIFEST lists it live"),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!("{victim:06}."))
                && stderr.contains("checksum mismatch")
                && stderr.contains("the bytes are damaged"),
            "{stderr}"
        );
        let text = stdout(&out);
        let summary = text.lines().last().unwrap();
        let well = db.live.len() - 2;
        // The missing table is a problem of the database, not a table
        // worked on.
        let want = format!(
            "summary: {} tables: {well} well, 1 with problems, 0 unreadable; 1 problems of the databases themselves",
            db.live.len() - 1
        );
        assert!(summary.starts_with(&want), "{summary}");
        assert!(summary.ends_with("exit 1"), "{summary}");
        // In JSON, the errors are objects of the stream.
        let objects = json_lines(&run(&["verify", "--json", dir.to_str().unwrap()]));
        let errors: Vec<_> = objects.iter().filter(|o| o["type"] == "error").collect();
        assert_eq!(errors.len(), 2, "{objects:?}");
        assert!(errors
            .iter()
            .all(|e| e["problem"] == "damaged" && e["hint"].is_string()));
        assert_eq!(objects.last().unwrap()["exit_code"], 1);

        // A MANIFEST with a changed byte: said, and every table file
        // present checked instead.
        let located = leveldb_filter::db::locate_manifest(dir).unwrap().unwrap();
        let manifest = dir.join(located.name);
        let mut bytes = std::fs::read(&manifest).unwrap();
        bytes[20] ^= 1;
        std::fs::write(&manifest, bytes).unwrap();
        let out = run(&["verify", dir.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("MANIFEST")
                && stderr.contains("checksum mismatch")
                && stderr.contains("will not open the database"),
            "{stderr}"
        );
        // Each table file present once (Pebble's virtual tables share
        // their backing's), less the one removed.
        let files: std::collections::BTreeSet<u64> = db
            .live
            .iter()
            .map(|t| t.backing.unwrap_or(t.number))
            .collect();
        assert!(
            stdout(&out).lines().count() >= files.len() - 1,
            "{}: the tables present are still checked: {}",
            db.name,
            stdout(&out)
        );
    }
}

#[test]
fn exit_statuses_and_a_closed_pipe() {
    let db = &databases()[0];
    let dir = db.dir.to_str().unwrap();
    // `inspect DIR | head -1`: exit 0 and nothing on stderr.
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; \"$L\" inspect \"{dir}\" | head -1; echo \"status $?\" >&2"
        ))
        .env("L", env!("CARGO_BIN_EXE_ldbfilter"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "status 0\n");
    assert_eq!(stdout(&out).lines().count(), 1);
    // A usage error, a missing path, an empty directory: exit 2.
    let empty = tempfile::tempdir().unwrap();
    for args in [
        &["verify", "--no-such-option", dir][..],
        &["verify", "/nonexistent/db"],
        &["inspect", empty.path().to_str().unwrap()],
    ] {
        let out = run(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // --all-files takes every table file present; a directory's other
    // files are skipped, never errors.
    let out = run(&["verify", "--all-files", dir]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tables = std::fs::read_dir(&db.dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "ldb" || x == "sst")
        })
        .count();
    assert_eq!(stdout(&out).lines().count(), tables + 1);
}

#[test]
fn probe_takes_text_keys_and_inspect_shows_the_database() {
    for db in databases() {
        // A table of its own file (not Pebble's virtual table, whose file
        // holds keys past its bounds).
        let first = db.live.iter().find(|t| t.backing.is_none()).unwrap();
        let (family, number, (smallest, largest)) = (&first.family, first.number, &first.range);
        let dir = db.dir.to_str().unwrap();
        let key = String::from_utf8(smallest.clone()).unwrap();
        let out = run(&["probe", "--text", "--column-family", family, dir, &key]);
        let text = stdout(&out);
        // The Get ends at the newest table's smallest key: a value, or a
        // deletion.
        let last = text.lines().last().unwrap();
        let ends = ["get found in ", "get not found: deleted in "];
        assert!(
            ends.iter()
                .any(|end| last.starts_with(&format!("{key} {end}"))),
            "{text}"
        );
        let objects = json_lines(&run(&["inspect", "--json", dir]));
        // First the database: its tables per column family and level.
        let header = &objects[0];
        assert_eq!(header["type"], "database", "{header}");
        // CURRENT names the MANIFEST, but from Pebble's format major
        // version 2 on, where its marker does.
        let format = header["pebble_format_major_version"].as_u64();
        let named_by = header["manifest_named_by"].as_str().unwrap();
        assert_eq!(
            named_by.starts_with("marker.manifest."),
            format.is_some_and(|v| v >= 2),
            "{header}"
        );
        let counted: u64 = header["column_families"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["levels"].as_array().unwrap())
            .map(|l| l["tables"].as_u64().unwrap())
            .sum();
        assert_eq!(counted, db.live.len() as u64);
        let table = objects.iter().find(|o| o["file_number"] == number).unwrap();
        assert_eq!(table["level"], first.level);
        assert_eq!(table["column_family"], family.as_str());
        // Pebble's tables name their comparer, and their filter's rate is
        // not measured.
        let pebble = table["format"] == "pebble";
        let comparator = &table[if pebble { "comparer" } else { "comparator" }];
        assert_eq!(comparator, "leveldb.BytewiseComparator", "{table}");
        assert_eq!(table["smallest_key_hex"], hex(smallest), "{table}");
        assert_eq!(table["largest_key_hex"], hex(largest), "{table}");
        assert!(
            pebble || table["filter"]["measured_fpr"]["probed"].as_u64().unwrap() > 0,
            "{table}"
        );
    }
}

/// Shell completions and the manual page name every command.
#[test]
fn completions_and_a_manual_page() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0));
        let script = stdout(&out);
        assert!(
            ["verify", "inspect", "probe", "all-files", "json"]
                .iter()
                .all(|w| script.contains(w)),
            "{shell}"
        );
    }
    let out = run(&["man"]);
    assert_eq!(out.status.code(), Some(0));
    let page = stdout(&out);
    assert!(
        page.starts_with(".ie") && page.contains(".TH ldbfilter 1") && page.contains("Exit status")
    );
    assert_eq!(run(&["completions", "nosh"]).status.code(), Some(2));
}

/// `probe --json`: a damaged table's error is an object of the stream.
#[test]
fn probe_json_errors_are_objects() {
    let db = &databases()[0];
    let copy = copy(db);
    let victim = db.live[0].number;
    std::fs::remove_file(table_file(copy.path(), victim)).unwrap();
    let key = hex(&db.live[0].range.0);
    let out = run(&["probe", "--json", copy.path().to_str().unwrap(), &key]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let objects = json_lines(&out);
    assert_eq!(objects[0]["outcome"], "fails", "{objects:?}");
    assert_eq!(objects.last().unwrap()["type"], "error");
}

/// A LevelDB table of the internal keys given (no filter) of exactly
/// `size` bytes: zeros before its data block make up the difference.
fn table_of_size(keys: Vec<Vec<u8>>, size: u64) -> Vec<u8> {
    // The handles' varints grow with the offset: pad less until it fits.
    let mut pad = size as usize;
    for _ in 0..8 {
        let bytes = crate::crafted::table(&[(pad, keys.clone())], None);
        if bytes.len() as u64 == size {
            return bytes;
        }
        pad = (pad + size as usize).checked_sub(bytes.len()).unwrap();
    }
    panic!("no table of {size} bytes");
}

#[test]
fn keys_out_of_order_are_a_problem_where_the_comparator_is_known() {
    let internal = |user: &[u8]| [user, &0x101u64.to_le_bytes()[..]].concat();
    let unordered = vec![internal(b"b"), internal(b"a")];
    let (before, after) = (hex(&unordered[0]), hex(&unordered[1]));
    // A LevelDB database's table: its MANIFEST names the bytewise comparator.
    let db = databases()
        .into_iter()
        .find(|db| db.name.starts_with("leveldb"))
        .unwrap();
    let copy = copy(&db);
    let dir = copy.path();
    let path = table_file(dir, db.live[0].number);
    let size = std::fs::metadata(&path).unwrap().len();
    std::fs::write(&path, table_of_size(unordered.clone(), size)).unwrap();
    let out = run(&["verify", dir.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let want = format!(
        "OUT OF ORDER key {before} comes before key {after}, against the database's comparator leveldb.BytewiseComparator"
    );
    assert!(text.contains(&want), "{text}");

    // The same table named alone: it does not name its comparator, so its
    // line says what it found, and all is well.
    let out = run(&["verify", path.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(&format!(
            "key {before} comes before key {after}, out of bytewise order"
        )),
        "{text}"
    );

    // A RocksDB table whose keys are out of the order of the comparator it
    // names.
    let golden = crate::vectors::rocksdb_dir().join("legacybloom-fv3-zlib-xxhash.sst");
    let mut sst = crate::crafted_rocksdb::Sst::new(&std::fs::read(golden).unwrap());
    sst.change_property(b"rocksdb.comparator", |name| {
        *name = b"rocksdb.ReverseBytewiseComparator".to_vec()
    });
    let path = dir.join("reversed.sst");
    std::fs::write(&path, sst.finish()).unwrap();
    let out = run(&["verify", path.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("OUT OF ORDER key ")
            && text.contains("against the table's comparator rocksdb.ReverseBytewiseComparator"),
        "{text}"
    );
}

/// Pebble's databases (`testdata/db/pebble-*`): `inspect` names the
/// marker that names the MANIFEST and the format major version; `probe`
/// meets the writes left in a write-ahead log before any table; a missing
/// backing table is missing for each virtual table on it.
#[test]
fn pebble_databases_name_their_marker_their_logs_and_their_backing_tables() {
    let databases: Vec<GoldenDb> = databases()
        .into_iter()
        .filter(|db| db.name.starts_with("pebble-"))
        .collect();
    assert!(databases.len() >= 3);
    let (mut logged, mut backings) = (0, 0);
    for db in &databases {
        let dir = db.dir.to_str().unwrap();
        let text = stdout(&run(&["inspect", dir]));
        let header = text.lines().next().unwrap();
        let marker = std::fs::read_dir(&db.dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().into_string().unwrap())
            .filter(|name| name.starts_with("marker.manifest."))
            .max();
        assert!(header.contains(": pebble database, MANIFEST-"), "{header}");
        match marker {
            Some(marker) => assert!(
                header.contains(&format!("(named by {marker}, format major version ")),
                "{header}"
            ),
            None => assert!(!header.contains("named by"), "{header}"),
        }
        // The Gets that meet the key in a log, before any table.
        let keys: String = db
            .gets
            .iter()
            .map(|g| format!("{}\n", hex(&g.key)))
            .collect();
        let answers = json_lines(&ldbfilter(&["probe", "--json", dir], &keys));
        logged += answers
            .iter()
            .filter(|a| {
                a["tables"][0]["path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with(".log"))
            })
            .count();

        let virtual_tables: Vec<_> = db.live.iter().filter(|t| t.backing.is_some()).collect();
        let Some(backing) = virtual_tables.first().and_then(|t| t.backing) else {
            continue;
        };
        backings += 1;
        let copy = copy(db);
        std::fs::remove_file(copy.path().join(format!("{backing:06}.sst"))).unwrap();
        let out = run(&["verify", copy.path().to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        let on_it = virtual_tables
            .iter()
            .filter(|t| t.backing == Some(backing))
            .count();
        let missing = format!(
            "{backing:06}.sst: missing: the MANIFEST lists it as the backing table of virtual table "
        );
        assert_eq!(stderr.matches(&missing).count(), on_it, "{stderr}");
    }
    assert!(
        logged > 0 && backings > 0,
        "{logged} keys in logs, {backings} databases with virtual tables"
    );
}
