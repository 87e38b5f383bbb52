//! What the table commands share: reading a table file and telling its
//! format, the `--keys` and `--hash` settings, a report per table with
//! progress on a terminal, and a RocksDB table read through.

use std::collections::BTreeMap;
use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::mpsc;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use leveldb_filter::format::TableFile;
use leveldb_filter::leveldb::{FilterFound, KeyFormat, KeyStats, Table, VerifyOptions};
use leveldb_filter::rocksdb::{self, FilterBits};
use leveldb_filter::TableFormat;
use rayon::iter::{ParallelBridge, ParallelIterator};

use crate::input;
use crate::report::{escaped, one_line_json, table_error, PathJson};
use crate::targets::{Database, Inputs, Target, Targets};
use crate::{Failure, Status, Variant};

/// `--keys`, `--hash`: what to take as given instead of detecting it.
#[derive(Args)]
pub struct Detect {
    /// Key format: `internal` for a database's .ldb files, `user` for tables
    /// written directly by a TableBuilder.
    #[arg(long, value_enum, default_value_t = KeysArg::Auto)]
    keys: KeysArg,
    /// Hash variant of the filter: `signed` for LevelDB <= 1.17 and RocksDB's
    /// legacy filter. Without it, from the policy name and the table's keys.
    #[arg(long, value_enum)]
    hash: Option<Variant>,
}

#[cfg(test)]
impl Detect {
    /// Nothing taken as given: as the command line without `--keys` or
    /// `--hash`.
    pub(crate) fn auto() -> Detect {
        Detect {
            keys: KeysArg::Auto,
            hash: None,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum KeysArg {
    Auto,
    User,
    Internal,
}

impl Detect {
    pub(crate) fn options(&self, bits_per_key: Option<usize>) -> VerifyOptions {
        VerifyOptions {
            key_format: match self.keys {
                KeysArg::Auto => None,
                KeysArg::User => Some(KeyFormat::User),
                KeysArg::Internal => Some(KeyFormat::Internal),
            },
            variant: self.hash.map(Variant::hash_variant),
            bits_per_key,
        }
    }
}

/// A table file, opened to be read by block, and its format: each table
/// command dispatches on it once.
pub(crate) struct Loaded {
    pub(crate) file: TableFile,
    pub(crate) format: TableFormat,
}

impl Loaded {
    /// The file, once its size and last bytes look like a table's (and,
    /// for a database's live table, its size is the one the MANIFEST
    /// records).
    pub(crate) fn read(target: &Target) -> Result<Self, Failure> {
        let path = &target.path;
        if let Some(live) = &target.live {
            let len = std::fs::metadata(path)
                .map_err(|e| Failure::Unreadable {
                    path: path.clone(),
                    what: e.to_string(),
                })?
                .len();
            if len != live.size {
                return Err(Failure::File {
                    path: path.clone(),
                    what: format!(
                        "is {len} bytes, the MANIFEST records {}{} (level {}): truncated or replaced",
                        live.size,
                        match live.backing {
                            Some(_) => format!(" for the backing table of virtual table {}", live.number),
                            None => String::new(),
                        },
                        live.level
                    ),
                    hint: Some(crate::report::DAMAGED),
                });
            }
        }
        let (file, format) = input::open_table_file(path)?;
        Ok(Loaded { file, format })
    }

    /// The table and one pass over its keys.
    pub(crate) fn open(&self, path: &Path) -> Result<(Table<'_>, KeyStats), Failure> {
        let table = Table::open(&self.file).map_err(table_error(path))?;
        let stats = table.key_stats().map_err(table_error(path))?;
        Ok((table, stats))
    }
}

/// Where a database holds the table, for a text line: ` (level 1)`,
/// with the column family where it is not `default`.
pub(crate) fn place(target: &Target) -> String {
    let Some(live) = &target.live else {
        return String::new();
    };
    let family = match live.column_family == "default" {
        true => String::new(),
        false => format!(", column family {}", escaped(&live.column_family)),
    };
    // Pebble's virtual table: its own number and bounds, in its backing's file.
    let virtual_table = live.backing.map_or(String::new(), |_| {
        let (smallest, largest) = &live.key_range;
        format!(
            ", virtual table {:06} over {}..{}",
            live.number,
            crate::report::hex(smallest),
            crate::report::hex(largest)
        )
    });
    format!(" (level {}{family}{virtual_table})", live.level)
}

/// The fields every command's JSON object for a table starts with, the
/// same for LevelDB and RocksDB: `type` (`table`), `path`, `format`
/// (`leveldb` or `rocksdb`), and where a database holds it (`level`,
/// `file_number`, `column_family`; null for a table named alone).
#[derive(serde::Serialize)]
pub(crate) struct TableJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    path: PathJson<'a>,
    format: &'static str,
    level: Option<u32>,
    file_number: Option<u64>,
    column_family: Option<&'a str>,
}

impl<'a> TableJson<'a> {
    pub(crate) fn new(target: &'a Target, format: &'static str) -> Self {
        let live = target.live.as_ref();
        TableJson {
            kind: "table",
            path: PathJson::new(&target.path),
            format,
            level: live.map(|l| l.level),
            file_number: live.map(|l| l.number),
            column_family: live.map(|l| l.column_family.as_str()),
        }
    }
}

/// One table's report: what goes to stdout (text lines, or a JSON
/// object a line), whether all is well with the table, and whether its
/// filter could not be checked (counted apart; a problem only where
/// `well` says so, as `verify --strict` makes it).
pub(crate) struct Report {
    pub(crate) out: Vec<u8>,
    pub(crate) well: bool,
    pub(crate) not_checked: bool,
}

/// Counts for the run summary: the tables worked on (each well, with a
/// problem, or unreadable), and the problems of the databases themselves
/// (their MANIFEST, a live table missing).
#[derive(Default)]
struct Tally {
    tables: usize,
    well: usize,
    not_checked: usize,
    problems: usize,
    unreadable: usize,
    databases: usize,
}

impl Tally {
    fn failed(&mut self, failure: &Failure) {
        match failure.status() {
            Status::Problem => self.problems += 1,
            _ => self.unreadable += 1,
        }
    }
}

/// Stdout, with the progress bar (on a terminal) kept off its lines.
struct Output {
    stdout: io::BufWriter<io::StdoutLock<'static>>,
    bar: ProgressBar,
    json: bool,
}

impl Output {
    fn write(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        let Output { stdout, bar, .. } = self;
        bar.suspend(|| stdout.write_all(bytes).and_then(|()| stdout.flush()))
            .map_err(Failure::Write)
    }

    /// A failure: an object in the JSON stream, else a line on stderr.
    fn failure(&mut self, failure: &Failure) -> Result<(), Failure> {
        if self.json {
            let line = one_line_json(&ErrorJson::new(failure)).map_err(Failure::Write)?;
            return self.write(format!("{line}\n").as_bytes());
        }
        self.bar
            .suspend(|| crate::report::say(format_args!("{failure}")));
        Ok(())
    }
}

/// What a command says of each database before its tables, if anything.
pub(crate) type Header = fn(&Database, bool) -> Result<Vec<u8>, Failure>;

/// Runs `each` over the tables on every core (`--jobs`), writing each
/// report in the tables' order as soon as those before it are written, a
/// progress bar on a terminal, and a summary after a directory or many
/// tables. The problems found before any table is read are said in their
/// place among the tables. A closed stdout stops the run quietly.
pub(crate) fn run_tables(
    command: &'static str,
    inputs: &Inputs,
    json: bool,
    header: Option<Header>,
    each: impl Fn(&Target) -> Result<Report, Failure> + Sync,
) -> Status {
    let targets = inputs.targets();
    let mut out = Output {
        stdout: io::BufWriter::new(io::stdout().lock()),
        bar: progress_bar(&targets.tables),
        json,
    };
    let mut tally = Tally::default();
    let mut status = Status::Well;
    let result = headers(&targets, header, &mut out)
        .and_then(|()| {
            run(
                &targets,
                inputs.jobs,
                &mut out,
                &mut tally,
                &mut status,
                &each,
            )
        })
        .and_then(|()| {
            out.bar.finish_and_clear();
            match targets.many() {
                true => summary(command, &targets, &tally, status, &mut out),
                false => Ok(()),
            }
        });
    out.bar.finish_and_clear();
    match result {
        Ok(()) => status,
        Err(failure) => {
            if failure.status() != Status::Closed {
                crate::report::say(format_args!("{failure}"));
            }
            status.max(failure.status())
        }
    }
}

/// What the command says of each database, before any table.
fn headers(targets: &Targets, header: Option<Header>, out: &mut Output) -> Result<(), Failure> {
    let Some(header) = header else {
        return Ok(());
    };
    for database in &targets.databases {
        out.write(&header(database, out.json)?)?;
    }
    Ok(())
}

fn run(
    targets: &Targets,
    jobs: Option<u16>,
    out: &mut Output,
    tally: &mut Tally,
    status: &mut Status,
    each: &(impl Fn(&Target) -> Result<Report, Failure> + Sync),
) -> Result<(), Failure> {
    let mut problems = targets.problems.iter().peekable();
    // The problems found before table `i` is read, said in their place.
    let mut problems_before =
        |i: usize, tally: &mut Tally, status: &mut Status, out: &mut Output| {
            while let Some((_, problem)) = problems.next_if(|(at, _)| *at <= i) {
                tally.databases += 1;
                *status = (*status).max(problem.status());
                out.failure(problem)?;
            }
            Ok::<(), Failure>(())
        };
    let mut deliver = |i: usize, report: Result<Report, Failure>| {
        problems_before(i, tally, status, out)?;
        tally.tables += 1;
        let written = match report {
            Ok(report) => {
                match (report.well, report.not_checked) {
                    (true, false) => tally.well += 1,
                    (_, true) => tally.not_checked += 1,
                    (false, false) => tally.problems += 1,
                }
                if !report.well {
                    *status = (*status).max(Status::Problem);
                }
                out.write(&report.out)
            }
            Err(failure) => {
                tally.failed(&failure);
                *status = (*status).max(failure.status());
                out.failure(&failure)
            }
        };
        // The file's size asked again only for a bar that is drawn.
        if !out.bar.is_hidden() {
            out.bar.inc(file_len(&targets.tables[i].path));
            out.bar
                .set_message(format!("{}/{} tables", i + 1, targets.tables.len()));
        }
        written?;
        // After the last table, the problems found after it.
        match i + 1 == targets.tables.len() {
            true => problems_before(usize::MAX, tally, status, out),
            false => Ok(()),
        }
    };
    if targets.tables.is_empty() {
        return problems_before(usize::MAX, tally, status, out);
    }
    // One table, or one job: no threads (nor their stacks and arenas).
    if targets.tables.len() < 2 || jobs == Some(1) {
        for (i, target) in targets.tables.iter().enumerate() {
            deliver(i, each(target))?;
        }
        return Ok(());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.map_or(0, usize::from))
        .build()
        .map_err(|e| Failure::Input(format!("starting worker threads: {e}")))?;
    let stop = AtomicBool::new(false);
    let (send, receive) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            // `par_bridge` hands the tables out in order: the reports come
            // back nearly in order, and few wait to be written.
            pool.install(|| {
                targets
                    .tables
                    .iter()
                    .enumerate()
                    .par_bridge()
                    .for_each_with(send, |send, (i, target)| {
                        if !stop.load(AtomicOrdering::Relaxed) {
                            let _ = send.send((i, each(target)));
                        }
                    })
            })
        });
        let mut waiting = BTreeMap::new();
        let mut next = 0;
        for (i, report) in receive {
            waiting.insert(i, report);
            while let Some(report) = waiting.remove(&next) {
                if let Err(failure) = deliver(next, report) {
                    stop.store(true, AtomicOrdering::Relaxed);
                    return Err(failure);
                }
                next += 1;
            }
        }
        Ok(())
    })
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Counts, bytes and the time left, on stderr where it is a terminal and
/// there is more than one table.
fn progress_bar(tables: &[Target]) -> ProgressBar {
    if tables.len() < 2 || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bytes = tables.iter().map(|t| file_len(&t.path)).sum();
    let bar = ProgressBar::with_draw_target(Some(bytes), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{bar:30} {msg}, {binary_bytes}/{binary_total_bytes}, {elapsed} elapsed, {eta} left",
    );
    if let Ok(style) = style {
        bar.set_style(style);
    }
    bar.set_message(format!("0/{} tables", tables.len()));
    bar
}

/// The run summary: a line, or a JSON object.
fn summary(
    command: &'static str,
    targets: &Targets,
    tally: &Tally,
    status: Status,
    out: &mut Output,
) -> Result<(), Failure> {
    let exit_code = status.exit_status();
    let line = if out.json {
        let summary = SummaryJson {
            kind: "summary",
            command,
            tables: tally.tables,
            well: tally.well,
            not_checked: tally.not_checked,
            problems: tally.problems,
            unreadable: tally.unreadable,
            database_problems: tally.databases,
            skipped: targets.skipped,
            exit_code,
        };
        one_line_json(&summary).map_err(Failure::Write)?
    } else {
        let mut line = format!(
            "summary: {} tables: {} well, {} with problems, {} unreadable",
            tally.tables, tally.well, tally.problems, tally.unreadable
        );
        if tally.not_checked > 0 {
            line.push_str(&format!(
                "; {} not checked (a filter this crate cannot rebuild: not a problem in the data unless --strict)",
                tally.not_checked
            ));
        }
        if tally.databases > 0 {
            line.push_str(&format!(
                "; {} problems of the databases themselves (MANIFEST, missing tables)",
                tally.databases
            ));
        }
        if targets.skipped > 0 {
            line.push_str(&format!(
                "; {} other files in the directories skipped (logs, MANIFEST, files not live: --all-files takes every table file)",
                targets.skipped
            ));
        }
        line.push_str(&format!("; exit {exit_code}"));
        line
    };
    out.write(format!("{line}\n").as_bytes())
}

/// The summary object of `--json`.
#[derive(serde::Serialize)]
struct SummaryJson {
    #[serde(rename = "type")]
    kind: &'static str,
    command: &'static str,
    tables: usize,
    well: usize,
    /// Tables whose filter could not be rebuilt (NOT CHECKED): apart from
    /// `well` and `problems`.
    not_checked: usize,
    problems: usize,
    unreadable: usize,
    /// Problems of the databases beyond their tables: a MANIFEST that does
    /// not read, a live table missing.
    database_problems: usize,
    skipped: usize,
    exit_code: u8,
}

/// A failure in the `--json` stream.
#[derive(serde::Serialize)]
pub(crate) struct ErrorJson<'f> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    path: Option<PathJson<'f>>,
    /// `damaged` (exit 1) or `unreadable` (exit 2).
    problem: &'static str,
    message: String,
    hint: Option<&'static str>,
}

impl<'f> ErrorJson<'f> {
    pub(crate) fn new(failure: &'f Failure) -> Self {
        let (path, message, hint) = match failure {
            Failure::File { path, what, hint } => (Some(PathJson::new(path)), what.clone(), *hint),
            Failure::Unreadable { path, what } => (Some(PathJson::new(path)), what.clone(), None),
            other => (None, other.to_string(), None),
        };
        ErrorJson {
            kind: "error",
            path,
            problem: match failure.status() {
                Status::Problem => "damaged",
                _ => "unreadable",
            },
            message,
            hint,
        }
    }
}

/// `unsigned`, `signed` or `unsigned-or-signed`: what the table says of
/// its filter's hash variant; `unknown` for a policy the crate does not know.
pub(crate) fn variant_word(found: &FilterFound<'_, '_>) -> String {
    found
        .found
        .map_or_else(|| "unknown".to_string(), |v| v.to_string())
}

/// The table's filter kind: `full`, `partitioned` or `block-based`.
pub(crate) fn filter_kind(sst: &rocksdb::Table<'_>) -> &'static str {
    match sst.filter() {
        Ok(Some(rocksdb::SstFilter::Full(_))) => "full",
        Ok(Some(rocksdb::SstFilter::Partitioned(_))) => "partitioned",
        Ok(Some(rocksdb::SstFilter::BlockBased(_))) => "block-based",
        Ok(Some(_)) => "other",
        Ok(None) => "none",
        Err(_) => "unreadable",
    }
}

/// Each filter of the table (the full filter, or each distinct partition
/// in file order: one per index entry in a table RocksDB wrote), or none.
pub(crate) fn filters<'s>(sst: &'s rocksdb::Table<'_>) -> Vec<Result<&'s FilterBits<'s>, String>> {
    match sst.filter() {
        Ok(Some(rocksdb::SstFilter::Full(bits))) => vec![Ok(bits)],
        Ok(Some(rocksdb::SstFilter::Partitioned(partitions))) => partitions
            .distinct()
            .map(|(_, p)| p.map_err(ToString::to_string))
            .collect(),
        Ok(_) => Vec::new(),
        Err(e) => vec![Err(e.to_string())],
    }
}

impl<'a> Opened<'a> {
    /// The table, its keys walked, and its filter checked against them.
    pub(crate) fn read(path: &Path, file: &'a TableFile) -> Result<Opened<'a>, Failure> {
        let sst = rocksdb::Table::open(file).map_err(table_error(path))?;
        let mut range: Option<(Vec<u8>, Vec<u8>)> = None;
        let walk = sst
            .for_each_key(|key, _| match &mut range {
                None => range = Some((key.to_vec(), key.to_vec())),
                Some((_, last)) => {
                    last.clear();
                    last.extend_from_slice(key);
                }
            })
            .map_err(table_error(path))?;
        let check = sst.check_filter().map_err(table_error(path))?;
        Ok(Opened {
            sst,
            walk,
            check,
            range,
        })
    }
}

/// A table read through: its keys walked (the first and last user keys
/// kept) and its filter checked.
pub(crate) struct Opened<'a> {
    pub(crate) sst: rocksdb::Table<'a>,
    pub(crate) walk: rocksdb::KeyStats,
    pub(crate) check: rocksdb::Verdict,
    pub(crate) range: Option<(Vec<u8>, Vec<u8>)>,
}
