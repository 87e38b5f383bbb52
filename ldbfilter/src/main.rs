//! `ldbfilter`: LevelDB filters and filter blocks from the shell, as hex text.
//!
//! Every command reads all of its input before it writes anything, so bad input
//! gets one line on stderr, a non-zero exit and no partial output.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod input;
mod report;
mod rocks;
mod tables;

use input::{lines, parse_hex, read_hex_file, Source};

use clap::{Args, Parser, Subcommand};
use leveldb_filter::{
    BloomFilterPolicy, FilterBlockBuilder, FilterBlockReader, FilterPolicy, HashVariant,
};

/// LevelDB SST filters: build and probe Bloom filters and filter blocks, byte for
/// byte as LevelDB 1.23. Hex is lowercase on output; the empty key is an empty line.
#[derive(Parser)]
#[command(name = "ldbfilter", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// One Bloom filter (leveldb.BuiltinBloomFilter2).
    #[command(subcommand)]
    Bloom(BloomCommand),
    /// A table's filter block: one filter per 2 KiB of data-block offset.
    #[command(subcommand)]
    Block(BlockCommand),
    /// Describe tables: footer, blocks, keys, filter policy and per-filter statistics.
    Inspect(tables::InspectArgs),
    /// For each key: the data block the index picks and whether the filter lets
    /// LevelDB's lookup read it. Prints `KEYHEX OFFSET may-match|absent`, or
    /// `KEYHEX - past-last-key` when the index has no block for the key, or
    /// `KEYHEX - corrupt` (and exits 1) where LevelDB's lookup fails on a
    /// corrupt index block.
    Probe(tables::ProbeArgs),
    /// Rebuild each table's filter block from its keys and compare it byte for byte.
    Verify(tables::VerifyArgs),
}

#[derive(Subcommand)]
enum BloomCommand {
    /// Keys on stdin, one hex key per line; prints the filter as one line of hex.
    Create(CreateArgs),
    /// FILTER_FILE holds a filter as hex; keys on stdin; prints true or false per key.
    MayMatch(MatchArgs),
}

#[derive(Subcommand)]
enum BlockCommand {
    /// Lines `start OFFSET` or `key HEX` on stdin, in call order; prints the block as hex.
    Build(CreateArgs),
    /// BLOCK_FILE holds a block as hex; lines `OFFSET HEX` on stdin; prints true or false per line.
    MayMatch(MatchArgs),
}

#[derive(Args)]
struct CreateArgs {
    /// Bits per key, as given to LevelDB's NewBloomFilterPolicy.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=MAX_BITS_PER_KEY))]
    bits_per_key: u32,
    #[command(flatten)]
    hash: HashArg,
}

#[derive(Args)]
struct MatchArgs {
    /// File holding the filter or block as hex text.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    #[command(flatten)]
    hash: HashArg,
}

#[derive(Args)]
struct HashArg {
    /// Hash variant: `signed` hashes tail bytes as signed chars (LevelDB <=
    /// 1.17 on x86, RocksDB's legacy filter); `unsigned` as LevelDB >= 1.18.
    #[arg(long, value_enum, default_value_t = Variant::Unsigned)]
    hash: Variant,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Variant {
    Unsigned,
    Signed,
}

impl HashArg {
    /// The Bloom policy; `bits_per_key` only matters for building (readers
    /// take k from the filter's last byte).
    fn policy(&self, bits_per_key: u32) -> BloomFilterPolicy {
        let variant = match self.hash {
            Variant::Signed => HashVariant::Signed,
            Variant::Unsigned => HashVariant::Unsigned,
        };
        BloomFilterPolicy::new(bits_per_key as usize).with_hash(variant)
    }
}

/// The largest bits per key the tool takes (LevelDB takes any `int`): far
/// past any useful setting (k stops growing at 44 bits per key).
pub(crate) const MAX_BITS_PER_KEY: i64 = 1 << 20;
/// The largest filter or filter block the tool builds: 64 MiB (128 MiB of
/// hex), a thousand times a LevelDB table's. Checked from the keys' count
/// and the offsets before anything is built.
const MAX_OUTPUT_BYTES: u64 = 64 << 20;

/// What went wrong, said in one line.
pub(crate) enum Failure {
    Line {
        source: String,
        line: usize,
        what: String,
    },
    File {
        path: PathBuf,
        what: String,
    },
    Input(String),
    Io(String, io::Error),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Line { source, line, what } => write!(f, "{source} line {line}: {what}"),
            Failure::File { path, what } => write!(f, "{}: {what}", shown(path)),
            Failure::Input(what) => write!(f, "{what}"),
            Failure::Io(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

/// Characters no text from a file is printed with as they are: control
/// characters (C0, DEL and C1, U+0085 NEL among them), the Unicode line and
/// paragraph separators (line breaks to some readers), and the bidirectional
/// controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069),
/// which can make a line read in another order than its bytes.
fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{061c}' | '\u{200e}' | '\u{200f}'
        )
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// Text from a file (or a path) made safe to print on one line: the
/// [`unprintable`] characters and backslashes become `\u{..}` escapes (a
/// backslash `\\`), so no byte read from a file can end a line of output,
/// forge one, or reorder it.
pub(crate) fn escaped(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| unprintable(c) || c == '\\';
    if !text.contains(unsafe_char) {
        return text.into();
    }
    let mut s = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            c if unsafe_char(c) => s.extend(c.escape_unicode()),
            c => s.push(c),
        }
    }
    s.into()
}

/// `value` as one line of JSON: serde_json escapes the C0 controls; the
/// other [`unprintable`] characters, which it leaves (valid JSON, but line
/// breaks to some readers, such as Python's `str.splitlines` for U+0085),
/// are escaped too, so that no byte read from a file can start a line of
/// output or reorder one.
pub(crate) fn one_line_json(value: &impl serde::Serialize) -> io::Result<String> {
    let json = serde_json::to_string(value).map_err(io::Error::other)?;
    if !json.contains(unprintable) {
        return Ok(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            c if unprintable(c) => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    Ok(out)
}

/// A path as printed: escaped as [`escaped`] does, and each byte that is not
/// UTF-8 as `\xNN` (a backslash in the path being `\\`, the two cannot be
/// confused).
pub(crate) fn shown(path: &Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    let mut s = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        s.push_str(&escaped(chunk.valid()));
        for b in chunk.invalid() {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

/// A path in JSON: `path` as UTF-8 (a byte that is not UTF-8 replaced by
/// U+FFFD) and, for a path that is not UTF-8, `path_hex`: its bytes, exactly.
#[derive(serde::Serialize)]
pub(crate) struct PathJson<'p> {
    path: std::borrow::Cow<'p, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path_hex: Option<String>,
}

impl<'p> PathJson<'p> {
    pub(crate) fn new(path: &'p Path) -> Self {
        let path_hex = path
            .to_str()
            .is_none()
            .then(|| hex(path.as_os_str().as_encoded_bytes()));
        PathJson {
            path: path.to_string_lossy(),
            path_hex,
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let output = match cli.command {
        // These print as they go, a line per table, and go on past a bad one.
        Command::Inspect(args) => return exit_code(tables::inspect(&args)),
        Command::Verify(args) => return exit_code(tables::verify(&args)),
        Command::Probe(args) => return exit_code(tables::probe_keys(&args)),
        Command::Bloom(command) => bloom(command),
        Command::Block(command) => block(command),
    };
    match output {
        Ok(out) => match io::stdout().lock().write_all(&out) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("ldbfilter: writing stdout: {e}");
                ExitCode::FAILURE
            }
        },
        Err(failure) => {
            eprintln!("ldbfilter: {failure}");
            ExitCode::FAILURE
        }
    }
}

/// Help and version as clap prints them; a usage error in one line on
/// stderr, with the usage it broke, and exit 1 as for any bad input.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    eprintln!("ldbfilter: {}", one_line_usage(e));
    ExitCode::FAILURE
}

/// clap's message for `e` in one line: its paragraphs joined, the usage in
/// parentheses; for a missing command, the commands there are.
fn one_line_usage(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut what = Vec::new();
    let mut usage = None;
    let mut commands = Vec::new();
    for paragraph in rendered.split("\n\n") {
        let paragraph = paragraph.trim();
        if let Some(line) = paragraph.strip_prefix("Usage: ") {
            usage = Some(words(line));
        } else if let Some(list) = paragraph.strip_prefix("Commands:") {
            commands.extend(
                list.lines()
                    .filter_map(|line| line.split_whitespace().next())
                    .filter(|&name| name != "help"),
            );
        } else if e.kind() != clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            && !paragraph.starts_with("For more information")
            && !paragraph.is_empty()
        {
            what.push(words(
                paragraph.strip_prefix("error: ").unwrap_or(paragraph),
            ));
        }
    }
    if what.is_empty() {
        what.push(format!("a command is needed: {}", commands.join(", ")));
    }
    let line = what.join("; ");
    match usage {
        Some(usage) => format!("{line} (usage: {usage}; more with --help)"),
        None => format!("{line} (more with --help)"),
    }
}

fn exit_code(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn bloom(command: BloomCommand) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    let text = Source::Stdin.read()?;
    match command {
        BloomCommand::Create(args) => {
            // The keys end to end, and where each starts: no allocation per key.
            let (mut keys, mut starts) = (Vec::new(), Vec::new());
            for (i, line) in lines(&text) {
                starts.push(keys.len());
                input::parse_hex_into(line, &mut keys)
                    .map_err(|what| Source::Stdin.line_error(i, what))?;
            }
            let bytes = filter_bytes(starts.len() as u64, args.bits_per_key);
            check_output(bytes, || {
                format!(
                    "{} keys at {} bits per key make a filter of {bytes} bytes",
                    starts.len(),
                    args.bits_per_key
                )
            })?;
            let mut filter = Vec::new();
            args.hash
                .policy(args.bits_per_key)
                .create_filter_from_offsets(&keys, &starts, &mut filter);
            push_hex_line(&mut out, &filter)?;
        }
        BloomCommand::MayMatch(args) => {
            let filter = read_hex_file(&args.file)?;
            let policy = args.hash.policy(0);
            for (i, line) in lines(&text) {
                let key = parse_hex(line).map_err(|what| Source::Stdin.line_error(i, what))?;
                push_answer(&mut out, policy.key_may_match(&key, &filter));
            }
        }
    }
    Ok(out)
}

fn block(command: BlockCommand) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    let text = Source::Stdin.read()?;
    match command {
        BlockCommand::Build(args) => {
            let block = build_block(&text, &args)?;
            push_hex_line(&mut out, &block)?;
        }
        BlockCommand::MayMatch(args) => {
            let block = read_hex_file(&args.file)?;
            let reader = FilterBlockReader::new(args.hash.policy(0), &block);
            for (i, line) in lines(&text) {
                let error = |what| Source::Stdin.line_error(i, what);
                let (offset, key) = line.split_once(' ').unwrap_or((line, ""));
                let offset = parse_offset(offset).map_err(error)?;
                let key = parse_hex(key).map_err(error)?;
                push_answer(&mut out, reader.key_may_match(offset, &key));
            }
        }
    }
    Ok(out)
}

/// `start OFFSET` and `key HEX` lines, in call order, into a filter block.
/// Offsets must not go back across a 2 KiB filter range; the block the calls
/// make, bounded from the offsets and keys so far, must stay within
/// [`MAX_OUTPUT_BYTES`] before each call is made.
fn build_block(text: &str, args: &CreateArgs) -> Result<Vec<u8>, Failure> {
    let mut builder = FilterBlockBuilder::new(args.hash.policy(args.bits_per_key));
    let (mut last_offset, mut keys) = (0u64, 0u64);
    for (i, line) in lines(text) {
        let error = |what| Source::Stdin.line_error(i, what);
        let (verb, arg) = line.split_once(' ').unwrap_or((line, ""));
        match verb {
            "start" => {
                let offset = parse_offset(arg).map_err(error)?;
                // Back within the last block's 2 KiB range changes nothing,
                // as in LevelDB and the library; back across it is a caller
                // bug LevelDB asserts against.
                if offset / 2048 < last_offset / 2048 {
                    return Err(error(format!("offset {offset} goes back across a 2 KiB filter range (a block started at {last_offset}, whose filter is cut)")));
                }
                let bytes = block_bytes(offset, keys, args.bits_per_key);
                check_output(bytes, || {
                    format!("offset {offset} makes a filter block of at least {bytes} bytes (4 for each 2 KiB range)")
                })
                .map_err(|failure| error(failure.to_string()))?;
                last_offset = last_offset.max(offset);
                builder.start_block(offset);
            }
            "key" => {
                let key = parse_hex(arg).map_err(error)?;
                keys += 1;
                let bytes = block_bytes(last_offset, keys, args.bits_per_key);
                check_output(bytes, || {
                    format!(
                        "{keys} keys at {} bits per key make a filter block of up to {bytes} bytes",
                        args.bits_per_key
                    )
                })
                .map_err(|failure| error(failure.to_string()))?;
                builder.add_key(&key);
            }
            "" if arg.is_empty() => {}
            _ => {
                return Err(error(format!(
                    "expected `start OFFSET` or `key HEX`, found {:?}",
                    line
                )))
            }
        }
    }
    Ok(builder.finish().to_vec())
}

/// The length of LevelDB's filter for `keys` keys.
fn filter_bytes(keys: u64, bits_per_key: u32) -> u64 {
    keys.saturating_mul(u64::from(bits_per_key))
        .max(64)
        .div_ceil(8)
        + 1
}

/// The most a filter block can take for `keys` keys in blocks up to
/// `last_offset`: an offset for each 2 KiB range (and the array's), a filter
/// for each range that holds keys (each at least 9 bytes), their bits.
fn block_bytes(last_offset: u64, keys: u64, bits_per_key: u32) -> u64 {
    let ranges = last_offset / 2048 + 1;
    let filters = keys.min(ranges);
    4u64.saturating_mul(ranges + 1)
        .saturating_add(9u64.saturating_mul(filters))
        .saturating_add(keys.saturating_mul(u64::from(bits_per_key)) / 8)
        .saturating_add(1)
}

/// An error if `bytes` of output pass [`MAX_OUTPUT_BYTES`]; `what` says why so many.
fn check_output(bytes: u64, what: impl FnOnce() -> String) -> Result<(), Failure> {
    if bytes > MAX_OUTPUT_BYTES {
        return Err(Failure::Input(format!(
            "{}, more than the limit of {} MiB",
            what(),
            MAX_OUTPUT_BYTES >> 20
        )));
    }
    Ok(())
}

fn parse_offset(text: &str) -> Result<u64, String> {
    text.parse().map_err(|_| {
        format!("expected a block offset (a decimal number below 2^64), found {text:?}")
    })
}

/// `bytes` in lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `bytes` as one line of lowercase hex; an error if the memory for it is
/// not there.
fn push_hex_line(out: &mut Vec<u8>, bytes: &[u8]) -> Result<(), Failure> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.try_reserve_exact(bytes.len() * 2 + 1).map_err(|_| {
        Failure::Input(format!(
            "not enough memory for {} bytes of hex output",
            bytes.len() * 2
        ))
    })?;
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 15)]);
    }
    out.push(b'\n');
    Ok(())
}

fn push_answer(out: &mut Vec<u8>, answer: bool) {
    out.extend_from_slice(if answer { b"true\n" } else { b"false\n" });
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_lines_escape_the_unicode_line_separators() {
        let line = super::one_line_json(&"a\u{2028}b\u{2029}c\nd").unwrap();
        assert_eq!(line, r#""a\u2028b\u2029c\nd""#);
        let back: String = serde_json::from_str(&line).unwrap();
        assert_eq!(back, "a\u{2028}b\u{2029}c\nd");
    }

    /// NEL (which Python's `str.splitlines` splits on) and the bidi
    /// controls are escaped in JSON and in text, and read back unchanged.
    #[test]
    fn nel_and_bidi_controls_are_escaped() {
        let name = "a\u{85}b\u{202e}c\u{2066}d\u{200f}e";
        let line = super::one_line_json(&name).unwrap();
        assert_eq!(line, r#""a\u0085b\u202ec\u2066d\u200fe""#);
        let back: String = serde_json::from_str(&line).unwrap();
        assert_eq!(back, name);
        assert_eq!(super::escaped(name), r"a\u{85}b\u{202e}c\u{2066}d\u{200f}e");
    }

    #[test]
    fn command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
