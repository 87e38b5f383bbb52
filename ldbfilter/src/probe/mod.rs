//! `probe`: for each key, the data block the table's index picks and
//! whether the filter lets the engine's lookup read it, as LevelDB's and
//! RocksDB's own lookups decide, damaged tables included; for a database,
//! the live tables a `Get` consults, in its order, and where it stops.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

mod database;

use clap::Args;
use leveldb_filter::leveldb::{detect, probe, Basis, Detected, Evidence, Probe, Table};
use leveldb_filter::pebble::{self as pebble_table, FilterAnswer};
use leveldb_filter::rocksdb::{self, Lookup};
use leveldb_filter::{BloomFilterPolicy, TableFormat};

use crate::input::{parse_hex, KeyLines, Source};
use crate::report::{
    answer_word, escaped, hex, one_line_json, shown, table_error, write_error, PathJson,
    PAST_LAST_KEY,
};
use crate::tables::{variant_word, Detect, ErrorJson, Loaded};
use crate::targets::Target;
use crate::{Failure, Status};

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
        self.answer_while(out, |text, key| Ok((answer(text, key)?, true)))
            .map(|_| ())
    }

    /// As [`answer_each`](Self::answer_each), while `answer` says to go on
    /// (its second value); returns whether keys may remain (it stopped
    /// because `answer` said so).
    fn answer_while(
        &mut self,
        out: &mut impl Write,
        mut answer: impl FnMut(&str, &[u8]) -> Result<(String, bool), Failure>,
    ) -> Result<bool, Failure> {
        loop {
            let (text, key) = match self {
                KeySource::Args(keys, text) => match keys.next() {
                    Some(key) if *text => (key.as_str(), key.as_bytes().to_vec()),
                    Some(key) => (key.as_str(), parse_hex(key).unwrap_or_default()),
                    None => return out.flush().map_err(write_error).map(|_| false),
                },
                KeySource::Lines(lines) => {
                    match lines.next_key(|| out.flush().map_err(write_error))? {
                        Some(next) => next,
                        None => return out.flush().map_err(write_error).map(|_| false),
                    }
                }
            };
            let (lines, go_on) = answer(text, &key)?;
            out.write_all(lines.as_bytes()).map_err(write_error)?;
            if !go_on {
                return Ok(true);
            }
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
        true => database::database(args, path, &mut stdout),
        false => Loaded::read(&Target {
            path: path.clone(),
            live: None,
        })
        .and_then(|loaded| match loaded.format {
            TableFormat::LevelDb => leveldb(args, path, &loaded, &mut stdout),
            TableFormat::RocksDb { .. } => rocksdb(args, path, &loaded, &mut stdout),
            TableFormat::Pebble { .. } => pebble(args, path, &loaded, &mut stdout),
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
pub(super) const CORRUPT: &str = "corrupt";

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

/// Pebble's table: for each key `OFFSET may-match|absent`, as Pebble's
/// `SeekPrefixGE` answers it: the filter first, asked with the key's
/// `Split` prefix, then the data block the index points to (`-
/// past-last-key` past the last key). Under a comparer this crate does not
/// know, the filter cannot be asked (no prefix) and no block is sought.
fn pebble(
    args: &ProbeArgs,
    path: &Path,
    loaded: &Loaded,
    stdout: &mut impl Write,
) -> Result<Option<String>, Failure> {
    let table = pebble_table::Table::open(&loaded.file).map_err(table_error(path))?;
    let comparer = table.comparer();
    if comparer.is_none() {
        crate::report::say(format_args!(
            "{}: note: comparer {}, whose Split only its own code knows: the filter is not asked and no data block is sought (every key: - may-match)",
            shown(path),
            escaped(&table.props().comparer().unwrap_or_default())
        ));
    }
    let mut malformed = 0;
    args.keys()?.answer_each(stdout, |text, key| {
        let answer = table.filter_answer(key);
        malformed += usize::from(answer == Some(FilterAnswer::Malformed));
        let may_match = answer.is_none_or(|a| a.may_match());
        let (offset, word) = match comparer {
            None => (None, answer_word(true)),
            Some(_) => match table.data_block_for(key).map_err(table_error(path))? {
                None if may_match => (None, PAST_LAST_KEY),
                None => (None, answer_word(false)),
                Some(handle) => (Some(handle.offset), answer_word(may_match)),
            },
        };
        table_answer(args, path, text, key, offset, word)
    })?;
    Ok((malformed > 0).then(|| {
        format!("{malformed} keys answered may-match where the filter does not read as Pebble writes it (Pebble's reader would fail or answer absent)")
    }))
}
