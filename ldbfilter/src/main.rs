//! `ldbfilter`: LevelDB filters and filter blocks from the shell, as hex text.
//!
//! Every command reads all of its input before it writes anything, so bad input
//! gets one line on stderr, a non-zero exit and no partial output.

use std::fmt;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

mod filters;
mod input;
mod inspect;
mod probe;
mod report;
mod tables;
mod verify;

use clap::{Parser, Subcommand};
use leveldb_filter::HashVariant;

use report::shown;

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
    Bloom(filters::BloomCommand),
    /// A table's filter block: one filter per 2 KiB of data-block offset.
    #[command(subcommand)]
    Block(filters::BlockCommand),
    /// Describe tables: footer, blocks, keys, filter policy and per-filter statistics.
    Inspect(inspect::InspectArgs),
    /// For each key: the data block the index picks and whether the filter lets
    /// LevelDB's lookup read it. Prints `KEYHEX OFFSET may-match|absent`, or
    /// `KEYHEX - past-last-key` when the index has no block for the key, or
    /// `KEYHEX - corrupt` (and exits 1) where LevelDB's lookup fails on a
    /// corrupt index block.
    Probe(probe::ProbeArgs),
    /// Rebuild each table's filter block from its keys and compare it byte for byte.
    Verify(verify::VerifyArgs),
}

/// `--hash`: how a filter hashes a key's tail bytes.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Variant {
    /// As LevelDB >= 1.18, goleveldb and RocksDB's FastLocalBloom.
    Unsigned,
    /// As signed chars: LevelDB <= 1.17 on x86, RocksDB's legacy filter.
    Signed,
}

impl Variant {
    fn hash_variant(self) -> HashVariant {
        match self {
            Variant::Unsigned => HashVariant::Unsigned,
            Variant::Signed => HashVariant::Signed,
        }
    }
}

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

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let output = match cli.command {
        // These print as they go, a line per table, and go on past a bad one.
        Command::Inspect(args) => return exit_code(inspect::run(&args)),
        Command::Verify(args) => return exit_code(verify::run(&args)),
        Command::Probe(args) => return exit_code(probe::run(&args)),
        Command::Bloom(command) => filters::bloom(command),
        Command::Block(command) => filters::block(command),
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

#[cfg(test)]
mod tests {
    #[test]
    fn command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
