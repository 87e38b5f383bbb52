//! The crafted tables whose numbers ask for gigabytes (`crafted/` in the
//! library's tests) through `ldbfilter`, with the stated bound (16 times the
//! file's size plus 64 MiB) as its address-space limit (`ulimit -v`): exit 0
//! or 1 and one line naming the file, never an abort.

use std::process::Command;

use crate::{crafted, crafted_rocksdb};
use crafted::bound;

/// `ldbfilter` with at most `bytes` of address space (`ulimit -v`), which
/// holds its heap, stack and code: the tool itself needs under 8 MiB.
fn ldbfilter_limited(bytes: usize, args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$@\"", bytes / 1024))
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_ldbfilter"))
        .args(args)
        .output()
        .unwrap()
}

/// The stated bound, on the whole process: address space, not only the heap.
#[test]
fn every_command_answers_each_crafted_table_in_one_line_within_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in crafted::all().into_iter().chain(crafted_rocksdb::bombs()) {
        let path = dir.path().join(format!("{name}.ldb"));
        std::fs::write(&path, &bytes).unwrap();
        let path = path.to_str().unwrap();
        for command in [
            &["verify", path][..],
            &["inspect", path],
            &["probe", path, "6b", "7a"],
        ] {
            let out = ldbfilter_limited(bound(bytes.len()), command);
            let (stdout, stderr) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            let said = format!("{name} {:?}: {stdout}{stderr}", command[0]);
            match out.status.code() {
                Some(0) if command[0] == "probe" => assert_eq!(stdout.lines().count(), 2, "{said}"),
                // An answer per key, some `corrupt` (LevelDB's Get fails
                // them), and one line on stderr that says so.
                Some(1) if command[0] == "probe" && !stdout.is_empty() => {
                    assert_eq!(stdout.lines().count(), 2, "{said}");
                    assert!(stdout.contains(" - corrupt\n"), "{said}");
                    assert_eq!(stderr.lines().count(), 1, "{said}");
                    assert!(
                        stderr.starts_with(&format!("ldbfilter: {path}: ")),
                        "{said}"
                    );
                }
                Some(0) => assert!(stdout.starts_with(path), "{said}"),
                Some(1) if stderr.is_empty() => {
                    // verify's verdict, on its one line.
                    assert_eq!(stdout.lines().count(), 1, "{said}");
                    assert!(stdout.starts_with(&format!("{path}: MISMATCH")), "{said}");
                }
                Some(1) => {
                    assert_eq!(stderr.lines().count(), 1, "{said}");
                    assert!(
                        stderr.starts_with(&format!("ldbfilter: {path}: ")),
                        "{said}"
                    );
                    // Nothing, or for `inspect` of a RocksDB table what its
                    // footer says (4 lines) before the body that fails.
                    let footer_only = command[0] == "inspect"
                        && stdout.lines().count() == 4
                        && stdout.contains("format_version");
                    assert!(stdout.is_empty() || footer_only, "{said}");
                }
                _ => panic!("{said}: {:?}", out.status),
            }
        }
    }
}

#[test]
fn a_name_from_the_file_cannot_add_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("newline-in-name.ldb");
    std::fs::write(&path, crafted::named("newline-in-name")).unwrap();
    let path = path.to_str().unwrap();
    let out = ldbfilter_limited(2 << 30, &["verify", path]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "{path}: MISMATCH unknown filter policy leveldb.BuiltinBloomFilter2\\u{{a}}FAKE: OK\n"
        )
    );
    let out = ldbfilter_limited(2 << 30, &["inspect", path]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("  filter policy    leveldb.BuiltinBloomFilter2\\u{a}FAKE: OK\n")
            && !text.lines().any(|l| l.starts_with("FAKE")),
        "{text}"
    );
    let out = ldbfilter_limited(2 << 30, &["inspect", "--json", path]);
    let json = String::from_utf8(out.stdout).unwrap();
    assert_eq!(json.lines().count(), 1, "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["filter"]["policy"],
        "leveldb.BuiltinBloomFilter2\nFAKE: OK"
    );
}
