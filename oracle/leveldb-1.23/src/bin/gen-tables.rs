//! Writes small real tables with LevelDB 1.23's own `TableBuilder` and `DB`,
//! and LevelDB's own lookup decision for member and other keys.
//!
//! ```text
//! cargo run -p leveldb-filter-oracle --bin gen-tables -- [--seed N] OUT_DIR
//! ```
//!
//! For each `NAME.ldb` it writes `NAME.probe`: a comment line saying how to
//! read the table, then one line per probe key as `ldbfilter probe` prints it
//! (`KEYHEX OFFSET may-match|absent`, `KEYHEX - past-last-key`), every answer from LevelDB's
//! `Table::InternalGet`. `CHECKSUMS` holds each file's CRC-32 and size.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use leveldb_filter_oracle::hex;
use leveldb_filter_oracle::rng::Rng;
use leveldb_filter_oracle::{table_probe, write_db, write_table, PolicyKind, TableOptions};

/// Sorted, distinct keys with values that Snappy can shrink.
fn entries(rng: &mut Rng, n: usize, ascii: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut keys: Vec<Vec<u8>> = (0..n)
        .map(|_| {
            let len = rng.range(1, 24);
            (0..len)
                .map(|_| {
                    if ascii {
                        b'a' + (rng.next_u64() % 26) as u8
                    } else {
                        rng.next_u64() as u8
                    }
                })
                .collect()
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|k| {
            let value = (0..rng.range(0, 40))
                .map(|i| b"leveldb"[(i % 7) as usize])
                .collect();
            (k, value)
        })
        .collect()
}

/// LevelDB's answers for some of the table's keys, keys near them, and others.
fn probes(
    rng: &mut Rng,
    path: &Path,
    policy: PolicyKind,
    internal: bool,
    keys: &[Vec<u8>],
) -> String {
    let mut probe_keys: Vec<Vec<u8>> = Vec::new();
    for _ in 0..40.min(keys.len()) {
        let key = rng.pick(keys).clone();
        let mut near = key.clone();
        near.push(rng.next_u64() as u8);
        probe_keys.extend([key, near]);
    }
    probe_keys.extend((0..40).map(|_| rng.key(24)));
    probe_keys.extend([Vec::new(), vec![0xff; 30]]);
    let mut text = format!(
        "# LevelDB's Table::InternalGet: policy {policy:?}, {} keys\n",
        if internal {
            "internal (probe keys are user keys)"
        } else {
            "user"
        }
    );
    for key in probe_keys {
        let answer = table_probe(path, policy, internal, &key).unwrap_or_else(|e| fail(&e));
        let _ = writeln!(text, "{} {}", hex(&key), answer.words());
    }
    text
}

fn main() {
    let (seed, dir) = leveldb_filter_oracle::generator_args("gen-tables");
    let mut rng = Rng(seed);
    let table = |policy, bits_per_key, block_size, restart_interval, snappy| TableOptions {
        policy,
        bits_per_key,
        block_size,
        restart_interval,
        snappy,
    };
    use PolicyKind::{Bloom2, GoLevelDb, LegacyLevelDb, LegacyRocksDb, NoFilter};
    // name, options, number of keys, ASCII keys only
    let tables = [
        (
            "user-4k-r16-none",
            table(Bloom2, 10, 4096, 16, false),
            2000,
            false,
        ),
        (
            "user-1k-r1-snappy",
            table(Bloom2, 10, 1024, 1, true),
            1500,
            false,
        ),
        (
            "user-256-r4-snappy-bpk20",
            table(Bloom2, 20, 256, 4, true),
            800,
            false,
        ),
        (
            "user-16k-r32-none-bpk5",
            table(Bloom2, 5, 16384, 32, false),
            3000,
            false,
        ),
        ("user-empty", table(Bloom2, 10, 4096, 16, false), 0, false),
        (
            "user-nofilter",
            table(NoFilter, 10, 4096, 16, true),
            500,
            false,
        ),
        (
            "legacy-leveldb-signed",
            table(LegacyLevelDb, 10, 2048, 16, true),
            1000,
            false,
        ),
        (
            "legacy-rocksdb-signed",
            table(LegacyRocksDb, 10, 4096, 16, false),
            1000,
            false,
        ),
        (
            "legacy-leveldb-ascii",
            table(LegacyLevelDb, 10, 4096, 16, false),
            600,
            true,
        ),
    ];
    let mut written: Vec<String> = Vec::new();
    for (name, options, n, ascii) in tables {
        let entries = entries(&mut rng, n, ascii);
        let path = dir.join(format!("{name}.ldb"));
        write_table(&path, options, &entries).unwrap_or_else(|e| fail(&e));
        let keys: Vec<Vec<u8>> = entries.into_iter().map(|e| e.0).collect();
        let text = probes(&mut rng, &path, options.policy, false, &keys);
        std::fs::write(dir.join(format!("{name}.probe")), text)
            .unwrap_or_else(|e| fail(&e.to_string()));
        written.extend([format!("{name}.ldb"), format!("{name}.probe")]);
    }
    // Databases: internal keys, filters through InternalFilterPolicy.
    let dbs = [
        ("db-snappy", table(Bloom2, 10, 4096, 16, true), 3000),
        (
            "db-legacy-none",
            table(LegacyLevelDb, 10, 4096, 16, false),
            1500,
        ),
    ];
    for (name, options, n) in dbs {
        let entries = entries(&mut rng, n, false);
        let db_dir = std::env::temp_dir().join(format!("gen-tables-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&db_dir);
        write_db(&db_dir, options, &entries, 7).unwrap_or_else(|e| fail(&e));
        let mut ldb: Vec<PathBuf> = std::fs::read_dir(&db_dir)
            .unwrap_or_else(|e| fail(&e.to_string()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "ldb"))
            .collect();
        ldb.sort();
        let keys: Vec<Vec<u8>> = entries.into_iter().map(|e| e.0).collect();
        for (i, source) in ldb.iter().enumerate() {
            let file = format!("{name}-{i}");
            let path = dir.join(format!("{file}.ldb"));
            std::fs::copy(source, &path).unwrap_or_else(|e| fail(&e.to_string()));
            let text = probes(&mut rng, &path, options.policy, true, &keys);
            std::fs::write(dir.join(format!("{file}.probe")), text)
                .unwrap_or_else(|e| fail(&e.to_string()));
            written.extend([format!("{file}.ldb"), format!("{file}.probe")]);
        }
        let _ = std::fs::remove_dir_all(&db_dir);
    }
    // goleveldb: tables from its own writer, probed by LevelDB's lookup. Its
    // database compacts on background goroutines, so those files differ from
    // run to run; their probes are made from whatever it wrote.
    let go_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../goleveldb");
    let status = std::process::Command::new("go")
        .args(["run", "gen-goleveldb.go"])
        .arg(std::path::absolute(&dir).unwrap_or_else(|e| fail(&e.to_string())))
        .current_dir(&go_dir)
        .env("GO111MODULE", "off")
        .env("GOPATH", "/usr/share/gocode")
        .status()
        .unwrap_or_else(|e| {
            fail(&format!(
                "cannot run go ({e}): apt-get install -y golang-go golang-github-syndtr-goleveldb-dev"
            ))
        });
    if !status.success() {
        fail("gen-goleveldb.go failed: apt-get install -y golang-go golang-github-syndtr-goleveldb-dev");
    }
    let mut go_tables: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| fail(&e.to_string()))
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("goleveldb-") && n.ends_with(".ldb"))
        .collect();
    go_tables.sort();
    for file in go_tables {
        let stem = file.trim_end_matches(".ldb").to_owned();
        let path = dir.join(&file);
        let internal = stem.starts_with("goleveldb-db");
        let keys = go_keys(&dir.join(if internal {
            "goleveldb-db.keys"
        } else {
            "goleveldb-table.keys"
        }));
        let text = probes(&mut rng, &path, GoLevelDb, internal, &keys);
        std::fs::write(dir.join(format!("{stem}.probe")), text)
            .unwrap_or_else(|e| fail(&e.to_string()));
        written.extend([file, format!("{stem}.probe")]);
    }
    for list in ["goleveldb-db.keys", "goleveldb-table.keys"] {
        let _ = std::fs::remove_file(dir.join(list));
    }
    for name in &written {
        let len = std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
        eprintln!("{}: {len} bytes", dir.join(name).display());
    }
    leveldb_filter_oracle::write_checksums(&dir, &written).unwrap_or_else(|e| fail(&e.to_string()));
}

/// The keys gen-goleveldb.go wrote, from its hex list.
fn go_keys(list: &Path) -> Vec<Vec<u8>> {
    let text =
        std::fs::read_to_string(list).unwrap_or_else(|e| fail(&format!("{}: {e}", list.display())));
    text.lines()
        .map(|line| {
            (0..line.len())
                .step_by(2)
                .map(|i| {
                    u8::from_str_radix(&line[i..i + 2], 16).unwrap_or_else(|e| fail(&e.to_string()))
                })
                .collect()
        })
        .collect()
}

fn fail(what: &str) -> ! {
    eprintln!("gen-tables: {what}");
    std::process::exit(1)
}
