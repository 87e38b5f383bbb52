//! `bloom` and `block`: LevelDB's Bloom filters and filter blocks built and
//! probed from hex text on stdin, byte for byte as LevelDB.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use leveldb_filter::{BloomFilterPolicy, FilterBlockBuilder, FilterBlockReader, FilterPolicy};

use crate::input::{self, lines, parse_hex, read_hex_file, Source};
use crate::{Failure, Variant};

#[derive(Subcommand)]
pub(crate) enum BloomCommand {
    /// Keys on stdin, one hex key per line; prints the filter as one line of hex.
    Create(CreateArgs),
    /// FILTER_FILE holds a filter as hex; keys on stdin; prints true or false per key.
    MayMatch(MatchArgs),
}

#[derive(Subcommand)]
pub(crate) enum BlockCommand {
    /// Lines `start OFFSET` or `key HEX` on stdin, in call order; prints the block as hex.
    Build(CreateArgs),
    /// BLOCK_FILE holds a block as hex; lines `OFFSET HEX` on stdin; prints true or false per line.
    MayMatch(MatchArgs),
}

#[derive(Args)]
pub(crate) struct CreateArgs {
    /// Bits per key, as given to LevelDB's NewBloomFilterPolicy.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=MAX_BITS_PER_KEY))]
    bits_per_key: u32,
    #[command(flatten)]
    hash: HashArg,
}

#[derive(Args)]
pub(crate) struct MatchArgs {
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

impl HashArg {
    /// The Bloom policy; `bits_per_key` only matters for building (readers
    /// take k from the filter's last byte).
    fn policy(&self, bits_per_key: u32) -> BloomFilterPolicy {
        BloomFilterPolicy::new(bits_per_key as usize).with_hash(self.hash.hash_variant())
    }
}

/// The largest bits per key the tool takes (LevelDB takes any `int`): far
/// past any useful setting (k stops growing at 44 bits per key).
pub(crate) const MAX_BITS_PER_KEY: i64 = 1 << 20;

/// The largest filter or filter block the tool builds: 64 MiB (128 MiB of
/// hex), a thousand times a LevelDB table's. Checked from the keys' count
/// and the offsets before anything is built.
const MAX_OUTPUT_BYTES: u64 = 64 << 20;

pub(crate) fn bloom(command: BloomCommand) -> Result<Vec<u8>, Failure> {
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

pub(crate) fn block(command: BlockCommand) -> Result<Vec<u8>, Failure> {
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
