//! What the table commands share: reading a table file and telling its
//! format, the `--keys` and `--hash` settings, a report per table with
//! progress on a terminal, and a RocksDB table read through.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use leveldb_filter::format::TABLE_MAGIC;
use leveldb_filter::leveldb::{FilterFound, KeyFormat, KeyStats, Table, VerifyOptions, FOOTER_LEN};
use leveldb_filter::rocksdb::{self, is_rocksdb_table, FilterBits, ROCKSDB_MAGIC};

use crate::input;
use crate::report::{shown, table_error};
use crate::{Failure, Variant};

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

/// Which engine's table a file is: each table command dispatches on it once.
pub(crate) enum Format {
    LevelDb,
    RocksDb,
}

/// A table file, read whole.
pub(crate) struct Loaded {
    pub(crate) bytes: Vec<u8>,
}

impl Loaded {
    /// The file, once its size and last bytes look like a table's.
    pub(crate) fn read(path: &Path) -> Result<Self, Failure> {
        let magics = [TABLE_MAGIC, ROCKSDB_MAGIC];
        let bytes = input::read_table_file(path, &magics, FOOTER_LEN as u64)?;
        Ok(Loaded { bytes })
    }

    /// RocksDB's (its magic, or LevelDB's with a RocksDB filter), or LevelDB's.
    pub(crate) fn format(&self) -> Format {
        if is_rocksdb_table(&self.bytes) {
            Format::RocksDb
        } else {
            Format::LevelDb
        }
    }

    /// The table and one pass over its keys.
    pub(crate) fn open(&self, path: &Path) -> Result<(Table<'_>, KeyStats), Failure> {
        let table = Table::open(&self.bytes).map_err(table_error(path))?;
        let stats = table.key_stats().map_err(table_error(path))?;
        Ok((table, stats))
    }
}

/// Shows `[i/n] path` on stderr while working through many files on a terminal.
struct Progress {
    show: bool,
    total: usize,
}

impl Progress {
    fn new(total: usize) -> Self {
        Progress {
            show: total > 1 && std::io::stderr().is_terminal(),
            total,
        }
    }
    fn at(&self, i: usize, path: &Path) {
        if self.show {
            eprint!("\r\x1b[K[{}/{}] {}", i + 1, self.total, shown(path));
            let _ = std::io::stderr().flush();
        }
    }
    fn done(&self) {
        if self.show {
            eprint!("\r\x1b[K");
        }
    }
}

/// Stdout for one table's report: the progress line goes before its first byte.
struct Out<'p, W: Write> {
    inner: W,
    progress: &'p Progress,
    started: bool,
}

impl<W: Write> Write for Out<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.started {
            self.progress.done();
            self.started = true;
        }
        self.inner.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Runs `each` over the tables, in order. `each` reads and checks its table
/// first and only then writes its report, so a table that fails has one line
/// on stderr and nothing on stdout; the others are still done. False if any
/// table failed or `each` said so; a failed write to stdout ends the run.
pub(crate) fn for_each_table(
    tables: &[PathBuf],
    mut each: impl FnMut(&Path, &mut dyn Write) -> Result<bool, Failure>,
) -> bool {
    let progress = Progress::new(tables.len());
    let mut stdout = io::BufWriter::new(io::stdout().lock());
    let mut all_ok = true;
    for (i, path) in tables.iter().enumerate() {
        progress.at(i, path);
        let mut out = Out {
            inner: &mut stdout,
            progress: &progress,
            started: false,
        };
        let result = each(path, &mut out).and_then(|ok| {
            out.flush()
                .map_err(|e| Failure::Io("writing stdout".into(), e))?;
            Ok(ok)
        });
        progress.done();
        match result {
            Ok(ok) => all_ok &= ok,
            Err(failure @ Failure::Io(..)) => {
                eprintln!("ldbfilter: {failure}");
                return false;
            }
            Err(failure) => {
                eprintln!("ldbfilter: {failure}");
                all_ok = false;
            }
        }
    }
    all_ok
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
        Ok(Some(rocksdb::SstFilter::BlockBased)) => "block-based",
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
    pub(crate) fn read(path: &Path, bytes: &'a [u8]) -> Result<Opened<'a>, Failure> {
        let sst = rocksdb::Table::open(bytes).map_err(table_error(path))?;
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
