//! Runs `ldbfilter` as a user does.

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// `ldbfilter ARGS`, with `stdin` on its standard input.
pub fn ldbfilter<S: AsRef<OsStr>>(args: &[S], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ldbfilter"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The tool may exit before reading all of stdin; a broken pipe is fine then.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}
