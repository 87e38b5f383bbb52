//! Reading what a command is given: text (stdin, hex files, key lists) up to
//! a limit, hex with errors that name the offending character, and table
//! files, which must be regular files and are checked from their footer
//! before they are read, a block at a time.

use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::Path;

use leveldb_filter::format::TableFile;
use leveldb_filter::{Error, TableFormat};

use crate::{shown, Failure};

/// The most text a command reads from stdin or a text file: 64 MiB, some
/// millions of keys; every structure built from the text is a small multiple
/// of it.
pub const MAX_TEXT: u64 = 64 << 20;

/// Where text comes from, as errors name it.
#[derive(Clone, Copy)]
pub enum Source<'p> {
    Stdin,
    File(&'p Path),
}

impl Source<'_> {
    /// How an error names the source: `<stdin>` or the path.
    pub fn name(self) -> String {
        match self {
            Source::Stdin => "<stdin>".into(),
            Source::File(path) => shown(path),
        }
    }

    /// An error on line `index + 1` of the text.
    pub fn line_error(self, index: usize, what: String) -> Failure {
        Failure::Line {
            source: self.name(),
            line: index + 1,
            what,
        }
    }

    /// The whole text, at most [`MAX_TEXT`] bytes of UTF-8.
    pub fn read(self) -> Result<String, Failure> {
        let too_much = || {
            Failure::Input(format!(
                "{}: more than {} MiB of text, the limit of this tool",
                self.name(),
                MAX_TEXT >> 20
            ))
        };
        let mut bytes = Vec::new();
        let read = match self {
            Source::Stdin => io::stdin()
                .lock()
                .take(MAX_TEXT + 1)
                .read_to_end(&mut bytes),
            Source::File(path) => {
                File::open(path).and_then(|f| f.take(MAX_TEXT + 1).read_to_end(&mut bytes))
            }
        };
        read.map_err(|e| match self {
            Source::Stdin => Failure::Io("reading stdin".into(), e),
            Source::File(path) => Failure::Unreadable {
                path: path.to_owned(),
                what: e.to_string(),
            },
        })?;
        if bytes.len() as u64 > MAX_TEXT {
            return Err(too_much());
        }
        String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
            self.line_error(line, "not UTF-8 text".into())
        })
    }
}

/// Hex keys a line at a time from stdin or a file, streamed: memory for one
/// line (at most [`MAX_TEXT`] bytes), whatever the input's length.
pub struct KeyLines<'p> {
    source: Source<'p>,
    reader: io::BufReader<Box<dyn Read + 'p>>,
    line: String,
    number: usize,
    /// Whether each line is the key as text (UTF-8), rather than hex.
    text: bool,
}

impl<'p> KeyLines<'p> {
    /// The keys of `source`. A regular file is read through once first, so
    /// that a line that is not hex is said before any answer is written;
    /// stdin, a pipe or a FIFO is read once, as its lines come.
    pub fn open(source: Source<'p>, text: bool) -> Result<Self, Failure> {
        let open = || -> Result<Self, Failure> {
            let input: Box<dyn Read + 'p> = match source {
                Source::Stdin => Box::new(io::stdin()),
                Source::File(path) => {
                    Box::new(File::open(path).map_err(|e| Failure::Unreadable {
                        path: path.to_owned(),
                        what: e.to_string(),
                    })?)
                }
            };
            Ok(KeyLines {
                source,
                reader: io::BufReader::with_capacity(1 << 16, input),
                line: String::new(),
                number: 0,
                text,
            })
        };
        if let Source::File(path) = source {
            if std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
                let mut check = open()?;
                while check.next_key(|| Ok(()))?.is_some() {}
            }
        }
        open()
    }

    /// The next line and its key; `None` at the end. `waiting` is called
    /// before a read that may block (to flush the answers so far).
    pub fn next_key(
        &mut self,
        waiting: impl FnOnce() -> Result<(), Failure>,
    ) -> Result<Option<(&str, Vec<u8>)>, Failure> {
        if self.reader.buffer().is_empty() {
            waiting()?;
        }
        self.line.clear();
        let read = self
            .reader
            .by_ref()
            .take(MAX_TEXT + 1)
            .read_line(&mut self.line);
        let index = self.number;
        self.number += 1;
        match read {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                return Err(self.source.line_error(index, "not UTF-8 text".into()))
            }
            Err(e) => {
                return Err(match self.source {
                    Source::Stdin => Failure::Io("reading stdin".into(), e),
                    Source::File(path) => Failure::Unreadable {
                        path: path.to_owned(),
                        what: e.to_string(),
                    },
                })
            }
        }
        if self.line.len() as u64 > MAX_TEXT {
            return Err(self
                .source
                .line_error(index, format!("a line longer than {} MiB", MAX_TEXT >> 20)));
        }
        let text = self.line.strip_suffix('\n').unwrap_or(&self.line);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let key = match self.text {
            true => text.as_bytes().to_vec(),
            false => parse_hex(text).map_err(|what| self.source.line_error(index, what))?,
        };
        Ok(Some((text, key)))
    }
}

/// The lines of `text` without their `\n` or `\r\n`.
pub fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate()
}

/// The bytes `text` spells in hex (either case, no separators).
pub fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 2);
    parse_hex_into(text, &mut out)?;
    Ok(out)
}

/// [`parse_hex`], appending to `out`.
pub fn parse_hex_into(text: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let bytes = text.as_bytes();
    if let Some(at) = bytes.iter().position(|b| !b.is_ascii_hexdigit()) {
        return Err(format!(
            "not hex: {} at column {}",
            describe(&text[floor_char(text, at)..]),
            at + 1
        ));
    }
    if !bytes.len().is_multiple_of(2) {
        return Err(format!(
            "not hex: an odd number of digits ({}), half a byte at the end",
            bytes.len()
        ));
    }
    let nibble = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
    out.extend(
        bytes
            .chunks_exact(2)
            .map(|pair| nibble(pair[0]) << 4 | nibble(pair[1])),
    );
    Ok(())
}

/// The start of the character holding byte `at`.
fn floor_char(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The first character of `rest`, in words.
fn describe(rest: &str) -> String {
    match rest.chars().next() {
        Some(' ') => "a space".into(),
        Some('\t') => "a tab".into(),
        Some('\r') => "a carriage return (CR)".into(),
        Some(c) if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
            format!("the control character U+{:04X}", u32::from(c))
        }
        Some(c) => format!("{c:?}"),
        None => "nothing".into(),
    }
}

/// A file of hex text (a filter or a filter block), as bytes. A file of
/// no bytes at all is an error (a mistaken path, more likely than a filter);
/// the empty filter is a file of one empty line.
pub fn read_hex_file(path: &Path) -> Result<Vec<u8>, Failure> {
    let file_error = |what: String| Failure::Unreadable {
        path: path.to_owned(),
        what,
    };
    let text = Source::File(path).read().map_err(|failure| match failure {
        Failure::Line { .. } => file_error("not hex text (not UTF-8)".into()),
        other => other,
    })?;
    if text.is_empty() {
        return Err(file_error(
            "an empty file, not a filter (the empty filter is a file of one empty line)".into(),
        ));
    }
    parse_hex(text.trim()).map_err(file_error)
}

/// A table file, opened to be read by block, and its format, once its
/// footer reads: a regular file (not a directory, device or FIFO, which
/// could block or never end) whose footer names blocks inside the file. A
/// file that is not a table is refused from its last bytes, without
/// reading the rest.
pub fn open_table_file(path: &Path) -> Result<(TableFile, TableFormat), Failure> {
    let file = open_regular_file(path)?;
    let format = TableFormat::of(&file).map_err(|e| match e {
        Error::Read { what, .. } => Failure::Unreadable {
            path: path.to_owned(),
            what,
        },
        e => Failure::File {
            path: path.to_owned(),
            what: e.to_string(),
            hint: None,
        },
    })?;
    Ok((file, format))
}

/// A regular file (not a directory, device or FIFO), opened to be read by
/// block.
pub fn open_regular_file(path: &Path) -> Result<TableFile, Failure> {
    let io_error = |e: io::Error| Failure::Unreadable {
        path: path.to_owned(),
        what: e.to_string(),
    };
    // Asked of the path before opening it: opening a FIFO waits for a writer.
    let meta = std::fs::metadata(path).map_err(io_error)?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            kind_of_special(&meta)
        };
        return Err(Failure::Unreadable {
            path: path.to_owned(),
            what: format!("is {kind}, not a table file"),
        });
    }
    File::open(path).and_then(TableFile::new).map_err(io_error)
}

#[cfg(unix)]
fn kind_of_special(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn kind_of_special(_: &std::fs::Metadata) -> &'static str {
    "not a regular file"
}
