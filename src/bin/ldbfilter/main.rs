//! `ldbfilter`: LevelDB filters and filter blocks from the shell, as hex text.
//!
//! Every command reads all of its input before it writes anything, so bad input
//! gets one line on stderr, a non-zero exit and no partial output.

use std::fmt;
use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod rocks;
mod tables;

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
    /// `KEYHEX - past-last-key` when the index has no block for the key.
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

const MAX_BITS_PER_KEY: i64 = 1 << 20;
/// Largest filter (in bits) the tool will build: 2 GiB.
const MAX_FILTER_BITS: u64 = 1 << 34;
/// Largest data-block offset `block build` accepts: 2^24 filters of 2 KiB.
const MAX_BLOCK_OFFSET: u64 = (1 << 35) - 1;

/// What went wrong, said in one line.
pub(crate) enum Failure {
    Line {
        source: &'static str,
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

/// Text from a file (or a path) made safe to print on one line: control
/// characters, backslashes and the Unicode line and paragraph separators
/// become `\u{..}` escapes (a backslash `\\`), so no byte read from a file
/// can end a line of output or forge one.
pub(crate) fn escaped(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() || c == '\\' || c == '\u{2028}' || c == '\u{2029}';
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

/// `value` as one line of JSON: serde_json escapes control characters; the
/// Unicode line and paragraph separators, which it leaves (valid JSON, but
/// line breaks to some readers), are escaped too, so that no byte read from
/// a file can start a line of output.
pub(crate) fn one_line_json(value: &impl serde::Serialize) -> io::Result<String> {
    let json = serde_json::to_string(value).map_err(io::Error::other)?;
    Ok(json
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029"))
}

/// A path as printed: lossy UTF-8, escaped as [`escaped`] does.
pub(crate) fn shown(path: &Path) -> String {
    escaped(&path.to_string_lossy()).into_owned()
}

fn main() -> ExitCode {
    let output = match Cli::parse().command {
        // These print as they go, a line per table, and go on past a bad one.
        Command::Inspect(args) => return exit_code(tables::inspect(&args)),
        Command::Verify(args) => return exit_code(tables::verify(&args)),
        Command::Probe(args) => tables::probe_keys(&args),
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

fn exit_code(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn bloom(command: BloomCommand) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    match command {
        BloomCommand::Create(args) => {
            let keys = stdin_lines()?
                .iter()
                .enumerate()
                .map(|(i, line)| parse_hex(line).map_err(|what| stdin_error(i, what)))
                .collect::<Result<Vec<_>, _>>()?;
            check_filter_size(keys.len(), args.bits_per_key)?;
            let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            let mut filter = Vec::new();
            args.hash
                .policy(args.bits_per_key)
                .create_filter(&keys, &mut filter);
            push_hex_line(&mut out, &filter);
        }
        BloomCommand::MayMatch(args) => {
            let filter = read_hex_file(&args.file)?;
            let policy = args.hash.policy(0);
            for (i, line) in stdin_lines()?.iter().enumerate() {
                let key = parse_hex(line).map_err(|what| stdin_error(i, what))?;
                push_answer(&mut out, policy.key_may_match(&key, &filter));
            }
        }
    }
    Ok(out)
}

fn block(command: BlockCommand) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    match command {
        BlockCommand::Build(args) => {
            let calls = parse_calls(&stdin_lines()?)?;
            let keys = calls.iter().filter(|c| matches!(c, Call::Key(_))).count();
            check_filter_size(keys, args.bits_per_key)?;
            let mut builder = FilterBlockBuilder::new(args.hash.policy(args.bits_per_key));
            for call in &calls {
                match call {
                    Call::Start(offset) => builder.start_block(*offset),
                    Call::Key(key) => builder.add_key(key),
                }
            }
            push_hex_line(&mut out, builder.finish());
        }
        BlockCommand::MayMatch(args) => {
            let block = read_hex_file(&args.file)?;
            let reader = FilterBlockReader::new(args.hash.policy(0), &block);
            for (i, line) in stdin_lines()?.iter().enumerate() {
                let (offset, key) = line.split_once(' ').unwrap_or((line, ""));
                let offset = parse_offset(offset).map_err(|what| stdin_error(i, what))?;
                let key = parse_hex(key).map_err(|what| stdin_error(i, what))?;
                push_answer(&mut out, reader.key_may_match(offset, &key));
            }
        }
    }
    Ok(out)
}

enum Call {
    Start(u64),
    Key(Vec<u8>),
}

/// `start OFFSET` and `key HEX` lines; offsets must not go back across a
/// 2 KiB filter range.
fn parse_calls(lines: &[String]) -> Result<Vec<Call>, Failure> {
    let mut calls = Vec::with_capacity(lines.len());
    let mut last_offset = 0;
    for (i, line) in lines.iter().enumerate() {
        let (verb, arg) = line.split_once(' ').unwrap_or((line, ""));
        let call = match verb {
            "start" => {
                let offset = parse_offset(arg).map_err(|what| stdin_error(i, what))?;
                // Back within the last block's 2 KiB range changes nothing,
                // as in LevelDB and the library; back across it is a caller
                // bug LevelDB asserts against.
                if offset / 2048 < last_offset / 2048 {
                    return Err(stdin_error(
                        i,
                        format!("offset {offset} goes back across a 2 KiB filter range (a block started at {last_offset}, whose filter is cut)"),
                    ));
                }
                if offset > MAX_BLOCK_OFFSET {
                    return Err(stdin_error(
                        i,
                        format!("offset {offset} is past the limit {MAX_BLOCK_OFFSET}"),
                    ));
                }
                last_offset = last_offset.max(offset);
                Call::Start(offset)
            }
            "key" => Call::Key(parse_hex(arg).map_err(|what| stdin_error(i, what))?),
            "" if arg.is_empty() => continue,
            _ => {
                return Err(stdin_error(
                    i,
                    format!("expected `start OFFSET` or `key HEX`, found {line:?}"),
                ))
            }
        };
        calls.push(call);
    }
    Ok(calls)
}

fn check_filter_size(keys: usize, bits_per_key: u32) -> Result<(), Failure> {
    let bits = keys as u64 * u64::from(bits_per_key);
    if bits > MAX_FILTER_BITS {
        return Err(Failure::Input(format!(
            "{keys} keys at {bits_per_key} bits per key make {bits} bits, more than the limit {MAX_FILTER_BITS}"
        )));
    }
    Ok(())
}

fn stdin_error(index: usize, what: String) -> Failure {
    Failure::Line {
        source: "<stdin>",
        line: index + 1,
        what,
    }
}

/// Lines of stdin without their `\n` or `\r\n`.
pub(crate) fn stdin_lines() -> Result<Vec<String>, Failure> {
    let mut lines = Vec::new();
    for (i, line) in io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|e| match e.kind() {
            io::ErrorKind::InvalidData => stdin_error(i, "not UTF-8 text".into()),
            _ => Failure::Io("reading stdin".into(), e),
        })?;
        lines.push(match line.strip_suffix('\r') {
            Some(stripped) => stripped.to_owned(),
            None => line,
        });
    }
    Ok(lines)
}

fn read_hex_file(path: &Path) -> Result<Vec<u8>, Failure> {
    let file_error = |what: String| Failure::File {
        path: path.to_owned(),
        what,
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_string(&mut text))
        .map_err(|e| match e.kind() {
            io::ErrorKind::InvalidData => file_error("not hex text (not UTF-8)".into()),
            _ => file_error(e.to_string()),
        })?;
    parse_hex(text.trim()).map_err(file_error)
}

fn parse_offset(text: &str) -> Result<u64, String> {
    text.parse().map_err(|_| {
        format!("expected a block offset (a decimal number below 2^64), found {text:?}")
    })
}

pub(crate) fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    }
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return Err(format!("not hex: odd number of digits ({})", bytes.len()));
    }
    bytes
        .chunks_exact(2)
        .enumerate()
        .map(|(i, pair)| match (nibble(pair[0]), nibble(pair[1])) {
            (Some(hi), Some(lo)) => Ok(hi << 4 | lo),
            _ => Err(format!(
                "not hex: {:?} at column {}",
                String::from_utf8_lossy(pair),
                2 * i + 1
            )),
        })
        .collect()
}

fn push_hex_line(out: &mut Vec<u8>, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2 + 1);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 15)]);
    }
    out.push(b'\n');
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

    #[test]
    fn command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
