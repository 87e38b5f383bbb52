//! `probe`: for each key, the data block the table's index picks and
//! whether the filter lets the engine's lookup read it, as LevelDB's and
//! RocksDB's own lookups decide, damaged tables included.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use leveldb_filter::leveldb::{detect, probe, Basis, Detected, Evidence, Probe, Table};
use leveldb_filter::rocksdb;
use leveldb_filter::BloomFilterPolicy;

use crate::input::{parse_hex, KeyLines, Source};
use crate::report::{answer_word, escaped, shown, table_error, write_error, PAST_LAST_KEY};
use crate::tables::{variant_word, Detect, Format, Loaded};
use crate::Failure;

#[derive(Args)]
pub struct ProbeArgs {
    /// The table file.
    #[arg(value_name = "TABLE")]
    table: PathBuf,
    /// Keys in hex; for a database's table, user keys. Without any (and
    /// without --keys-from), one hex key per line on stdin.
    #[arg(value_name = "KEYHEX")]
    key_hex: Vec<String>,
    /// A file of keys, one hex key per line (`-` for stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "key_hex")]
    keys_from: Option<PathBuf>,
    #[command(flatten)]
    detect: Detect,
}

impl ProbeArgs {
    /// Where the keys come from: the arguments (each checked to be hex),
    /// or the lines of the --keys-from file or stdin, read as they come.
    fn keys(&self) -> Result<KeySource<'_>, Failure> {
        let source = match (&self.keys_from, self.key_hex.is_empty()) {
            (Some(path), _) if path.as_os_str() != "-" => Source::File(path),
            (Some(_), _) | (None, true) => Source::Stdin,
            (None, false) => {
                for key in &self.key_hex {
                    if let Err(what) = parse_hex(key) {
                        return Err(Failure::Input(format!("key {key:?}: {what}")));
                    }
                }
                return Ok(KeySource::Args(self.key_hex.iter()));
            }
        };
        Ok(KeySource::Lines(KeyLines::open(source)?))
    }
}

/// `probe`'s keys: the arguments, or lines read as they come.
enum KeySource<'a> {
    Args(std::slice::Iter<'a, String>),
    Lines(KeyLines<'a>),
}

impl KeySource<'_> {
    /// Writes `KEYHEX OFFSET ANSWER` for each key, `answer` giving the
    /// offset and the answer; the answers so far are flushed before a read
    /// that may wait, so that they come as the keys come.
    fn answer_each(
        mut self,
        out: &mut impl Write,
        mut answer: impl FnMut(&[u8]) -> Result<(String, &'static str), Failure>,
    ) -> Result<(), Failure> {
        loop {
            let (text, key) = match &mut self {
                KeySource::Args(keys) => match keys.next() {
                    Some(text) => (text.as_str(), parse_hex(text).unwrap_or_default()),
                    None => return out.flush().map_err(write_error),
                },
                KeySource::Lines(lines) => {
                    match lines.next_key(|| out.flush().map_err(write_error))? {
                        Some(next) => next,
                        None => return out.flush().map_err(write_error),
                    }
                }
            };
            let (offset, word) = answer(&key)?;
            writeln!(out, "{text} {offset} {word}").map_err(write_error)?;
        }
    }
}

/// `probe`: the table read and checked first, then a line per key as the
/// keys come (a key that is not hex ends the run with an error naming its
/// line; from a regular file, before any answer). A key whose lookup
/// LevelDB fails (a corrupt index block on its path: its `Get` returns
/// `Corruption`) is answered `corrupt`, and the run ends with one line on
/// stderr and exit 1.
pub fn run(args: &ProbeArgs) -> bool {
    let path = &args.table;
    let result = (|| -> Result<Option<String>, Failure> {
        let loaded = Loaded::read(path)?;
        let mut stdout = io::BufWriter::new(io::stdout().lock());
        match loaded.format() {
            Format::LevelDb => leveldb(args, path, &loaded, &mut stdout),
            Format::RocksDb => rocksdb(args, path, &loaded, &mut stdout),
        }
    })();
    match result {
        Ok(None) => true,
        Ok(Some(problem)) => {
            eprintln!("ldbfilter: {}: {problem}", shown(path));
            false
        }
        Err(failure) => {
            eprintln!("ldbfilter: {failure}");
            false
        }
    }
}

/// LevelDB's table, answered as its lookups read it; a problem to say
/// after the answers.
fn leveldb(
    args: &ProbeArgs,
    path: &Path,
    loaded: &Loaded,
    stdout: &mut impl Write,
) -> Result<Option<String>, Failure> {
    let table = Table::open_for_lookups(&loaded.bytes).map_err(table_error(path))?;
    // One pass over the data blocks that checks them: where it passes,
    // detection takes its statistics; a checksum that fails is said
    // after the answers (LevelDB's lookups check none). A data block
    // that does not read leaves the lookups of the others standing, as
    // in LevelDB: detection then takes what reads.
    let checked = Table::open(&loaded.bytes).and_then(|table| table.key_stats());
    let evidence = Evidence::Reads(checked.as_ref().ok());
    let Detected {
        key_format: format,
        filter: found,
    } = detect(&table, evidence, args.detect.options(None)).map_err(table_error(path))?;
    if let Some(found) = found.as_ref().filter(|f| f.basis == Basis::Guess) {
        // Which LevelDB reads the table decides; say so.
        eprintln!(
            "ldbfilter: {}: note: the hash variant of {} is a guess ({}): the table does not tell; --hash signed or unsigned says which reader to answer as",
            shown(path),
            escaped(&found.filter.name),
            variant_word(found)
        );
    }
    let policy = found
        .and_then(|found| found.variant)
        .map(|variant| BloomFilterPolicy::new(10).with_hash(variant));
    let keys = args.keys()?;
    let mut corrupt = (0, None);
    keys.answer_each(stdout, |key| {
        Ok(match probe(&table, policy.as_ref(), format, key) {
            Ok(Probe::PastLastKey) => ("-".to_string(), PAST_LAST_KEY),
            Ok(Probe::Block { offset, may_match }) => (offset.to_string(), answer_word(may_match)),
            Err(e) => {
                corrupt.0 += 1;
                corrupt.1.get_or_insert(e);
                ("-".to_string(), CORRUPT)
            }
        })
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
    let sst = rocksdb::Table::open(&loaded.bytes).map_err(table_error(path))?;
    args.keys()?.answer_each(stdout, |key| {
        Ok(match sst.data_block_for(key).map_err(table_error(path))? {
            None => ("-".to_string(), PAST_LAST_KEY),
            Some(handle) => (
                handle.offset.to_string(),
                answer_word(sst.key_may_match(key)),
            ),
        })
    })?;
    Ok(None)
}
