//! `ldbfilter` as a user runs it: the four commands on LevelDB's golden
//! vectors, and one clear line and a non-zero exit on bad input.

use crate::{run, vectors};

use std::process::Output;

use run::{assert_fails, ldbfilter};
use vectors::read_cases;

fn stdout(output: &Output) -> &str {
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::str::from_utf8(&output.stdout).unwrap()
}

#[test]
fn bloom_commands_reproduce_leveldb() {
    let dir = tempfile::tempdir().unwrap();
    for case in read_cases("bloom.vec").iter().take(40) {
        let created = ldbfilter(
            &[
                "bloom",
                "create",
                "--bits-per-key",
                &case.header["bits-per-key"],
            ],
            &case.text("keys"),
        );
        assert_eq!(stdout(&created), case.text("filter"));
        let file = dir.path().join("filter.hex");
        std::fs::write(&file, case.text("filter")).unwrap();
        let answers = ldbfilter(
            &["bloom", "may-match", file.to_str().unwrap()],
            &case.text("probes"),
        );
        assert_eq!(stdout(&answers), case.text("answers"));
    }
}

#[test]
fn block_commands_reproduce_leveldb() {
    let dir = tempfile::tempdir().unwrap();
    let (blocks, malformed) = (read_cases("block.vec"), read_cases("block-malformed.vec"));
    for case in blocks.iter().take(20).chain(malformed.iter().take(40)) {
        if case.section("calls").is_some() {
            let built = ldbfilter(
                &[
                    "block",
                    "build",
                    "--bits-per-key",
                    &case.header["bits-per-key"],
                ],
                &case.text("calls"),
            );
            assert_eq!(stdout(&built), case.text("block"));
        }
        let file = dir.path().join("block.hex");
        std::fs::write(&file, case.text("block")).unwrap();
        let answers = ldbfilter(
            &["block", "may-match", file.to_str().unwrap()],
            &case.text("probes"),
        );
        assert_eq!(stdout(&answers), case.text("answers"));
    }
}

#[test]
fn hash_signed_picks_the_signed_variant() {
    // "\x9a" has a tail byte >= 0x80, so the two variants disagree on it.
    let plain = ldbfilter(&["bloom", "create", "--bits-per-key", "10"], "9a\n");
    let legacy = ldbfilter(
        &[
            "bloom",
            "create",
            "--bits-per-key",
            "10",
            "--hash",
            "signed",
        ],
        "9a\n",
    );
    assert_ne!(stdout(&plain), stdout(&legacy));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("legacy.hex");
    std::fs::write(&file, stdout(&legacy)).unwrap();
    let path = file.to_str().unwrap();
    assert_eq!(
        stdout(&ldbfilter(
            &["bloom", "may-match", path, "--hash", "signed"],
            "9a\n"
        )),
        "true\n"
    );
    let block = ldbfilter(
        &["block", "build", "--bits-per-key", "10", "--hash", "signed"],
        "start 0\nkey 9a\n",
    );
    std::fs::write(&file, stdout(&block)).unwrap();
    assert_eq!(
        stdout(&ldbfilter(
            &["block", "may-match", path, "--hash", "signed"],
            "0 9a\n"
        )),
        "true\n"
    );
}

#[test]
fn empty_line_is_the_empty_key_and_crlf_is_accepted() {
    let a = ldbfilter(&["bloom", "create", "--bits-per-key", "10"], "\n61\n");
    let b = ldbfilter(&["bloom", "create", "--bits-per-key", "10"], "\r\n61\r\n");
    assert_eq!(stdout(&a), stdout(&b));
    let one = ldbfilter(&["bloom", "create", "--bits-per-key", "10"], "61\n");
    assert_ne!(stdout(&a), stdout(&one), "the empty key counts");
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.hex");
    std::fs::write(&good, "00000000000000000006\n").unwrap();
    let good = good.to_str().unwrap();
    let garbage = dir.path().join("garbage.hex");
    std::fs::write(&garbage, "this is not hex\n").unwrap();
    let garbage = garbage.to_str().unwrap();
    let missing = dir.path().join("missing.hex");
    let missing = missing.to_str().unwrap();

    assert_fails(
        &ldbfilter(&["bloom", "create", "--bits-per-key", "10"], "61\nzz\n"),
        "<stdin> line 2: not hex",
    );
    assert_fails(
        &ldbfilter(&["bloom", "create", "--bits-per-key", "10"], "abc\n"),
        "line 1: not hex: an odd number of digits (3)",
    );
    assert_fails(
        &ldbfilter(&["bloom", "may-match", good], "61\n6\n"),
        "<stdin> line 2",
    );
    assert_fails(
        &ldbfilter(&["bloom", "may-match", missing], "61\n"),
        missing,
    );
    assert_fails(
        &ldbfilter(&["bloom", "may-match", garbage], "61\n"),
        garbage,
    );
    assert_fails(
        &ldbfilter(
            &["block", "may-match", dir.path().to_str().unwrap()],
            "0 61\n",
        ),
        "",
    );
    assert_fails(
        &ldbfilter(&["block", "may-match", good], "x 61\n"),
        "<stdin> line 1: expected a block offset",
    );
    assert_fails(
        &ldbfilter(
            &["block", "build", "--bits-per-key", "10"],
            "start 5000\nkey 61\nstart 4000\n",
        ),
        "<stdin> line 3: offset 4000 goes back across a 2 KiB filter range",
    );
    // Back within the range: accepted, as LevelDB and the library accept it,
    // and the same block as without it.
    let back = ldbfilter(
        &["block", "build", "--bits-per-key", "10"],
        "start 5000\nkey 61\nstart 4999\nkey 62\n",
    );
    let forward = ldbfilter(
        &["block", "build", "--bits-per-key", "10"],
        "start 5000\nkey 61\nkey 62\n",
    );
    assert_eq!(stdout(&back), stdout(&forward));
    assert_fails(
        &ldbfilter(&["block", "build", "--bits-per-key", "10"], "begin 0\n"),
        "line 1: expected `start OFFSET`",
    );
    assert_fails(
        &ldbfilter(
            &["block", "build", "--bits-per-key", "10"],
            "start 99999999999999999999\n",
        ),
        "line 1",
    );
    assert_fails(
        &ldbfilter(
            &["block", "build", "--bits-per-key", "10"],
            "start 18446744073709551615\n",
        ),
        "more than the limit of 64 MiB",
    );
}
