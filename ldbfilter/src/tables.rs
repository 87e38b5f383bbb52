//! `inspect`, `probe` and `verify`: filters in real table files.

use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use leveldb_filter::format::TABLE_MAGIC;
use leveldb_filter::leveldb::{
    detect, measure_fpr, probe, verify_filter, Basis, BloomStats, Detected, Evidence, FilterFound,
    KeyFormat, KeyStats, MeasuredFpr, Probe, Table, Verdict, VerifyOptions, FOOTER_LEN,
};
use leveldb_filter::rocksdb::{is_rocksdb_table, ROCKSDB_MAGIC};
use leveldb_filter::{BloomFilterPolicy, FilterBlock, HashVariant};

use crate::input::{self, parse_hex, KeyLines, Source};
use crate::report::{answer_word, table_error, write_error, HandleJson, PAST_LAST_KEY};
use crate::{escaped, rocks, shown, Failure};

/// `--keys`, `--hash`: what to take as given instead of detecting it.
#[derive(Args)]
pub struct Detect {
    /// Key format: `internal` for a database's .ldb files, `user` for tables
    /// written directly by a TableBuilder.
    #[arg(long, value_enum, default_value_t = KeysArg::Auto)]
    keys: KeysArg,
    /// Hash variant of the filter: `signed` for LevelDB <= 1.17 and RocksDB's
    /// legacy filter.
    #[arg(long, value_enum, default_value_t = HashArg::Auto)]
    hash: HashArg,
}

#[derive(Clone, Copy, ValueEnum)]
enum KeysArg {
    Auto,
    User,
    Internal,
}

#[derive(Clone, Copy, ValueEnum)]
enum HashArg {
    Auto,
    Unsigned,
    Signed,
}

impl Detect {
    fn options(&self, bits_per_key: Option<usize>) -> VerifyOptions {
        VerifyOptions {
            key_format: match self.keys {
                KeysArg::Auto => None,
                KeysArg::User => Some(KeyFormat::User),
                KeysArg::Internal => Some(KeyFormat::Internal),
            },
            variant: match self.hash {
                HashArg::Auto => None,
                HashArg::Unsigned => Some(HashVariant::Unsigned),
                HashArg::Signed => Some(HashVariant::Signed),
            },
            bits_per_key,
        }
    }
}

#[derive(Args)]
pub struct InspectArgs {
    /// Table files (.ldb, .sst).
    #[arg(required = true, value_name = "TABLE")]
    tables: Vec<PathBuf>,
    /// One JSON object per table, one per line.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    detect: Detect,
}

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

#[derive(Args)]
pub struct VerifyArgs {
    /// Table files (.ldb, .sst).
    #[arg(required = true, value_name = "TABLE")]
    tables: Vec<PathBuf>,
    /// Bits per key, instead of inferring it from the filters' sizes.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=crate::MAX_BITS_PER_KEY))]
    bits_per_key: Option<u32>,
    #[command(flatten)]
    detect: Detect,
}

/// A table file, read whole.
struct Loaded {
    bytes: Vec<u8>,
}

impl Loaded {
    /// The file, once its size and last bytes look like a table's.
    fn read(path: &Path) -> Result<Self, Failure> {
        let magics = [TABLE_MAGIC, ROCKSDB_MAGIC];
        let bytes = input::read_table_file(path, &magics, FOOTER_LEN as u64)?;
        Ok(Loaded { bytes })
    }

    /// The table and one pass over its keys.
    fn open(&self, path: &Path) -> Result<(Table<'_>, KeyStats), Failure> {
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
fn for_each_table(
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

pub fn verify(args: &VerifyArgs) -> bool {
    for_each_table(&args.tables, |path, out| {
        let loaded = Loaded::read(path)?;
        if is_rocksdb_table(&loaded.bytes) {
            let (line, ok) = rocks::verify(path, &loaded.bytes)?;
            writeln!(out, "{line}").map_err(write_error)?;
            return Ok(ok);
        }
        let (table, stats) = loaded.open(path)?;
        let verdict = verify_filter(
            &table,
            &stats,
            args.detect.options(args.bits_per_key.map(|b| b as usize)),
        )
        .map_err(table_error(path))?;
        let path = shown(path);
        let (line, ok) = match verdict {
            Verdict::NoFilter => (format!("{path}: no filter block"), true),
            Verdict::UnknownPolicy { name } => (
                format!("{path}: MISMATCH unknown filter policy {}", escaped(&name)),
                false,
            ),
            Verdict::Match {
                name,
                variant,
                key_format,
                bits_per_key,
            } => (
                format!("{path}: OK {name} {variant} {key_format} {bits_per_key}"),
                true,
            ),
            Verdict::Mismatch { name, difference } => (
                format!("{path}: MISMATCH {}: {difference}", escaped(&name)),
                false,
            ),
            other => (format!("{path}: NOT CHECKED {other:?}"), false),
        };
        writeln!(out, "{line}").map_err(write_error)?;
        Ok(ok)
    })
}

/// `unsigned`, `signed` or `unsigned-or-signed`: what the table says of
/// its filter's hash variant; `unknown` for a policy the crate does not know.
fn variant_word(found: &FilterFound<'_, '_>) -> String {
    found
        .found
        .map_or_else(|| "unknown".to_string(), |v| v.to_string())
}

/// `probe`: the table read and checked first, then a line per key as the
/// keys come (a key that is not hex ends the run with an error naming its
/// line; from a regular file, before any answer). A key whose lookup
/// LevelDB fails (a corrupt index block on its path: its `Get` returns
/// `Corruption`) is answered `corrupt`, and the run ends with one line on
/// stderr and exit 1.
pub fn probe_keys(args: &ProbeArgs) -> bool {
    let path = &args.table;
    let result = (|| -> Result<Option<String>, Failure> {
        let loaded = Loaded::read(path)?;
        let mut stdout = io::BufWriter::new(io::stdout().lock());
        if is_rocksdb_table(&loaded.bytes) {
            let sst = rocks::open_for_probes(path, &loaded.bytes)?;
            let keys = args.keys()?;
            keys.answer_each(&mut stdout, |key| rocks::answer(path, &sst, key))?;
            return Ok(None);
        }
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
        keys.answer_each(&mut stdout, |key| {
            Ok(match probe(&table, policy.as_ref(), format, key) {
                Ok(Probe::PastLastKey) => ("-".to_string(), PAST_LAST_KEY),
                Ok(Probe::Block { offset, may_match }) => {
                    (offset.to_string(), answer_word(may_match))
                }
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

/// `probe`'s answer for a key whose lookup meets a corrupt index block.
pub(crate) const CORRUPT: &str = "corrupt";

pub fn inspect(args: &InspectArgs) -> bool {
    for_each_table(&args.tables, |path, out| {
        let loaded = Loaded::read(path)?;
        if is_rocksdb_table(&loaded.bytes) {
            rocks::inspect(path, &loaded.bytes, args.json, out)?;
            return Ok(true);
        }
        let (table, stats) = loaded.open(path)?;
        let Detected {
            key_format: format,
            filter: found,
        } = detect(&table, Evidence::Stats(&stats), args.detect.options(None))
            .map_err(table_error(path))?;
        let report = Report {
            path,
            table: &table,
            stats: &stats,
            key_format: format,
            filter: found,
        };
        if args.json {
            report.json(out)
        } else {
            report.text(out)
        }
        .map_err(write_error)?;
        Ok(true)
    })
}

/// `inspect`'s report of one table: as text, a line per filter written as
/// it is computed; as JSON, one object (its filters' statistics, at most one
/// a 2 KiB piece of the file, held until it is written).
struct Report<'r, 't, 'a> {
    path: &'r Path,
    table: &'r Table<'a>,
    stats: &'r KeyStats,
    key_format: KeyFormat,
    filter: Option<FilterFound<'t, 'a>>,
}

impl Report<'_, '_, '_> {
    fn compressions(&self) -> Vec<String> {
        self.stats
            .compressions
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// The stored filter block parsed, or what is wrong with it.
    fn parsed(&self) -> Option<Result<FilterBlock<'_>, String>> {
        let found = self.filter.as_ref()?;
        Some(FilterBlock::parse(&found.filter.block.contents).map_err(|e| e.to_string()))
    }

    /// Each stored filter's statistics, with the keys the table puts in it.
    fn filter_stats<'s>(
        &'s self,
        block: &FilterBlock<'s>,
    ) -> impl Iterator<Item = BloomStats> + 's {
        let counts = &self.stats.keys_per_filter;
        block
            .filters()
            .enumerate()
            .map(move |(i, f)| BloomStats::new(f, counts.get(i).copied().unwrap_or(0)))
    }

    /// The text report: the table's details, a line per filter, then a
    /// one-line summary.
    fn text(&self, out: &mut dyn Write) -> io::Result<()> {
        self.details(out)?;
        self.summary(out)
    }

    fn details(&self, out: &mut dyn Write) -> io::Result<()> {
        let table = self.table;
        writeln!(out, "{}", shown(self.path))?;
        writeln!(out, "  file size        {} bytes", table.file().len())?;
        let (meta, index) = (table.metaindex_handle(), table.index_handle());
        writeln!(
            out,
            "  metaindex        offset {} size {}",
            meta.offset, meta.size
        )?;
        writeln!(
            out,
            "  index            offset {} size {}",
            index.offset, index.size
        )?;
        writeln!(out, "  compression      {}", self.compressions().join(", "))?;
        writeln!(out, "  data blocks      {}", self.stats.data_blocks)?;
        writeln!(out, "  keys             {}", self.stats.keys)?;
        writeln!(out, "  key format       {}", self.key_format)?;
        let Some(found) = &self.filter else {
            return writeln!(out, "  filter           none");
        };
        let block = &found.filter.block;
        writeln!(out, "  filter policy    {}", escaped(&found.filter.name))?;
        writeln!(
            out,
            "  hash variant     {} ({})",
            variant_word(found),
            found.basis
        )?;
        let (offset, size) = (block.handle.offset, block.contents.len());
        writeln!(out, "  filter block     offset {offset} size {size}")?;
        let parsed = match self.parsed() {
            Some(Ok(parsed)) => parsed,
            Some(Err(problem)) => return writeln!(out, "  filter problem   {problem}"),
            None => return Ok(()),
        };
        writeln!(out, "  base_lg          {}", parsed.base_lg())?;
        writeln!(out, "  filters          {}", parsed.len())?;
        writeln!(
            out,
            "  {:>6} {:>6} {:>8} {:>3} {:>8} {:>6} {:>10} {:>8}",
            "filter", "keys", "bits", "k", "bits/key", "set", "est. fpr", "est. keys"
        )?;
        for (i, st) in self.filter_stats(&parsed).enumerate() {
            if st.bits == 0 {
                writeln!(out, "  {i:>6} {:>6} {:>8}", st.keys, "empty")?;
                continue;
            }
            writeln!(
                out,
                "  {i:>6} {:>6} {:>8} {:>3} {:>8.2} {:>6.3} {:>10.6} {:>8}",
                st.keys,
                st.bits,
                st.k,
                st.bits_per_key(),
                st.share_set(),
                st.estimated_fpr(),
                st.estimated_keys()
            )?;
        }
        Ok(())
    }

    fn json(&self, out: &mut dyn Write) -> io::Result<()> {
        let table = self.table;
        let (meta, index) = (table.metaindex_handle(), table.index_handle());
        let parsed = self.parsed();
        let filter = self.filter.as_ref().map(|found| FilterJson {
            policy: &found.filter.name,
            hash_variant: variant_word(found),
            hash_variant_basis: found.basis.to_string(),
            offset: found.filter.block.handle.offset,
            size: found.filter.block.contents.len(),
            base_lg: match &parsed {
                Some(Ok(parsed)) => Some(parsed.base_lg()),
                _ => None,
            },
            problem: match &parsed {
                Some(Err(problem)) => Some(problem.clone()),
                _ => None,
            },
            filters: match &parsed {
                Some(Ok(parsed)) => self.filter_stats(parsed).map(StatJson::from).collect(),
                _ => Vec::new(),
            },
            measured_fpr: self.measured().map(MeasuredJson::from),
        });
        let report = TableJson {
            path: crate::PathJson::new(self.path),
            table: "leveldb",
            file_size: table.file().len(),
            metaindex: HandleJson::from(meta),
            index: HandleJson::from(index),
            compression: self.compressions(),
            data_blocks: self.stats.data_blocks,
            keys: self.stats.keys,
            key_format: self.key_format.to_string(),
            filter,
        };
        writeln!(out, "{}", crate::one_line_json(&report)?)
    }

    /// The false-positive rate measured on the table's keys' neighbours,
    /// where the filter reads.
    fn measured(&self) -> Option<MeasuredFpr> {
        let found = self.filter.as_ref()?;
        let policy = BloomFilterPolicy::new(10).with_hash(found.variant?);
        measure_fpr(self.table, &policy, self.key_format).ok()
    }

    /// The last line of the text report.
    fn summary(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut line = format!(
            "summary: {}: leveldb table, {} data blocks, {} keys ({})",
            shown(self.path),
            self.stats.data_blocks,
            self.stats.keys,
            self.key_format
        );
        match &self.filter {
            None => line.push_str(", no filter"),
            Some(found) => {
                let _ = write!(
                    line,
                    ", filter {} {}",
                    escaped(&found.filter.name),
                    variant_word(found)
                );
                if let Some(Ok(parsed)) = self.parsed() {
                    let (mut bits, mut keys, mut expected) = (0usize, 0usize, 0.0);
                    for st in self.filter_stats(&parsed) {
                        bits += st.bits;
                        keys += st.keys;
                        if st.bits > 0 {
                            expected += st.estimated_fpr() * st.keys as f64;
                        }
                    }
                    let _ = write!(
                        line,
                        ", {} filters, {:.2} bits/key, fpr estimated from bits set {:.4}%",
                        parsed.len(),
                        bits as f64 / keys.max(1) as f64,
                        100.0 * expected / keys.max(1) as f64
                    );
                }
                if let Some(m) = self.measured() {
                    let _ = write!(
                        line,
                        ", measured on {} neighbouring absent keys {:.4}%",
                        m.probed,
                        100.0 * m.rate()
                    );
                }
            }
        }
        writeln!(out, "{line}")
    }
}

/// `inspect --json`'s object for a LevelDB table.
#[derive(serde::Serialize)]
struct TableJson<'r> {
    #[serde(flatten)]
    path: crate::PathJson<'r>,
    table: &'static str,
    file_size: usize,
    metaindex: HandleJson,
    index: HandleJson,
    compression: Vec<String>,
    data_blocks: usize,
    keys: usize,
    key_format: String,
    filter: Option<FilterJson<'r>>,
}

#[derive(serde::Serialize)]
struct FilterJson<'r> {
    policy: &'r str,
    hash_variant: String,
    hash_variant_basis: String,
    offset: u64,
    size: usize,
    base_lg: Option<u8>,
    problem: Option<String>,
    filters: Vec<StatJson>,
    /// The rate measured on neighbours of the table's keys.
    measured_fpr: Option<MeasuredJson>,
}

/// [`MeasuredFpr`], and its rate.
#[derive(serde::Serialize)]
pub(crate) struct MeasuredJson {
    probed: u64,
    passed: u64,
    rate: Option<f64>,
}

impl From<MeasuredFpr> for MeasuredJson {
    fn from(m: MeasuredFpr) -> Self {
        MeasuredJson {
            probed: m.probed,
            passed: m.passed,
            rate: Some(m.rate()).filter(|r| r.is_finite()),
        }
    }
}

/// One filter's statistics; an empty filter has its keys and no bits.
#[derive(serde::Serialize)]
struct StatJson {
    keys: usize,
    bits: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    k: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bits_per_key: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    share_set: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    estimated_fpr: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    estimated_keys: Option<f64>,
}

impl From<BloomStats> for StatJson {
    fn from(st: BloomStats) -> Self {
        let some = |x: f64| (st.bits > 0 && x.is_finite()).then_some(x);
        StatJson {
            keys: st.keys,
            bits: st.bits,
            k: (st.bits > 0).then_some(st.k),
            bits_per_key: some(st.bits_per_key()),
            share_set: some(st.share_set()),
            estimated_fpr: some(st.estimated_fpr()),
            estimated_keys: some(st.estimated_keys()),
        }
    }
}
