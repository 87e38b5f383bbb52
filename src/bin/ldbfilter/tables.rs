//! `inspect`, `probe` and `verify`: filters in real table files.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use leveldb_filter::{
    keys_per_filter, looks_internal, probe, variants_for_name, verify_filter, BloomFilterPolicy,
    BloomStats, Compression, DataBlock, FilterBlock, FilterBlockReader, FilterPolicy, HashVariant,
    InternalKeyPolicy, KeyFormat, Probe, Table, TableFilter, VariantFound, Verdict, VerifyOptions,
};

use crate::{parse_hex, Failure};

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
    /// Keys in hex; for a database's table, user keys.
    #[arg(required = true, value_name = "KEYHEX")]
    key_hex: Vec<String>,
    #[command(flatten)]
    detect: Detect,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// Table files (.ldb, .sst).
    #[arg(required = true, value_name = "TABLE")]
    tables: Vec<PathBuf>,
    /// Bits per key, instead of inferring it from the filters' sizes.
    #[arg(long)]
    bits_per_key: Option<usize>,
    #[command(flatten)]
    detect: Detect,
}

/// A table file read whole, with its data blocks' keys.
struct Loaded {
    bytes: Vec<u8>,
}

impl Loaded {
    fn read(path: &Path) -> Result<Self, Failure> {
        let file_error = |what: String| Failure::File {
            path: path.to_owned(),
            what,
        };
        if path.is_dir() {
            return Err(file_error("is a directory, not a table file".into()));
        }
        let bytes = std::fs::read(path).map_err(|e| file_error(e.to_string()))?;
        Ok(Loaded { bytes })
    }

    fn open(&self, path: &Path) -> Result<(Table<'_>, Vec<DataBlock>), Failure> {
        let table = Table::new(&self.bytes).map_err(table_error(path))?;
        let blocks = table.data_blocks().map_err(table_error(path))?;
        Ok((table, blocks))
    }
}

/// An error of the table at `path`, said with its path.
fn table_error(path: &Path) -> impl Fn(leveldb_filter::Error) -> Failure + '_ {
    move |e| Failure::File {
        path: path.to_owned(),
        what: e.to_string(),
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
            eprint!("\r\x1b[K[{}/{}] {}", i + 1, self.total, path.display());
            let _ = std::io::stderr().flush();
        }
    }
    fn done(&self) {
        if self.show {
            eprint!("\r\x1b[K");
        }
    }
}

/// Runs `each` over the tables, printing its line for each as it goes and
/// errors on stderr; false if any table failed or `each` said so.
fn for_each_table(
    tables: &[PathBuf],
    mut each: impl FnMut(&Path) -> Result<(String, bool), Failure>,
) -> bool {
    let progress = Progress::new(tables.len());
    let mut all_ok = true;
    for (i, path) in tables.iter().enumerate() {
        progress.at(i, path);
        match each(path) {
            Ok((text, ok)) => {
                progress.done();
                let mut stdout = std::io::stdout().lock();
                if stdout.write_all(text.as_bytes()).is_err() {
                    return false;
                }
                all_ok &= ok;
            }
            Err(failure) => {
                progress.done();
                eprintln!("ldbfilter: {failure}");
                all_ok = false;
            }
        }
    }
    progress.done();
    all_ok
}

pub fn verify(args: &VerifyArgs) -> bool {
    for_each_table(&args.tables, |path| {
        let loaded = Loaded::read(path)?;
        let (table, blocks) = loaded.open(path)?;
        let verdict = verify_filter(&table, &blocks, args.detect.options(args.bits_per_key))
            .map_err(table_error(path))?;
        let shown = path.display();
        Ok(match verdict {
            Verdict::NoFilter => (format!("{shown}: no filter block\n"), true),
            Verdict::UnknownPolicy { name } => (
                format!("{shown}: MISMATCH unknown filter policy {name}\n"),
                false,
            ),
            Verdict::Match {
                name,
                variant,
                key_format,
                bits_per_key,
            } => (
                format!("{shown}: OK {name} {variant} {key_format} {bits_per_key}\n"),
                true,
            ),
            Verdict::Mismatch { name, difference } => {
                (format!("{shown}: MISMATCH {name}: {difference}\n"), false)
            }
        })
    })
}

/// The table's key format and filter policy, as verification finds them; when
/// nothing rebuilds the filter, the likeliest guess.
fn detect<'a>(
    table: &Table<'a>,
    blocks: &[DataBlock],
    detect: &Detect,
) -> Result<(KeyFormat, Option<FilterFound<'a>>), leveldb_filter::Error> {
    let options = detect.options(None);
    let guess_format = options.key_format.unwrap_or(if looks_internal(blocks) {
        KeyFormat::Internal
    } else {
        KeyFormat::User
    });
    let Some(filter) = table.filter_block()? else {
        return Ok((guess_format, None));
    };
    let named = variants_for_name(&filter.name).unwrap_or(&[]);
    let guess_variant = options
        .variant
        .or(named.first().copied())
        .unwrap_or_default();
    let word = |v: HashVariant| match v {
        HashVariant::Unsigned => "unsigned",
        HashVariant::Signed => "signed",
    };
    let (format, variant, basis) = match verify_filter(table, blocks, options)? {
        Verdict::Match {
            variant,
            key_format,
            ..
        } => {
            let chosen = match variant {
                VariantFound::Signed => HashVariant::Signed,
                VariantFound::Unsigned => HashVariant::Unsigned,
                VariantFound::Either => guess_variant,
            };
            let basis = match (options.variant, variant, named.len()) {
                (Some(_), _, _) => "as given",
                (_, VariantFound::Either, _) => "no key tells them apart",
                (_, _, 1) => "from the policy name",
                _ => "decided from the table's keys",
            };
            (key_format, chosen, (variant.to_string(), basis))
        }
        Verdict::UnknownPolicy { .. } => (
            guess_format,
            guess_variant,
            ("unknown".to_string(), "unknown policy"),
        ),
        _ => (
            guess_format,
            guess_variant,
            (
                word(guess_variant).to_string(),
                "a guess: the filter does not rebuild",
            ),
        ),
    };
    Ok((
        format,
        Some(FilterFound {
            filter,
            variant,
            basis,
        }),
    ))
}

/// A table's filter block and policy, as [`detect`] finds them.
struct FilterFound<'a> {
    filter: TableFilter<'a>,
    /// The variant to read it with.
    variant: HashVariant,
    /// What was found (`unsigned`, `signed`, `unsigned-or-signed`), and how.
    basis: (String, &'static str),
}

pub fn probe_keys(args: &ProbeArgs) -> Result<Vec<u8>, Failure> {
    let keys = args
        .key_hex
        .iter()
        .map(|k| parse_hex(k).map_err(|what| Failure::Input(format!("key {k:?}: {what}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let path = &args.table;
    let loaded = Loaded::read(path)?;
    let (table, blocks) = loaded.open(path)?;
    let (format, found) = detect(&table, &blocks, &args.detect).map_err(table_error(path))?;
    let reader = match &found {
        Some(found) if variants_for_name(&found.filter.name).is_some() => {
            let bloom = BloomFilterPolicy::new(10).with_hash(found.variant);
            let policy: Box<dyn FilterPolicy> = match format {
                KeyFormat::User => Box::new(bloom),
                KeyFormat::Internal => Box::new(InternalKeyPolicy(bloom)),
            };
            Some(FilterBlockReader::new(policy, &found.filter.block.contents))
        }
        _ => None,
    };
    let mut out = String::new();
    for (text, key) in args.key_hex.iter().zip(&keys) {
        let (offset, answer) = match probe(&table, reader.as_ref(), format, key) {
            Probe::PastLastKey => ("-".to_string(), "absent"),
            Probe::Block { offset, may_match } => (
                offset.to_string(),
                if may_match { "may-match" } else { "absent" },
            ),
        };
        let _ = writeln!(out, "{text} {offset} {answer}");
    }
    Ok(out.into_bytes())
}

pub fn inspect(args: &InspectArgs) -> bool {
    for_each_table(&args.tables, |path| {
        let loaded = Loaded::read(path)?;
        let (table, blocks) = loaded.open(path)?;
        let (format, found) = detect(&table, &blocks, &args.detect).map_err(table_error(path))?;
        let report = Report::new(path, &table, &blocks, format, found);
        Ok((
            if args.json {
                report.json()
            } else {
                report.text()
            },
            true,
        ))
    })
}

struct FilterReport {
    name: String,
    variant: String,
    variant_basis: &'static str,
    offset: u64,
    size: usize,
    base_lg: Option<u8>,
    problem: Option<String>,
    filters: Vec<BloomStats>,
}

struct Report {
    path: String,
    file_size: usize,
    metaindex: (u64, u64),
    index: (u64, u64),
    compressions: Vec<Compression>,
    data_blocks: usize,
    keys: usize,
    key_format: KeyFormat,
    filter: Option<FilterReport>,
}

impl Report {
    fn new(
        path: &Path,
        table: &Table<'_>,
        blocks: &[DataBlock],
        key_format: KeyFormat,
        found: Option<FilterFound<'_>>,
    ) -> Self {
        let mut compressions: Vec<Compression> = blocks.iter().map(|b| b.compression).collect();
        compressions.sort();
        compressions.dedup();
        let filter = found.map(|found| {
            let contents = &found.filter.block.contents[..];
            let (base_lg, problem, filters) = match FilterBlock::parse(contents) {
                Ok(parsed) => {
                    let counts = keys_per_filter(blocks);
                    let stats = parsed
                        .filters()
                        .enumerate()
                        .map(|(i, f)| BloomStats::new(f, counts.get(i).copied().unwrap_or(0)))
                        .collect();
                    (Some(parsed.base_lg()), None, stats)
                }
                Err(e) => (None, Some(e.to_string()), Vec::new()),
            };
            FilterReport {
                variant: found.basis.0,
                variant_basis: found.basis.1,
                offset: found.filter.block.handle.offset,
                name: found.filter.name,
                size: contents.len(),
                base_lg,
                problem,
                filters,
            }
        });
        Report {
            path: path.display().to_string(),
            file_size: table.file().len(),
            metaindex: (
                table.metaindex_handle().offset,
                table.metaindex_handle().size,
            ),
            index: (table.index_handle().offset, table.index_handle().size),
            compressions,
            data_blocks: blocks.len(),
            keys: blocks.iter().map(|b| b.keys.len()).sum(),
            key_format,
            filter,
        }
    }

    fn compressions(&self) -> Vec<String> {
        self.compressions.iter().map(ToString::to_string).collect()
    }

    fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{}", self.path);
        let _ = writeln!(s, "  file size        {} bytes", self.file_size);
        let _ = writeln!(
            s,
            "  metaindex        offset {} size {}",
            self.metaindex.0, self.metaindex.1
        );
        let _ = writeln!(
            s,
            "  index            offset {} size {}",
            self.index.0, self.index.1
        );
        let _ = writeln!(s, "  compression      {}", self.compressions().join(", "));
        let _ = writeln!(s, "  data blocks      {}", self.data_blocks);
        let _ = writeln!(s, "  keys             {}", self.keys);
        let _ = writeln!(s, "  key format       {}", self.key_format);
        let Some(f) = &self.filter else {
            let _ = writeln!(s, "  filter           none");
            return s;
        };
        let _ = writeln!(s, "  filter policy    {}", f.name);
        let _ = writeln!(s, "  hash variant     {} ({})", f.variant, f.variant_basis);
        let _ = writeln!(s, "  filter block     offset {} size {}", f.offset, f.size);
        if let Some(problem) = &f.problem {
            let _ = writeln!(s, "  filter problem   {problem}");
            return s;
        }
        let _ = writeln!(s, "  base_lg          {}", f.base_lg.unwrap_or(0));
        let _ = writeln!(s, "  filters          {}", f.filters.len());
        let _ = writeln!(
            s,
            "  {:>6} {:>6} {:>8} {:>3} {:>8} {:>6} {:>10} {:>8}",
            "filter", "keys", "bits", "k", "bits/key", "set", "est. fpr", "est. keys"
        );
        for (i, st) in f.filters.iter().enumerate() {
            if st.bits == 0 {
                let _ = writeln!(s, "  {i:>6} {:>6} {:>8}", st.keys, "empty");
                continue;
            }
            let _ = writeln!(
                s,
                "  {i:>6} {:>6} {:>8} {:>3} {:>8.2} {:>6.3} {:>10.6} {:>8}",
                st.keys,
                st.bits,
                st.k,
                st.bits_per_key(),
                st.share_set(),
                st.estimated_fpr(),
                st.estimated_keys()
            );
        }
        s
    }

    fn json(&self) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            "{{\"path\":{},\"file_size\":{},\"metaindex\":{{\"offset\":{},\"size\":{}}},\"index\":{{\"offset\":{},\"size\":{}}},\"compression\":[{}],\"data_blocks\":{},\"keys\":{},\"key_format\":\"{}\",\"filter\":",
            json_string(&self.path),
            self.file_size,
            self.metaindex.0,
            self.metaindex.1,
            self.index.0,
            self.index.1,
            self.compressions().iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(","),
            self.data_blocks,
            self.keys,
            self.key_format
        );
        match &self.filter {
            None => s.push_str("null"),
            Some(f) => {
                let _ = write!(
                    s,
                    "{{\"policy\":{},\"hash_variant\":{},\"hash_variant_basis\":{},\"offset\":{},\"size\":{},\"base_lg\":{},\"problem\":{},\"filters\":[",
                    json_string(&f.name),
                    json_string(&f.variant),
                    json_string(f.variant_basis),
                    f.offset,
                    f.size,
                    f.base_lg.map_or("null".into(), |b| b.to_string()),
                    f.problem.as_deref().map_or("null".into(), json_string),
                );
                for (i, st) in f.filters.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    if st.bits == 0 {
                        let _ = write!(s, "{{\"keys\":{},\"bits\":0}}", st.keys);
                        continue;
                    }
                    let _ = write!(
                        s,
                        "{{\"keys\":{},\"bits\":{},\"k\":{},\"bits_per_key\":{},\"share_set\":{},\"estimated_fpr\":{},\"estimated_keys\":{}}}",
                        st.keys,
                        st.bits,
                        st.k,
                        json_number(st.bits_per_key()),
                        json_number(st.share_set()),
                        json_number(st.estimated_fpr()),
                        json_number(st.estimated_keys())
                    );
                }
                s.push_str("]}");
            }
        }
        s.push_str("}\n");
        s
    }
}

fn json_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".into()
    }
}

fn json_string(text: &str) -> String {
    let mut s = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
    s
}
