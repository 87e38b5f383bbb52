//! The golden files, read for the tests: the vectors (`testdata/vectors/*.vec`,
//! format in the README beside them), LevelDB's tables with its lookups
//! (`testdata/tables/`) and RocksDB's with its answers (`testdata/rocksdb/`).
//! Shared by the library's tests and the command line's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The repository's `testdata/`, above this crate's folder.
pub fn testdata() -> PathBuf {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    package
        .ancestors()
        .map(|dir| dir.join("testdata"))
        .find(|dir| dir.is_dir())
        .expect("testdata/ beside the package or above it")
}

pub fn vector_dir() -> PathBuf {
    testdata().join("vectors")
}

/// LevelDB's golden tables (`gen-tables` in `oracle/leveldb-1.23/`).
pub fn leveldb_dir() -> PathBuf {
    testdata().join("tables")
}

/// Each LevelDB golden table's name and bytes, by name.
pub fn leveldb_tables() -> Vec<(String, Vec<u8>)> {
    let mut tables: Vec<(String, Vec<u8>)> = std::fs::read_dir(leveldb_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ldb"))
        .map(|p| {
            (
                p.file_stem().unwrap().to_str().unwrap().to_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    tables.sort();
    assert!(tables.len() >= 11, "the golden tables are there");
    tables
}

/// A LevelDB golden table's `.probe` file: LevelDB's `Table::InternalGet`
/// decisions, a key and its answer.
pub fn leveldb_probes(name: &str) -> Vec<(Vec<u8>, String)> {
    let text = std::fs::read_to_string(leveldb_dir().join(format!("{name}.probe"))).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (key, rest) = l.split_once(' ').unwrap();
            (unhex(key), rest.to_owned())
        })
        .collect()
}

/// RocksDB 7.8's golden tables, or the directory `ROCKSDB_TABLES` names (CI
/// makes a fresh one from another seed).
pub fn rocksdb_dir() -> PathBuf {
    std::env::var_os("ROCKSDB_TABLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| testdata().join("rocksdb"))
}

/// A key, whether the table holds it, and whether RocksDB's filter may match it.
pub type Answer = (Vec<u8>, bool, bool);

/// Each RocksDB 7.8 table's name and bytes, and its keys with RocksDB's answers.
pub fn rocksdb_tables() -> Vec<(String, Vec<u8>, Vec<Answer>)> {
    let tables = rocksdb_tables_in(&rocksdb_dir());
    assert!(tables.len() >= 10, "the golden RocksDB tables are missing");
    tables
}

/// The tables of `dir` (and their answers: RocksDB's and Pebble's
/// oracles write them alike), by name.
pub fn rocksdb_tables_in(dir: &Path) -> Vec<(String, Vec<u8>, Vec<Answer>)> {
    let mut out = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the RocksDB tables")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    names.sort();
    for path in names {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).expect("table");
        let answers = std::fs::read_to_string(path.with_extension("answers")).expect("answers");
        let keys = answers
            .lines()
            .map(|line| {
                let mut words = line.split(' ');
                let key = unhex(words.next().expect("key"));
                let written = words.next() == Some("written");
                let may_match = words.next() == Some("may-match");
                (key, written, may_match)
            })
            .collect();
        out.push((name, bytes, keys));
    }
    out
}

/// Pebble's golden tables (v1.1.5 and v2.1.7), or the directory
/// `PEBBLE_TABLES` names (CI makes a fresh one from another seed).
pub fn pebble_dir() -> PathBuf {
    std::env::var_os("PEBBLE_TABLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| testdata().join("pebble"))
}

/// A table Pebble wrote: its name, bytes, its entry of `tables.json` (how
/// Pebble wrote it) and its keys with Pebble's own filter answers.
pub struct PebbleTable {
    /// The file's name without `.sst`.
    pub name: String,
    /// The file.
    pub bytes: Vec<u8>,
    /// Its entry in `tables.json`.
    pub spec: serde_json::Value,
    /// Its probe keys and Pebble's answers.
    pub answers: Vec<Answer>,
}

/// Every table of [`pebble_dir`], in `tables.json`'s order.
pub fn pebble_tables() -> Vec<PebbleTable> {
    let dir = pebble_dir();
    let json = std::fs::read_to_string(dir.join("tables.json")).expect("tables.json");
    let json: serde_json::Value = serde_json::from_str(&json).expect("tables.json parses");
    let mut answered: std::collections::HashMap<String, (Vec<u8>, Vec<Answer>)> =
        rocksdb_tables_in(&dir)
            .into_iter()
            .map(|(name, bytes, answers)| (name, (bytes, answers)))
            .collect();
    let tables: Vec<PebbleTable> = json["tables"]
        .as_array()
        .expect("a list of tables")
        .iter()
        .map(|spec| {
            let name = spec["name"].as_str().expect("a name").to_string();
            let (bytes, answers) = answered.remove(&name).expect("the table and its answers");
            PebbleTable {
                name,
                bytes,
                spec: spec.clone(),
                answers,
            }
        })
        .collect();
    assert!(answered.is_empty(), "tables.json lists every table");
    assert!(tables.len() >= 40, "the golden Pebble tables are missing");
    tables
}

/// One `[case NAME]`: its header lines and its `[section]`s.
#[derive(Debug, Default)]
pub struct Case {
    pub name: String,
    pub header: BTreeMap<String, String>,
    pub sections: BTreeMap<String, Vec<String>>,
}

impl Case {
    pub fn section(&self, name: &str) -> Option<&[String]> {
        self.sections.get(name).map(Vec::as_slice)
    }
    pub fn bits_per_key(&self) -> usize {
        self.header["bits-per-key"].parse().unwrap()
    }
    pub fn hex_lines(&self, name: &str) -> Vec<Vec<u8>> {
        self.section(name)
            .unwrap()
            .iter()
            .map(|l| unhex(l))
            .collect()
    }
    pub fn single_hex(&self, name: &str) -> Option<Vec<u8>> {
        self.section(name).map(|lines| {
            assert_eq!(lines.len(), 1, "{}: [{name}] is one line", self.name);
            unhex(&lines[0])
        })
    }
    /// A section as the text a command reads or prints: its lines, each
    /// ended by a newline. (For the command line's tests.)
    pub fn text(&self, name: &str) -> String {
        self.section(name)
            .unwrap()
            .iter()
            .map(|l| format!("{l}\n"))
            .collect()
    }
    pub fn answers(&self) -> Vec<bool> {
        self.section("answers")
            .unwrap()
            .iter()
            .map(|l| l == "true")
            .collect()
    }
}

pub fn unhex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "odd hex {text:?}");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

pub fn read_cases(file: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(vector_dir().join(file)).unwrap();
    let mut cases: Vec<Case> = Vec::new();
    let mut section: Option<String> = None;
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        if let Some(name) = line
            .strip_prefix("[case ")
            .and_then(|l| l.strip_suffix(']'))
        {
            cases.push(Case {
                name: name.to_owned(),
                ..Case::default()
            });
            section = None;
        } else if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            cases
                .last_mut()
                .unwrap()
                .sections
                .insert(name.to_owned(), Vec::new());
            section = Some(name.to_owned());
        } else {
            let case = cases.last_mut().unwrap();
            match &section {
                Some(name) => case.sections.get_mut(name).unwrap().push(line.to_owned()),
                None => {
                    let (key, value) = line.split_once(' ').unwrap();
                    case.header.insert(key.to_owned(), value.to_owned());
                }
            }
        }
    }
    assert!(!cases.is_empty(), "{file} holds cases");
    cases
}

/// The keys a `ribbon.vec` line names (`oracle/rocksdb-7.8/gen-ribbon.cc`):
/// `+`-joined parts `le32:A..B[/D]`, `ascii:P:A..B`, `rand:S:N:L:M`.
pub fn ribbon_keys(spec: &str) -> Vec<Vec<u8>> {
    let range = |r: &str| -> (u32, u32) {
        let (a, b) = r.split_once("..").expect("A..B");
        (a.parse().unwrap(), b.parse().unwrap())
    };
    let mut keys = Vec::new();
    for part in spec.split('+') {
        let fields: Vec<&str> = part.split(':').collect();
        match fields[..] {
            ["le32", r] => {
                let (r, d) = r.split_once('/').unwrap_or((r, "1"));
                let ((a, b), d): (_, u32) = (range(r), d.parse().unwrap());
                keys.extend((a..b).map(|i| (i / d).to_le_bytes().to_vec()));
            }
            ["ascii", p, r] => {
                let (a, b) = range(r);
                keys.extend((a..b).map(|i| format!("{p}{i}").into_bytes()));
            }
            ["rand", s, n, lo, hi] => {
                let mut state: u64 = s.parse().unwrap();
                let mut next = move || {
                    state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let mut z = state;
                    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                    z ^ (z >> 31)
                };
                let (lo, hi): (u64, u64) = (lo.parse().unwrap(), hi.parse().unwrap());
                for _ in 0..n.parse::<u32>().unwrap() {
                    let len = (lo + next() % (hi - lo + 1)) as usize;
                    let mut key = Vec::with_capacity(len + 8);
                    while key.len() < len {
                        key.extend_from_slice(&next().to_le_bytes());
                    }
                    key.truncate(len);
                    keys.push(key);
                }
            }
            _ => panic!("key set {part:?}"),
        }
    }
    keys
}

/// A database the real engine wrote (`testdata/db/*/`, made by the
/// `gen-*-db` generators under `oracle/`): its directory, the live tables the engine
/// lists, and what its `Get` returned for probe keys.
pub struct GoldenDb {
    pub name: String,
    pub dir: PathBuf,
    /// Checked in (`testdata/db/`), rather than written fresh for this
    /// run (`DB_VECTORS`): only a checked-in database's shape is known.
    pub checked_in: bool,
    pub live: Vec<LiveRow>,
    pub gets: Vec<GetRow>,
}

/// A live table as the engine lists it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LiveRow {
    pub family: String,
    pub level: u32,
    pub number: u64,
    pub size: u64,
    /// The smallest and largest user keys.
    pub range: (Vec<u8>, Vec<u8>),
    /// Pebble's virtual table: its backing table's number (the line's
    /// trailing `virtual BACKING`).
    pub backing: Option<u64>,
}

/// A key and what the engine's `Get` did with it: whether it found it,
/// and for RocksDB the tables whose filter ruled it out (the ticker
/// `rocksdb.bloom.filter.useful` across the `Get`).
pub struct GetRow {
    pub family: String,
    pub key: Vec<u8>,
    pub found: bool,
    pub useful: Option<u64>,
}

/// The golden databases, and those the directories in `DB_VECTORS` (colon
/// separated) hold: CI writes fresh ones with the live engines.
pub fn databases() -> Vec<GoldenDb> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(dir) = std::fs::read_dir(testdata().join("db")) {
        roots.extend(
            dir.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("db").is_dir()),
        );
    }
    if let Some(extra) = std::env::var_os("DB_VECTORS") {
        roots.extend(std::env::split_paths(&extra));
    }
    roots.sort();
    roots.iter().map(|root| golden_db(root)).collect()
}

/// The database a generator wrote at `root`: `db/`, and the engine's
/// answers beside it (`live.txt`, `gets.txt`).
fn golden_db(root: &Path) -> GoldenDb {
    let text = |name: &str| std::fs::read_to_string(root.join(name)).unwrap();
    let hex = unhex;
    let live = text("live.txt")
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            // LevelDB's lines have no column family; Pebble's neither, and
            // seven fields (a virtual table's two more: `virtual BACKING`).
            let pebble = f.len() == 7 || (f.len() == 9 && f[7] == "virtual");
            let f = if f.len() == 5 || pebble {
                [&["default"], &f[..]].concat()
            } else {
                f
            };
            LiveRow {
                family: f[0].to_string(),
                level: f[1].parse().unwrap(),
                number: f[2].parse().unwrap(),
                size: f[3].parse().unwrap(),
                range: (hex(f[4]), hex(f[5])),
                backing: match pebble && f.len() == 10 {
                    true => Some(f[9].parse().unwrap()),
                    false => None,
                },
            }
        })
        .collect();
    let gets = text("gets.txt")
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            // LevelDB's `KEY found|notfound` and Pebble's `KEY found|notfound
            // USEFUL` have no column family (an empty key is an empty field).
            let f = if f.len() == 2 || f.len() == 3 {
                [&["default"], &f[..]].concat()
            } else {
                f
            };
            GetRow {
                family: f[0].to_string(),
                key: hex(f[1]),
                found: f[2] == "found",
                useful: f.get(3).map(|u| u.parse().unwrap()),
            }
        })
        .collect();
    GoldenDb {
        name: root.file_name().unwrap().to_string_lossy().into_owned(),
        checked_in: root.starts_with(testdata()),
        dir: root.join("db"),
        live,
        gets,
    }
}

/// A database written with a feature real deployments turn on
/// (`testdata/deployed/ENGINE/FEATURE/`, made by
/// `oracle/rocksdb-7.8/gen-rocksdb-deployed.cc` and the others beside it): the
/// feature, the database, the live blob files the engine lists
/// (`blobs.txt`, where it has any), or where it lists none one by one,
/// their count and garbage bytes (`blobstats.txt`).
pub struct Deployed {
    pub feature: String,
    pub db: GoldenDb,
    pub blobs: Vec<BlobRow>,
    pub blob_stats: Option<(u64, u64)>,
}

/// A live blob file as the engine lists it: column family, number, total
/// blobs and bytes, garbage blobs and bytes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct BlobRow {
    pub family: String,
    pub number: u64,
    pub total: (u64, u64),
    pub garbage: (u64, u64),
}

/// The deployed databases checked in, and those under the directories in
/// `DEPLOYED_VECTORS` (colon separated, each holding one directory a
/// feature): CI writes fresh ones with the live engines.
pub fn deployed() -> Vec<Deployed> {
    let mut sets: Vec<PathBuf> = Vec::new();
    if let Ok(dir) = std::fs::read_dir(testdata().join("deployed")) {
        sets.extend(dir.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    if let Some(extra) = std::env::var_os("DEPLOYED_VECTORS") {
        sets.extend(std::env::split_paths(&extra));
    }
    let mut roots: Vec<PathBuf> = sets
        .iter()
        .flat_map(|set| std::fs::read_dir(set).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.join("db").is_dir())
        .collect();
    roots.sort();
    roots
        .iter()
        .map(|root| {
            let blobs = std::fs::read_to_string(root.join("blobs.txt")).unwrap_or_default();
            let number = |f: &str| f.parse::<u64>().unwrap();
            let blobs = blobs
                .lines()
                .map(|line| {
                    let f: Vec<&str> = line.split(' ').collect();
                    BlobRow {
                        family: f[0].to_string(),
                        number: number(f[1]),
                        total: (number(f[2]), number(f[3])),
                        garbage: (number(f[4]), number(f[5])),
                    }
                })
                .collect();
            let blob_stats = std::fs::read_to_string(root.join("blobstats.txt"))
                .ok()
                .map(|text| {
                    let f: Vec<&str> = text.split_whitespace().collect();
                    (number(f[1]), number(f[2]))
                });
            Deployed {
                blob_stats,
                feature: root.file_name().unwrap().to_string_lossy().into_owned(),
                db: GoldenDb {
                    name: root.display().to_string(),
                    ..golden_db(root)
                },
                blobs,
            }
        })
        .collect()
}
