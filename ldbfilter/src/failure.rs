//! What can go wrong in a run, said in one line, and the exit status each
//! outcome gives.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::report::shown;

/// What went wrong, said in one line, and the exit status it gives.
pub(crate) enum Failure {
    /// A line of input that does not read (exit 2).
    Line {
        source: String,
        line: usize,
        what: String,
    },
    /// A problem found in a table or database (exit 1): what it is, and
    /// what it means and what to do.
    File {
        path: PathBuf,
        what: String,
        hint: Option<&'static str>,
    },
    /// A file that could not be read: missing, not permitted, not a
    /// regular file (exit 2).
    Unreadable { path: PathBuf, what: String },
    /// Input that does not make sense (exit 2).
    Input(String),
    /// Reading stdin failed (exit 2).
    Io(String, io::Error),
    /// Writing stdout failed; a closed pipe ends the run quietly.
    Write(io::Error),
}

impl Failure {
    /// The exit status: 1 for a problem found in the data, 2 for input
    /// that could not be read or used.
    pub(crate) fn status(&self) -> Status {
        match self {
            Failure::File { .. } => Status::Problem,
            Failure::Write(e) if e.kind() == io::ErrorKind::BrokenPipe => Status::Closed,
            _ => Status::Unusable,
        }
    }
}

impl Failure {
    /// Whether the failure is of a file in `dir` (or `dir` itself).
    pub(crate) fn is_about(&self, dir: &std::path::Path) -> bool {
        match self {
            Failure::File { path, .. } | Failure::Unreadable { path, .. } => path.starts_with(dir),
            _ => false,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Line { source, line, what } => write!(f, "{source} line {line}: {what}"),
            Failure::File { path, what, hint } => {
                write!(f, "{}: {what}", shown(path))?;
                match hint {
                    Some(hint) => write!(f, " ({hint})"),
                    None => Ok(()),
                }
            }
            Failure::Unreadable { path, what } => write!(f, "{}: {what}", shown(path)),
            Failure::Input(what) => write!(f, "{what}"),
            Failure::Io(what, e) => write!(f, "{what}: {e}"),
            Failure::Write(e) => write!(f, "writing stdout: {e}"),
        }
    }
}

/// How a run ended, in the order of precedence of its exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Status {
    /// All is well: exit 0.
    Well,
    /// Stdout was closed (`| head`): the run ends quietly, exit 0.
    Closed,
    /// A filter mismatch, or a damaged table or database: exit 1.
    Problem,
    /// A usage error, or input that could not be read: exit 2.
    Unusable,
}

impl Status {
    pub(crate) fn exit_status(self) -> u8 {
        match self {
            Status::Well | Status::Closed => 0,
            Status::Problem => 1,
            Status::Unusable => 2,
        }
    }

    pub(crate) fn code(self) -> ExitCode {
        ExitCode::from(self.exit_status())
    }
}
