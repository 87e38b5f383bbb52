//! What the table commands write, whichever format: answers, errors said
//! with their file, block handles in JSON.

use std::io;
use std::path::Path;

use crate::Failure;

/// An error of the table at `path`, said with its path.
pub(crate) fn table_error(path: &Path) -> impl Fn(leveldb_filter::Error) -> Failure + '_ {
    move |e| Failure::File {
        path: path.to_owned(),
        what: e.to_string(),
    }
}

pub(crate) fn write_error(e: io::Error) -> Failure {
    Failure::Io("writing stdout".into(), e)
}

/// `probe`'s answer for a key past the table's last key: the index has no
/// block for it (the filter is not asked).
pub(crate) const PAST_LAST_KEY: &str = "past-last-key";

/// `probe`'s answer from the filter: `may-match`, or `absent` (ruled out).
pub(crate) fn answer_word(may_match: bool) -> &'static str {
    if may_match {
        "may-match"
    } else {
        "absent"
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
