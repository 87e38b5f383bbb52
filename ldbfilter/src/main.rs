//! `ldbfilter`: LevelDB's and RocksDB's tables, databases and filters from
//! the shell.
//!
//! Each table's report is made whole before any of it is written, so a
//! table that does not read gets one line on stderr and nothing on stdout;
//! the filter commands read all of their input first. Exit status: 0 all
//! well, 1 a problem found in the data, 2 a usage error or input that
//! cannot be read; a closed stdout ends the run quietly.

use std::io::{self, Write};
use std::process::ExitCode;

mod failure;
mod filters;
mod input;
mod inspect;
mod probe;
mod report;
mod tables;
mod targets;
mod verify;

use clap::{Parser, Subcommand};
use leveldb_filter::HashVariant;

pub(crate) use failure::{Failure, Status};
use report::shown;

/// LevelDB's and RocksDB's SST filters: verify, inspect and probe tables and
/// whole databases; build and probe Bloom filters and filter blocks byte for
/// byte as LevelDB. Hex is lowercase on output; the empty key is an empty line.
#[derive(Parser)]
#[command(
    name = "ldbfilter",
    version,
    after_help = "Exit status: 0 all is well; 1 a problem found in the data (a filter mismatch, a damaged table or MANIFEST, a missing live table); 2 a usage error or input that cannot be read. A closed stdout ends the run quietly, status 0."
)]
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
    /// A completion script for SHELL, on stdout.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// The manual page (roff), on stdout: `ldbfilter man > ldbfilter.1`.
    Man,
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

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let output = match cli.command {
        // These print as they go, a report per table, and go on past a bad one.
        Command::Inspect(args) => return inspect::run(&args).code(),
        Command::Verify(args) => return verify::run(&args).code(),
        Command::Probe(args) => return probe::run(&args).code(),
        Command::Bloom(command) => filters::bloom(command),
        Command::Block(command) => filters::block(command),
        Command::Completions { shell } => completions(shell),
        Command::Man => man_page(),
    };
    let written =
        output.and_then(|out| io::stdout().lock().write_all(&out).map_err(Failure::Write));
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let status = failure.status();
            if status != Status::Closed {
                crate::report::say(format_args!("{failure}"));
            }
            status.code()
        }
    }
}

/// `completions SHELL`: the shell's completion script.
fn completions(shell: clap_complete::Shell) -> Result<Vec<u8>, Failure> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "ldbfilter", &mut out);
    Ok(out)
}

/// `man`: the manual page, in roff.
fn man_page() -> Result<Vec<u8>, Failure> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(Failure::Write)?;
    Ok(out)
}

/// Help and version as clap prints them; a usage error in one line on
/// stderr, with the usage it broke, and exit 2.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    crate::report::say(format_args!("{}", one_line_usage(e)));
    Status::Unusable.code()
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

#[cfg(test)]
mod tests {
    #[test]
    fn command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
