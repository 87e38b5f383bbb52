//! Runs `ldbfilter` as a user does, and checks how it fails.

use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The repository's root, where `testdata/` is: the commands run from it, so
/// that relative paths are the README's.
pub fn root() -> PathBuf {
    let testdata = crate::vectors::testdata();
    testdata
        .parent()
        .expect("testdata/ in a directory")
        .to_owned()
}

/// `ldbfilter`, to be run from [`root`].
pub fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ldbfilter"));
    command.current_dir(root());
    command
}

/// `ldbfilter ARGS`, with `stdin` on its standard input.
pub fn ldbfilter<S: AsRef<OsStr>>(args: &[S], stdin: &str) -> Output {
    let mut child = command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Written from a thread: the tool may answer as it reads, and fill its
    // stdout before it has read all of stdin. It may also exit before
    // reading all of stdin; a broken pipe is fine then.
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(stdin.as_bytes());
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

/// Asserts a failure of input that cannot be used: exit 2, nothing on
/// stdout, one line on stderr that is ldbfilter's (no panic) and holds
/// `needle`.
pub fn assert_fails(output: &Output, needle: &str) {
    assert_fails_with(output, 2, needle)
}

/// Asserts a failure with exit status `code` (1: a problem found in a
/// table; 2: input that cannot be used), as [`assert_fails`] does.
pub fn assert_fails_with(output: &Output, code: i32, needle: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{needle}: {stderr}");
    assert!(
        output.stdout.is_empty(),
        "{needle}: nothing written half-way"
    );
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("ldbfilter: "), "{stderr}");
    assert!(
        stderr.contains(needle),
        "{stderr:?} should mention {needle:?}"
    );
    assert!(!stderr.contains("panicked"));
}
