//! `probe DIR`: each key's `Get` walked through a database's write-ahead
//! log and live tables, in the engine's order, each table opened once.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use elsa::FrozenMap;
use leveldb_filter::db::{
    column_family_option, options_value, pebble_step_without_filter, Engine, GetWalk, LiveTable,
    Manifest, Memtable, MemtableAnswer, Outcome, TableStep,
};
use leveldb_filter::format::{EntryKind, TableFile};
use leveldb_filter::leveldb::{detect, Evidence, KeyFormat, VerifyOptions};
use leveldb_filter::{AnyTable, BloomFilterPolicy, HashVariant};

use super::{key_shown, ProbeArgs, CORRUPT};
use crate::report::{
    hex, one_line_json, shown, write_error, PathJson, ABSENT, MAY_MATCH, PAST_LAST_KEY,
};
use crate::targets::{read_database, Database};
use crate::Failure;

/// A database: for each key, each live table whose key range holds it, in
/// the order a `Get` consults them, and what the table decides: `absent`
/// (its filter rules the key out: the `Get` goes on without reading it),
/// `may-match` (the `Get` reads its data block and does not find the key),
/// `found` (the data block holds an entry of the key, a value or a
/// deletion: the `Get` stops); then the `Get`'s outcome.
pub(super) fn database(
    args: &ProbeArgs,
    dir: &Path,
    stdout: &mut impl Write,
) -> Result<Option<String>, Failure> {
    let database = read_database(dir)?.ok_or_else(|| Failure::Unreadable {
        path: dir.to_owned(),
        what: "has no CURRENT and no MANIFEST marker: probe walks a database's live tables (name a table file to probe it alone)".into(),
    })?;
    let manifest = &database.manifest;
    let family = manifest.column_family(&args.column_family).ok_or_else(|| {
        let names: Vec<&str> = manifest
            .column_families()
            .values()
            .map(String::as_str)
            .collect();
        Failure::Input(format!(
            "{}: no column family {:?} (it has {})",
            shown(dir),
            args.column_family,
            names.join(", ")
        ))
    })?;
    if let Err(e) = manifest.key_order(family) {
        crate::report::say(format_args!(
            "{}: note: {e}: every live table of the column family is consulted, none sought; a key is not found only where every table's filters rule it out, else its outcome is `unknown`",
            shown(dir)
        ));
    }
    // RocksDB's `optimize_filters_for_hits`: the last level's filters are
    // not consulted.
    let hits = database.options.as_deref().and_then(|text| {
        column_family_option(text, &args.column_family, "optimize_filters_for_hits")
    }) == Some("true");
    let wal = read_wal(&database)?;
    let mut failed = 0;
    let mut keys = args.keys()?;
    loop {
        // The tables, opened once and held while they fit their bounds;
        // past them, let go, and opened again as the next keys need them.
        let files = FrozenMap::new();
        let mut tables = Tables {
            database: &database,
            detect: &args.detect,
            files: &files,
            held: HashMap::new(),
            bounds: (MAX_HELD, MAX_KEPT),
        };
        let more = keys.answer_while(stdout, |text, key| {
            let mut walk = Walk {
                steps: Vec::new(),
                get: GetWalk::new(manifest.engine()),
                ended: false,
            };
            if let Some((path, memtable)) = &wal {
                walk.wal_step(path, memtable.get(family, key));
            }
            get_walk(&mut walk, manifest, (family, hits), &mut tables, key)?;
            failed += usize::from(walk.failed());
            Ok((walk.output(args, text, key)?, !tables.full()))
        })?;
        if !more {
            break;
        }
    }
    Ok((failed > 0).then(|| {
        format!("{failed} Gets meet a table that is missing or damaged (answered `{CORRUPT}`): verify the database")
    }))
}

/// What a `Get` meets at each table, and how it ends.
struct Walk<'m> {
    steps: Vec<Step<'m>>,
    get: GetWalk,
    /// Whether the `Get` ended before the tables.
    ended: bool,
}

/// One table of a walk (or the write-ahead log, `live` `None`): what it
/// gives the `Get`, as a word, and the kind of the newest entry of the key
/// it holds, if any.
struct Step<'m> {
    live: Option<&'m LiveTable>,
    path: PathBuf,
    answer: &'static str,
    entry: Option<EntryKind>,
}

/// The walk of a `Get` of `key` in column family `family` (with
/// `optimize_filters_for_hits` where `hits`).
fn get_walk<'m>(
    walk: &mut Walk<'m>,
    manifest: &'m Manifest,
    (family, hits): (u32, bool),
    tables: &mut Tables<'_, '_>,
    key: &[u8],
) -> Result<(), Failure> {
    if walk.ended {
        // The write-ahead log ended the `Get`.
        return Ok(());
    }
    // Under a comparator this crate does not know, no key range can be
    // compared: every table of the family, level 0 newest first.
    let (order, known) = match manifest.get_order(family, key) {
        Ok(order) => (order, true),
        Err(_) => (
            manifest
                .tables()
                .iter()
                .filter(|t| t.column_family == family)
                .collect(),
            false,
        ),
    };
    for live in order {
        // RocksDB's `optimize_filters_for_hits`; Pebble's level 6.
        let skip_filter =
            (hits && manifest.filter_skipped_for_hits(live)) || !manifest.asks_filter(live);
        let (path, step, covering) = tables.answer(live, key, known, skip_filter);
        let answer = match &step {
            TableStep::PastLastKey => PAST_LAST_KEY,
            TableStep::Absent => ABSENT,
            TableStep::Read(entries) if entries.is_empty() => MAY_NOT_FOUND,
            TableStep::Read(_) => FOUND,
            TableStep::Unordered => UNORDERED,
            TableStep::Corrupt => CORRUPT,
        };
        let entry = match &step {
            TableStep::Read(entries) => entries.first().map(|e| e.kind),
            _ => None,
        };
        walk.steps.push(Step {
            live: Some(live),
            path,
            answer,
            entry,
        });
        if !walk.get.step(&step, covering) {
            break;
        }
    }
    Ok(())
}

/// The live write-ahead logs replayed as recovery does, and the newest
/// one's path; `None` where there are none, or they hold nothing.
fn read_wal(database: &Database) -> Result<Option<(PathBuf, Memtable)>, Failure> {
    let unreadable = |path: &Path, e: io::Error| Failure::Unreadable {
        path: path.to_owned(),
        what: e.to_string(),
    };
    let engine = database.manifest.engine();
    let mut logs: Vec<(u64, u64, PathBuf)> = Vec::new();
    for dir in wal_dirs(database) {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            // The database's own directory must read; another may be gone.
            Err(e) if dir == database.dir => return Err(unreadable(&dir, e)),
            Err(e) => {
                crate::report::say(format_args!(
                    "{}: note: {e}: the write-ahead logs there are not replayed",
                    shown(&dir)
                ));
                continue;
            }
        };
        logs.extend(entries.flatten().filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let (number, segment) = log_name(&name, engine)?;
            Some((number, segment, e.path()))
        }));
    }
    logs.retain(|(number, _, _)| database.manifest.replays_log(*number));
    logs.sort();
    let mut memtable = Memtable::default();
    for (number, _, path) in &logs {
        let bytes = std::fs::read(path).map_err(|e| unreadable(path, e))?;
        if let Err(problem) = memtable.replay(*number, &bytes, &database.manifest) {
            // RocksDB's default point-in-time recovery replays nothing
            // after it; LevelDB's (without paranoid checks) drops the
            // damaged part and goes on; Pebble's reads no further.
            let after = match engine {
                Engine::RocksDb => "recovery stops there (RocksDB's point-in-time recovery, the default), keeping the writes before it and no later log's",
                Engine::Pebble => "replayed up to it, no later log: Pebble reads a newest log cut short as a write that did not finish, and refuses to open the database over damage elsewhere",
                Engine::LevelDb => "LevelDB's recovery drops the damaged part and reads on, as this replay does",
            };
            crate::report::say(format_args!("{}: note: {problem}: {after}", shown(path)));
            if engine != Engine::LevelDb {
                break;
            }
        }
    }
    Ok(match (logs.pop(), memtable.is_empty()) {
        (Some((_, _, path)), false) => Some((path, memtable)),
        _ => None,
    })
}

/// A write-ahead log's number and segment from its file name: `NNNNNN.log`,
/// and Pebble's segments of a log written over a WAL failover,
/// `NNNNNN-III.log`.
fn log_name(name: &str, engine: Engine) -> Option<(u64, u64)> {
    let stem = name.strip_suffix(".log")?;
    let (number, segment) = match (engine, stem.split_once('-')) {
        (Engine::Pebble, Some((number, segment))) => (number, segment.parse().ok()?),
        (_, _) => (stem, 0),
    };
    Some((number.parse().ok()?, segment))
}

/// The directories a database's write-ahead logs are in: its own, and
/// Pebble's WAL directory and failover directory where its OPTIONS name
/// them (`{store_path}` standing for the database's directory; a relative
/// one is relative to where the process ran, which is not known: noted,
/// not read).
fn wal_dirs(database: &Database) -> Vec<PathBuf> {
    let mut dirs = vec![database.dir.clone()];
    let (Engine::Pebble, Some(options)) = (database.manifest.engine(), &database.options) else {
        return dirs;
    };
    let named = [("Options", "wal_dir"), ("WAL Failover", "secondary_dir")];
    for (section, name) in named {
        let Some(value) = options_value(options, section, name).filter(|v| !v.is_empty()) else {
            continue;
        };
        let dir = match value.strip_prefix("{store_path}") {
            Some(rest) => PathBuf::from(format!("{}{rest}", database.dir.display())),
            None if Path::new(value).is_absolute() => PathBuf::from(value),
            None => {
                crate::report::say(format_args!(
                    "{}: note: OPTIONS name {name} {value:?}, relative to the directory Pebble ran in: the write-ahead logs there are not replayed",
                    shown(&database.dir)
                ));
                continue;
            }
        };
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

impl<'m> Walk<'m> {
    /// The memtables' step, before any table: the key's entries in the
    /// write-ahead logs and the range tombstones there that cover it (or,
    /// where they hold what this crate cannot judge, an unknown).
    fn wal_step(&mut self, path: &Path, answer: MemtableAnswer) {
        let MemtableAnswer {
            entries,
            covering,
            undecidable,
        } = answer;
        if entries.is_empty() && covering == 0 && !undecidable {
            return;
        }
        let word = match (undecidable, entries.is_empty()) {
            (true, _) => UNORDERED,
            (false, true) => RANGE,
            (false, false) => FOUND,
        };
        self.steps.push(Step {
            live: None,
            path: path.to_owned(),
            answer: word,
            entry: entries.first().map(|e| e.kind),
        });
        if undecidable {
            self.get.step(&TableStep::Unordered, 0);
        }
        self.ended = !self.get.step(&TableStep::Read(entries), covering);
    }

    /// Whether the `Get` fails: a table on its path is missing or damaged.
    fn failed(&self) -> bool {
        self.get.outcome() == Outcome::Fails
    }

    fn output(&self, args: &ProbeArgs, text: &str, key: &[u8]) -> Result<String, Failure> {
        let read = self
            .steps
            .iter()
            .filter(|s| s.live.is_some() && matches!(s.answer, FOUND | MAY_NOT_FOUND))
            .count();
        let skipped = self.steps.iter().filter(|s| s.answer == ABSENT).count();
        let outcome = self.get.outcome();
        if args.json {
            let object = GetJson {
                kind: "get",
                key_hex: hex(key),
                column_family: &args.column_family,
                tables: self
                    .steps
                    .iter()
                    .map(|step| StepJson {
                        path: PathJson::new(&step.path),
                        level: step.live.map(|l| l.level),
                        file_number: step.live.map(|l| l.number),
                        answer: step.answer,
                        entry: step.entry.map(EntryKind::name),
                    })
                    .collect(),
                outcome: outcome.name(),
                merge_operands: self.get.merges(),
                tables_read: read,
                skipped_by_filter: skipped,
            };
            return Ok(one_line_json(&object).map_err(write_error)? + "\n");
        }
        let key = key_shown(text, args);
        let mut out = String::new();
        for step in &self.steps {
            let entry = match step.entry {
                Some(kind) if kind != EntryKind::Value => format!(" ({})", kind.name()),
                _ => String::new(),
            };
            let place = match step.live {
                Some(live) => format!("level-{}", live.level),
                None => "write-ahead-log".to_string(),
            };
            out.push_str(&format!(
                "{key} {place} {} {}{entry}\n",
                shown(&step.path),
                step.answer
            ));
        }
        // The table the `Get` ended at, if it ended at one.
        let at = self
            .steps
            .last()
            .filter(|s| s.answer == FOUND)
            .map(|s| shown(&s.path));
        let summary = match (outcome, at) {
            (Outcome::Fails, _) => "fails: a table on its path is missing or damaged".to_string(),
            (Outcome::Found, _) if self.get.merges() > 0 => format!(
                "found: {} merge operands, merged by the database's merge operator",
                self.get.merges()
            ),
            (Outcome::Found, Some(at)) => format!("found in {at}"),
            (Outcome::Deleted, Some(at)) => format!("not found: deleted in {at}"),
            (Outcome::RangeDeleted, _) => "not found: a range deletion covers the key".to_string(),
            (Outcome::Unknown, _) => {
                "unknown: what may hold the key is not read here (tables of a comparator this crate does not know, a compressed log, tables a Pebble log ingests)"
                    .to_string()
            }
            _ if self.steps.is_empty() => {
                "not found: no live table's key range holds the key".to_string()
            }
            _ => "not found".to_string(),
        };
        out.push_str(&format!(
            "{key} get {summary}; {read} data blocks read, {skipped} tables skipped by their filters\n"
        ));
        Ok(out)
    }
}

/// `probe --json`'s object for a key in a database.
#[derive(serde::Serialize)]
struct GetJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    key_hex: String,
    column_family: &'a str,
    /// The tables the `Get` consults, in its order, to the one it stops at.
    tables: Vec<StepJson<'a>>,
    /// `found`, `deleted`, `range-deleted`, `not-found`, `unknown` (a
    /// comparator this crate does not know, whose tables' filters may hold
    /// the key) or `fails`.
    outcome: &'static str,
    /// The merge operands met (merged into the value found).
    merge_operands: usize,
    tables_read: usize,
    skipped_by_filter: usize,
}

#[derive(serde::Serialize)]
struct StepJson<'a> {
    #[serde(flatten)]
    path: PathJson<'a>,
    /// The table's level; null for the write-ahead log.
    level: Option<u32>,
    /// The table's file number; null for the write-ahead log.
    file_number: Option<u64>,
    /// `absent`, `may-match`, `may-match-unordered`, `found`,
    /// `past-last-key` or `corrupt` (the write-ahead log: `found`, or
    /// `range-deletion` where only a range deletion there covers the key).
    answer: &'a str,
    /// Where `found`, the newest entry of the key in the table: `value`,
    /// `deletion`, `single-deletion`, `merge`, `blob-index`, `entity`.
    #[serde(skip_serializing_if = "Option::is_none")]
    entry: Option<&'static str>,
}

/// A `Get`'s answer at a table that holds the key.
const FOUND: &str = "found";
/// The write-ahead log's answer where it holds a range deletion covering
/// the key and no entry of it.
const RANGE: &str = "range-deletion";
/// A table of a comparator this crate does not know whose filters may hold
/// the key: no block can be sought in it.
const UNORDERED: &str = "may-match-unordered";
/// A table whose data block is read, without the key: the filter's
/// "may match".
const MAY_NOT_FOUND: &str = MAY_MATCH;

/// The database's tables, opened once as the keys first need them and held
/// for the keys after, with how each LevelDB filter hashes. The files are
/// kept in `files`, which outlives the tables read from them. Once they
/// reach [`MAX_HELD`] files or [`MAX_KEPT`] bytes ([`full`]), a table not
/// held is opened for one key alone, and the caller lets them all go after
/// that key.
///
/// [`full`]: Tables::full
struct Tables<'d, 'f> {
    database: &'d Database,
    detect: &'d crate::tables::Detect,
    files: &'f FrozenMap<u64, Box<TableFile>>,
    held: HashMap<u64, Held<'f>>,
    /// [`MAX_HELD`] and [`MAX_KEPT`].
    bounds: (usize, u64),
}

/// A table open as its engine opens it for reads, its path, and for
/// LevelDB's, how its filter hashes (`None`: no filter this crate reads).
struct Held<'f> {
    path: PathBuf,
    file: &'f TableFile,
    table: AnyTable<'f>,
    variant: Option<HashVariant>,
}

/// The most table files `probe` holds open at once.
const MAX_HELD: usize = 256;
/// The most bytes the tables held keep (filters, metaindexes, indexes and
/// their partitions).
const MAX_KEPT: u64 = 1 << 30;

impl<'f> Tables<'_, 'f> {
    /// What a `Get` of `key` meets at the live table `live`, where the
    /// database's comparator is `known` to this crate or not (LevelDB's
    /// tables do not name theirs: under another, nothing is sought), and
    /// the largest sequence number of its range tombstones that cover the
    /// key. A RocksDB table whose filter the `Get` skips is read whatever
    /// its filter says.
    fn answer(
        &mut self,
        live: &LiveTable,
        key: &[u8],
        known: bool,
        skip_filter: bool,
    ) -> (PathBuf, TableStep, u64) {
        let (path, step, covering) = self.file_answer(live, key, known, skip_filter);
        // Pebble's virtual table is its backing's keys within its bounds.
        let order = match known {
            true => self.database.manifest.key_order(live.column_family).ok(),
            false => None,
        };
        let (step, covering) = live.virtual_step(order, key, (step, covering));
        (path, step, covering)
    }

    /// [`Tables::answer`] of the table's file (a virtual table's backing's).
    fn file_answer(
        &mut self,
        live: &LiveTable,
        key: &[u8],
        known: bool,
        skip_filter: bool,
    ) -> (PathBuf, TableStep, u64) {
        // Pebble's synthetic prefix is not in the backing file's keys; a
        // synthetic suffix replaces theirs, under a `Split` this crate may
        // not know: no key is sought.
        let (prefix, suffix) = live.synthetic();
        if !suffix.is_empty() {
            let path = self.database.file_of(live).unwrap_or_else(|m| m);
            return (path, TableStep::Unordered, 0);
        }
        let Some(key) = key.strip_prefix(prefix) else {
            let path = self.database.file_of(live).unwrap_or_else(|m| m);
            return (path, TableStep::Read(Vec::new()), 0);
        };
        // Virtual tables share their backing's file: held once.
        let number = live.file_number();
        if let Some(held) = self.held.get(&number) {
            let (step, covering) = held.step(key, known, skip_filter);
            return (held.path.clone(), step, covering);
        }
        let path = self
            .database
            .file_of(live)
            .unwrap_or_else(|missing| missing);
        let Some(file) = table_file(&path, live) else {
            return (path, TableStep::Corrupt, 0);
        };
        if self.full() {
            // Past the bounds within one key's walk (a level 0 of many
            // files, or every table under a comparator this crate does not
            // know): this table is opened for this key alone.
            let (step, covering) = match self.open(path.clone(), &file) {
                Some(held) => held.step(key, known, skip_filter),
                None => (TableStep::Corrupt, 0),
            };
            return (path, step, covering);
        }
        let file = self.files.insert(number, Box::new(file));
        match self.open(path.clone(), file) {
            Some(held) => {
                let (step, covering) = held.step(key, known, skip_filter);
                self.held.insert(number, held);
                (path, step, covering)
            }
            None => (path, TableStep::Corrupt, 0),
        }
    }

    /// Whether the tables held reach [`MAX_HELD`] files or [`MAX_KEPT`]
    /// bytes: no more are held, and the caller lets them go after this key.
    fn full(&self) -> bool {
        let bytes = |held: &Held<'_>| held.file.kept_bytes() + held.table.held_bytes();
        let held: u64 = self.held.values().map(bytes).sum();
        self.files.len() >= self.bounds.0 || held > self.bounds.1
    }

    /// The table in `file`, opened for reads, and how its filter hashes;
    /// `None` if it does not open.
    fn open<'x>(&self, path: PathBuf, file: &'x TableFile) -> Option<Held<'x>> {
        let table = AnyTable::open_for_lookups(file).ok()?;
        let variant = match &table {
            AnyTable::RocksDb(_) | AnyTable::Pebble(_) => None,
            AnyTable::LevelDb(table) => {
                let options = VerifyOptions {
                    key_format: Some(KeyFormat::Internal),
                    ..self.detect.options(None)
                };
                detect(table, Evidence::Reads(None), options)
                    .ok()
                    .and_then(|d| d.filter)
                    .and_then(|f| f.variant)
            }
        };
        Some(Held {
            path,
            file,
            table,
            variant,
        })
    }
}

impl Held<'_> {
    /// The table's step of a `Get` of `key` (see [`Tables::answer`]).
    fn step(&self, key: &[u8], known: bool, skip_filter: bool) -> (TableStep, u64) {
        let answer = match &self.table {
            AnyTable::LevelDb(_) if !known => Ok((TableStep::Unordered, 0)),
            AnyTable::LevelDb(table) => {
                let policy = self
                    .variant
                    .map(|v| BloomFilterPolicy::new(10).with_hash(v));
                table.get_step(policy.as_ref(), key).map(|step| (step, 0))
            }
            AnyTable::RocksDb(table) => table.get_step(key, skip_filter),
            AnyTable::Pebble(table) if skip_filter => pebble_step_without_filter(table, key),
            AnyTable::Pebble(table) => table.get_step(key),
        };
        answer.unwrap_or((TableStep::Corrupt, 0))
    }
}

/// The file of the live table `live` at `path`, as the engines open it: at
/// the size the MANIFEST records (its footer is read there; a virtual
/// table's, its backing table's); `None` where it is missing, not a
/// regular file, or shorter.
fn table_file(path: &Path, live: &LiveTable) -> Option<TableFile> {
    let file = crate::input::open_regular_file(path).ok()?;
    let size = live.file_size();
    (file.len() >= size).then(|| file.prefix(size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::Detect;
    use leveldb_filter_testkit::vectors::{testdata, unhex};

    /// A walk past its bounds opens each table it has no room for, for one
    /// key alone: every answer is the one a walk that holds every table
    /// gives, in each golden database.
    #[test]
    fn tables_opened_past_the_bounds_answer_as_tables_held() {
        let detect = Detect::auto();
        let mut answers = 0;
        for name in [
            "leveldb-1.23",
            "rocksdb-7.8.3",
            "rocksdb-9.8.4",
            "rocksdb-11.12",
            "pebble-1.1.5",
            "pebble-1.1.5-newest",
            "pebble-2.1.7",
        ] {
            let dir = testdata().join("db").join(name);
            let db = dir.join("db");
            let database = read_database(&db)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .unwrap_or_else(|| panic!("{name}: no database"));
            let gets = std::fs::read_to_string(dir.join("gets.txt")).unwrap();
            // `KEY OUTCOME` (LevelDB's), `KEY OUTCOME USEFUL` (Pebble's),
            // `FAMILY KEY OUTCOME USEFUL` (RocksDB's).
            let keys: Vec<Vec<u8>> = gets
                .lines()
                .map(|line| line.split(' ').collect::<Vec<_>>())
                .map(|fields| unhex(fields[usize::from(fields.len() == 4)]))
                .collect();
            let (held, opened) = (FrozenMap::new(), FrozenMap::new());
            let tables = |files, bounds| Tables {
                database: &database,
                detect: &detect,
                files,
                held: HashMap::new(),
                bounds,
            };
            let mut held = tables(&held, (MAX_HELD, MAX_KEPT));
            let mut opened = tables(&opened, (0, 0));
            for live in database.manifest.tables() {
                for key in &keys {
                    assert_eq!(
                        opened.answer(live, key, true, false),
                        held.answer(live, key, true, false),
                        "{name}: table {} key {key:02x?}",
                        live.number
                    );
                    answers += 1;
                }
            }
            assert!(opened.held.is_empty() && !held.held.is_empty(), "{name}");
        }
        assert!(answers > 1000, "{answers} answers compared");
    }
}
