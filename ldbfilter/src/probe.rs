//! `probe`: for each key, the data block the table's index picks and
//! whether the filter lets the engine's lookup read it, as LevelDB's and
//! RocksDB's own lookups decide, damaged tables included; for a database,
//! the live tables a `Get` consults, in its order, and where it stops.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use leveldb_filter::db::{
    column_family_option, GetWalk, LiveTable, Manifest, Memtable, MemtableAnswer, Outcome,
    TableStep,
};
use leveldb_filter::format::{EntryKind, KeyEntry};
use leveldb_filter::leveldb::{
    detect, entry_type, probe, Basis, Detected, Evidence, KeyFormat, Probe, Table, VerifyOptions,
};
use leveldb_filter::rocksdb::{self, Lookup};
use leveldb_filter::{BloomFilterPolicy, HashVariant, TableFormat};

use crate::input::{parse_hex, KeyLines, Source};
use crate::report::{
    answer_word, escaped, hex, one_line_json, shown, table_error, write_error, PathJson, ABSENT,
    MAY_MATCH, PAST_LAST_KEY,
};
use crate::tables::{variant_word, Detect, ErrorJson, Loaded};
use crate::targets::{read_database, Database, Target};
use crate::{Failure, Status};
use leveldb_filter::format::TableFile;

#[derive(Args)]
pub struct ProbeArgs {
    /// A table file, or a database directory: its live tables, in the order
    /// a `Get` consults them.
    #[arg(value_name = "TABLE|DIR")]
    table: PathBuf,
    /// Keys, in hex (or as text with --text); for a database's table, user
    /// keys. Without any (and without --keys-from), one key per line on stdin.
    #[arg(value_name = "KEY")]
    key_args: Vec<String>,
    /// A file of keys, one a line (`-` for stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "key_args")]
    keys_from: Option<PathBuf>,
    /// Keys are text (UTF-8), not hex.
    #[arg(long)]
    text: bool,
    /// In a database, the column family whose tables a `Get` reads.
    #[arg(long, value_name = "NAME", default_value = "default")]
    column_family: String,
    /// One JSON object per key (per table of a table file).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    detect: Detect,
}

impl ProbeArgs {
    /// Where the keys come from: the arguments (each checked to be hex,
    /// unless --text), or the lines of the --keys-from file or stdin, read
    /// as they come.
    fn keys(&self) -> Result<KeySource<'_>, Failure> {
        let source = match (&self.keys_from, self.key_args.is_empty()) {
            (Some(path), _) if path.as_os_str() != "-" => Source::File(path),
            (Some(_), _) | (None, true) => Source::Stdin,
            (None, false) => {
                for key in self.key_args.iter().filter(|_| !self.text) {
                    if let Err(what) = parse_hex(key) {
                        return Err(Failure::Input(format!(
                            "key {key:?}: {what} (--text takes keys as text)"
                        )));
                    }
                }
                return Ok(KeySource::Args(self.key_args.iter(), self.text));
            }
        };
        Ok(KeySource::Lines(KeyLines::open(source, self.text)?))
    }
}

/// `probe`'s keys: the arguments, or lines read as they come.
enum KeySource<'a> {
    Args(std::slice::Iter<'a, String>, bool),
    Lines(KeyLines<'a>),
}

impl KeySource<'_> {
    /// Writes what `answer` makes of each key (given as written, and as
    /// bytes); the answers so far are flushed before a read that may wait,
    /// so that they come as the keys come.
    fn answer_each(
        mut self,
        out: &mut impl Write,
        mut answer: impl FnMut(&str, &[u8]) -> Result<String, Failure>,
    ) -> Result<(), Failure> {
        loop {
            let (text, key) = match &mut self {
                KeySource::Args(keys, text) => match keys.next() {
                    Some(key) if *text => (key.as_str(), key.as_bytes().to_vec()),
                    Some(key) => (key.as_str(), parse_hex(key).unwrap_or_default()),
                    None => return out.flush().map_err(write_error),
                },
                KeySource::Lines(lines) => {
                    match lines.next_key(|| out.flush().map_err(write_error))? {
                        Some(next) => next,
                        None => return out.flush().map_err(write_error),
                    }
                }
            };
            let lines = answer(text, &key)?;
            out.write_all(lines.as_bytes()).map_err(write_error)?;
        }
    }
}

/// `probe`: the table (or database) read first, then the answers as the
/// keys come (a key that does not read ends the run with an error naming
/// its line; from a regular file, before any answer). A key whose lookup
/// fails (LevelDB's on a corrupt index block; a damaged or missing table in
/// a database) is answered `corrupt`, and the run ends with a line on
/// stderr and exit 1.
pub fn run(args: &ProbeArgs) -> Status {
    let path = &args.table;
    let mut stdout = io::BufWriter::new(io::stdout().lock());
    let result = match path.is_dir() {
        true => database(args, path, &mut stdout),
        false => Loaded::read(&Target {
            path: path.clone(),
            live: None,
        })
        .and_then(|loaded| match loaded.format {
            TableFormat::LevelDb => leveldb(args, path, &loaded, &mut stdout),
            TableFormat::RocksDb { .. } => rocksdb(args, path, &loaded, &mut stdout),
        }),
    };
    let failure = match result {
        Ok(None) => return Status::Well,
        Ok(Some(problem)) => Failure::File {
            path: path.clone(),
            what: problem,
            hint: None,
        },
        Err(failure) => failure,
    };
    let status = failure.status();
    if status == Status::Closed {
        return status;
    }
    // With --json, an error object in the stream, as `verify` and
    // `inspect` write them; else a line on stderr.
    match one_line_json(&ErrorJson::new(&failure)) {
        Ok(line) if args.json => {
            let _ = writeln!(stdout, "{line}").and_then(|()| stdout.flush());
        }
        _ => crate::report::say(format_args!("{failure}")),
    }
    status
}

/// A key as printed: as given (text escaped).
fn key_shown(text: &str, args: &ProbeArgs) -> String {
    match args.text {
        true => escaped(text).into_owned(),
        false => text.to_string(),
    }
}

/// One answer of a table file, as a line or a JSON object.
fn table_answer(
    args: &ProbeArgs,
    path: &Path,
    text: &str,
    key: &[u8],
    offset: Option<u64>,
    word: &str,
) -> Result<String, Failure> {
    if args.json {
        let object = AnswerJson {
            kind: "answer",
            key_hex: hex(key),
            path: PathJson::new(path),
            offset,
            answer: word,
        };
        return Ok(one_line_json(&object).map_err(write_error)? + "\n");
    }
    let offset = offset.map_or_else(|| "-".to_string(), |o| o.to_string());
    Ok(format!("{} {offset} {word}\n", key_shown(text, args)))
}

/// `probe --json`'s answer of a table file for a key.
#[derive(serde::Serialize)]
struct AnswerJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    key_hex: String,
    #[serde(flatten)]
    path: PathJson<'a>,
    /// The data block's offset; null where the index has none.
    offset: Option<u64>,
    /// `may-match`, `absent`, `past-last-key` or `corrupt`.
    answer: &'a str,
}

/// LevelDB's table, answered as its lookups read it; a problem to say
/// after the answers.
fn leveldb(
    args: &ProbeArgs,
    path: &Path,
    loaded: &Loaded,
    stdout: &mut impl Write,
) -> Result<Option<String>, Failure> {
    let table = Table::open_for_lookups(&loaded.file).map_err(table_error(path))?;
    // One pass over the data blocks that checks them: where it passes,
    // detection takes its statistics; a checksum that fails is said
    // after the answers (LevelDB's lookups check none). A data block
    // that does not read leaves the lookups of the others standing, as
    // in LevelDB: detection then takes what reads.
    let checked = Table::open(&loaded.file).and_then(|table| table.key_stats());
    let evidence = Evidence::Reads(checked.as_ref().ok());
    let Detected {
        key_format: format,
        filter: found,
    } = detect(&table, evidence, args.detect.options(None)).map_err(table_error(path))?;
    if let Some(found) = found.as_ref().filter(|f| f.basis == Basis::Guess) {
        // Which LevelDB reads the table decides; say so.
        crate::report::say(format_args!(
            "{}: note: the hash variant of {} is a guess ({}): the table does not tell; --hash signed or unsigned says which reader to answer as",
            shown(path),
            escaped(&found.filter.name),
            variant_word(found)
        ));
    }
    let policy = found
        .and_then(|found| found.variant)
        .map(|variant| BloomFilterPolicy::new(10).with_hash(variant));
    let keys = args.keys()?;
    let mut corrupt = (0, None);
    keys.answer_each(stdout, |text, key| {
        let (offset, word) = match probe(&table, policy.as_ref(), format, key) {
            Ok(Probe::PastLastKey) => (None, PAST_LAST_KEY),
            Ok(Probe::Block { offset, may_match }) => (Some(offset), answer_word(may_match)),
            Err(e) => {
                corrupt.0 += 1;
                corrupt.1.get_or_insert(e);
                (None, CORRUPT)
            }
        };
        table_answer(args, path, text, key, offset, word)
    })?;
    if let Some(e) = corrupt.1 {
        return Ok(Some(format!(
            "{} lookups answered `{CORRUPT}` (LevelDB's Get returns Corruption for them): {e}",
            corrupt.0
        )));
    }
    // The answers above are LevelDB's, but a block that fails its
    // checksum is said, and the exit is 1.
    Ok(match checked {
        Err(e @ leveldb_filter::Error::ChecksumMismatch { .. }) => Some(format!(
            "{e} (the answers are LevelDB's, whose lookups do not check checksums)"
        )),
        _ => None,
    })
}

/// `probe`'s answer for a key whose lookup meets a corrupt index block.
const CORRUPT: &str = "corrupt";

/// RocksDB's table: for each key `OFFSET may-match|absent`, the data block
/// RocksDB's index points the key to and whether the filter lets `Get` read
/// it; `- past-last-key` past the last key, where the table cannot hold it.
fn rocksdb(
    args: &ProbeArgs,
    path: &Path,
    loaded: &Loaded,
    stdout: &mut impl Write,
) -> Result<Option<String>, Failure> {
    let sst = rocksdb::Table::open(&loaded.file).map_err(table_error(path))?;
    if sst.key_order().is_none() {
        crate::report::say(format_args!(
            "{}: note: keys ordered by comparator {}, whose order only its own code knows: no data block is sought (offset -), and a key is absent only where every filter of the table rules it out",
            shown(path),
            escaped(&String::from_utf8_lossy(sst.comparator().unwrap_or_default()))
        ));
    }
    args.keys()?.answer_each(stdout, |text, key| {
        let (offset, word) = match sst.lookup(key).map_err(table_error(path))? {
            Lookup::PastLastKey => (None, PAST_LAST_KEY),
            Lookup::Block { handle, may_match } => (Some(handle.offset), answer_word(may_match)),
            Lookup::Unordered { may_match } => (None, answer_word(may_match)),
        };
        table_answer(args, path, text, key, offset, word)
    })?;
    Ok(None)
}

/// A database: for each key, each live table whose key range holds it, in
/// the order a `Get` consults them, and what the table decides: `absent`
/// (its filter rules the key out: the `Get` goes on without reading it),
/// `may-match` (the `Get` reads its data block and does not find the key),
/// `found` (the data block holds an entry of the key, a value or a
/// deletion: the `Get` stops); then the `Get`'s outcome.
fn database(
    args: &ProbeArgs,
    dir: &Path,
    stdout: &mut impl Write,
) -> Result<Option<String>, Failure> {
    let current = dir.join("CURRENT");
    if !current.is_file() {
        return Err(Failure::Unreadable {
            path: dir.to_owned(),
            what: "has no CURRENT: probe walks a database's live tables (name a table file to probe it alone)".into(),
        });
    }
    let database = read_database(dir, &current)?;
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
    let mut tables = Tables {
        database: &database,
        detect: &args.detect,
        loaded: HashMap::new(),
    };
    // RocksDB's `optimize_filters_for_hits`: the last level's filters are
    // not consulted.
    let hits = database.options.as_deref().and_then(|text| {
        column_family_option(text, &args.column_family, "optimize_filters_for_hits")
    }) == Some("true");
    let wal = read_wal(&database)?;
    let mut failed = 0;
    args.keys()?.answer_each(stdout, |text, key| {
        let mut walk = Walk {
            steps: Vec::new(),
            get: GetWalk::default(),
            ended: false,
        };
        if let Some((path, memtable)) = &wal {
            walk.wal_step(path, memtable.get(family, key));
        }
        get_walk(&mut walk, manifest, (family, hits), &mut tables, key)?;
        failed += usize::from(walk.failed());
        walk.output(args, text, key)
    })?;
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
    tables: &mut Tables<'_>,
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
        let skip_filter = hits && manifest.filter_skipped_for_hits(live);
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
    let mut logs: Vec<(u64, PathBuf)> = std::fs::read_dir(&database.dir)
        .map_err(|e| unreadable(&database.dir, e))?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let number: u64 = name.strip_suffix(".log")?.parse().ok()?;
            Some((number, e.path()))
        })
        .filter(|(number, _)| database.manifest.replays_log(*number))
        .collect();
    logs.sort();
    let mut memtable = Memtable::default();
    let rocksdb = database.manifest.is_rocksdb();
    for (number, path) in &logs {
        let bytes = std::fs::read(path).map_err(|e| unreadable(path, e))?;
        if let Err(problem) = memtable.replay(*number, &bytes, &database.manifest) {
            // RocksDB's default point-in-time recovery replays nothing
            // after it; LevelDB's (without paranoid checks) drops the
            // damaged part and goes on.
            let after = match rocksdb {
                true => "recovery stops there (RocksDB's point-in-time recovery, the default), keeping the writes before it and no later log's",
                false => "LevelDB's recovery drops the damaged part and reads on, as this replay does",
            };
            crate::report::say(format_args!("{}: note: {problem}: {after}", shown(path)));
            if rocksdb {
                break;
            }
        }
    }
    Ok(match (logs.pop(), memtable.is_empty()) {
        (Some((_, path)), false) => Some((path, memtable)),
        _ => None,
    })
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
                "unknown: tables of a comparator this crate does not know may hold the key"
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

/// The database's tables, opened as the keys need them (up to
/// [`MAX_HELD`] files, their kept blocks up to [`MAX_KEPT`] bytes), with
/// how each one's filter hashes.
struct Tables<'d> {
    database: &'d Database,
    detect: &'d crate::tables::Detect,
    loaded: HashMap<u64, Held>,
}

/// A table file open, its format, and for LevelDB's, the filter's variant.
struct Held {
    path: PathBuf,
    file: TableFile,
    format: TableFormat,
    variant: Option<HashVariant>,
}

/// The most table files `probe` holds open between keys.
const MAX_HELD: usize = 256;
/// The most bytes of kept blocks (filters, metaindexes) held between keys.
const MAX_KEPT: u64 = 1 << 30;

impl Tables<'_> {
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
        let held = match self.held(live) {
            Ok(held) => held,
            Err(path) => return (path, TableStep::Corrupt, 0),
        };
        let answer = match held.format {
            TableFormat::LevelDb if !known => Ok((TableStep::Unordered, 0)),
            TableFormat::LevelDb => leveldb_step(held, key).map(|step| (step, 0)),
            TableFormat::RocksDb { .. } => rocksdb_step(&held.file, key, skip_filter),
        };
        let (step, covering) = answer.unwrap_or((TableStep::Corrupt, 0));
        (held.path.clone(), step, covering)
    }

    /// The table, read on first use; `Err` with its path if it does not read.
    fn held(&mut self, live: &LiveTable) -> Result<&Held, PathBuf> {
        if !self.loaded.contains_key(&live.number) {
            let path = self
                .database
                .file_of(live)
                .unwrap_or_else(|missing| missing);
            let target = Target {
                path: path.clone(),
                live: None,
            };
            let file = Loaded::read(&target).map_err(|_| path.clone())?.file;
            // The engines open a table at the size the MANIFEST records:
            // its footer is read there.
            if file.len() < live.size {
                return Err(path);
            }
            let file = file.prefix(live.size);
            let kept: u64 = self.loaded.values().map(|h| h.file.kept_bytes()).sum();
            if self.loaded.len() >= MAX_HELD || kept > MAX_KEPT {
                self.loaded.clear();
            }
            let format = TableFormat::of(&file).map_err(|_| path.clone())?;
            let variant = match format {
                TableFormat::RocksDb { .. } => None,
                TableFormat::LevelDb => {
                    let table = Table::open_for_lookups(&file).map_err(|_| path.clone())?;
                    let options = VerifyOptions {
                        key_format: Some(KeyFormat::Internal),
                        ..self.detect.options(None)
                    };
                    detect(&table, Evidence::Reads(None), options)
                        .ok()
                        .and_then(|d| d.filter)
                        .and_then(|f| f.variant)
                }
            };
            self.loaded.insert(
                live.number,
                Held {
                    path,
                    file,
                    format,
                    variant,
                },
            );
        }
        Ok(&self.loaded[&live.number])
    }
}

/// LevelDB's `Table::InternalGet` at a database's table.
fn leveldb_step(held: &Held, key: &[u8]) -> Result<TableStep, leveldb_filter::Error> {
    let table = Table::open_for_lookups(&held.file)?;
    let policy = held
        .variant
        .map(|v| BloomFilterPolicy::new(10).with_hash(v));
    Ok(
        match probe(&table, policy.as_ref(), KeyFormat::Internal, key)? {
            Probe::PastLastKey => TableStep::PastLastKey,
            Probe::Block {
                may_match: false, ..
            } => TableStep::Absent,
            Probe::Block {
                may_match: true, ..
            } => {
                // LevelDB's `Get` stops at the first entry of the key; a type
                // past 1 is corruption to it (`ParseInternalKey`).
                let entry = entry_type(&table, KeyFormat::Internal, key)?;
                TableStep::Read(
                    entry
                        .map(|byte| KeyEntry {
                            kind: match byte {
                                0 | 1 => EntryKind::of(byte),
                                other => EntryKind::Other(other),
                            },
                            sequence: 0,
                        })
                        .into_iter()
                        .collect(),
                )
            }
        },
    )
}

/// RocksDB's `TableCache::Get` and `BlockBasedTable::Get` at a database's
/// table: the range tombstones that cover the key, then the filter (asked
/// before the index: a key past the last point key of a table whose range
/// tombstones reach further is ruled out by it, and counted so), then the
/// key's entries in the data block.
fn rocksdb_step(
    file: &TableFile,
    key: &[u8],
    skip_filter: bool,
) -> Result<(TableStep, u64), leveldb_filter::Error> {
    let sst = rocksdb::Table::open(file)?;
    let may_match = |may_match: bool| may_match || skip_filter;
    let covering = match sst.key_order() {
        Some(_) => sst.covering_tombstone(key)?,
        None => 0,
    };
    let step = match sst.lookup(key)? {
        Lookup::PastLastKey if !may_match(sst.key_may_match(key)) => TableStep::Absent,
        Lookup::PastLastKey => TableStep::PastLastKey,
        Lookup::Block { may_match: m, .. } | Lookup::Unordered { may_match: m }
            if !may_match(m) =>
        {
            TableStep::Absent
        }
        Lookup::Unordered { .. } => TableStep::Unordered,
        Lookup::Block { handle, .. } => TableStep::Read(sst.entries_in(handle, key)?),
    };
    Ok((step, covering))
}
