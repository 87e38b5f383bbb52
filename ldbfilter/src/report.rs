//! What the commands write, whichever format: text and paths made safe to
//! print on one line, one-line JSON, answers, errors said with their file,
//! block handles in JSON.

use std::io;
use std::path::Path;

use crate::Failure;

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

/// `bytes` in lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An error of the table at `path`, said with its path.
/// A line on stderr, `ldbfilter: ` first; a closed stderr is ignored (the
/// exit status still says what happened).
pub(crate) fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(io::stderr(), "ldbfilter: {line}");
}

/// An error of the table at `path`, said with its path and what it means.
pub(crate) fn table_error(path: &Path) -> impl Fn(leveldb_filter::Error) -> Failure + '_ {
    move |e| Failure::File {
        path: path.to_owned(),
        hint: Some(match e {
            leveldb_filter::Error::ChecksumMismatch { .. } => CHECKSUM,
            leveldb_filter::Error::Unsupported { .. }
            | leveldb_filter::Error::UnsupportedCompression { .. }
            | leveldb_filter::Error::CustomCompression { .. } => UNSUPPORTED,
            _ => DAMAGED,
        }),
        what: e.to_string(),
    }
}

/// What a checksum failure means.
pub(crate) const CHECKSUM: &str = "the bytes are damaged (a disk, memory or copy fault): reads of this block fail in LevelDB and RocksDB; restore the file from a backup or replica";

/// What a table that does not read means.
pub(crate) const DAMAGED: &str = "the table is damaged or not a table: reads of its keys fail or find nothing; restore the file from a backup or replica";

/// What a table this tool cannot read means.
const UNSUPPORTED: &str =
    "this tool does not read it; the engine that wrote it may: nothing is known to be wrong";

/// What a filter that does not rebuild means.
pub(crate) const MISMATCH: &str = "lookups of keys the table holds may skip it, so data appears lost: rewrite the table by a compaction over its key range (CompactRange), or restore it";

/// What keys out of the table's order mean.
pub(crate) const OUT_OF_ORDER: &str = "lookups search the table by its order and may miss keys it holds, and RocksDB's compactions (with their key-order checks, the default) fail on it: restore the table";

pub(crate) fn write_error(e: io::Error) -> Failure {
    Failure::Write(e)
}

/// `probe`'s answer for a key past the table's last key: the index has no
/// block for it (the filter is not asked).
pub(crate) const PAST_LAST_KEY: &str = "past-last-key";

/// `probe`'s answer where the filter rules the key out.
pub(crate) const ABSENT: &str = "absent";

/// `probe`'s answer where the filter lets the key through.
pub(crate) const MAY_MATCH: &str = "may-match";

/// `probe`'s answer from the filter: `may-match`, or `absent` (ruled out).
pub(crate) fn answer_word(may_match: bool) -> &'static str {
    if may_match {
        MAY_MATCH
    } else {
        ABSENT
    }
}

/// A block handle in `inspect --json`.
#[derive(serde::Serialize)]
pub(crate) struct HandleJson {
    offset: u64,
    size: u64,
}

impl From<leveldb_filter::format::BlockHandle> for HandleJson {
    fn from(h: leveldb_filter::format::BlockHandle) -> Self {
        HandleJson {
            offset: h.offset,
            size: h.size,
        }
    }
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
}
