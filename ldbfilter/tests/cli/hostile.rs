//! `ldbfilter` under hostile arguments and streams, each run with 2 GiB of
//! address space (`ulimit -v`): one line on stderr naming what is wrong,
//! exit 1, nothing on stdout; never an abort, never a wait on a stream.

use crate::run;

use std::process::{Command, Output};

use run::{assert_fails, assert_fails_with};

/// `sh -c SCRIPT` with `$L` the ldbfilter binary and 2 GiB of address space.
fn sh(script: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v 2097152 && {script}"))
        .env("L", env!("CARGO_BIN_EXE_ldbfilter"))
        .current_dir(run::root())
        .output()
        .unwrap()
}

const TABLE: &str = "testdata/tables/db-snappy-0.ldb";

#[test]
fn arguments_that_would_size_gigabytes_are_refused_before_allocating() {
    let cases = [
        (
            format!("\"$L\" verify --bits-per-key 18446744073709551615 {TABLE}"),
            "--bits-per-key",
        ),
        (
            format!("\"$L\" verify --bits-per-key 1048577 {TABLE}"),
            "--bits-per-key",
        ),
        (
            "seq 1 16384 | awk '{printf \"%08x\\n\", $1}' | \"$L\" bloom create --bits-per-key 1048576".into(),
            "16384 keys at 1048576 bits per key make a filter of 2147483649 bytes, more than the limit of 64 MiB",
        ),
        (
            "seq 1 8192 | awk '{printf \"%08x\\n\", $1}' | \"$L\" bloom create --bits-per-key 1048576".into(),
            "8192 keys at 1048576 bits per key make a filter of 1073741825 bytes",
        ),
        (
            "i=0; while [ $i -lt 16384 ]; do echo \"start $((i * 4194304))\"; echo key 61; i=$((i + 1)); done | \"$L\" block build --bits-per-key 10".into(),
            "more than the limit of 64 MiB",
        ),
        (
            "printf 'start 0\\nkey 61\\nstart 18446744073709551615\\n' | \"$L\" block build --bits-per-key 10".into(),
            "<stdin> line 3: offset 18446744073709551615 makes a filter block",
        ),
    ];
    for (script, needle) in cases {
        assert_fails(&sh(&script), needle);
    }
}

#[test]
fn endless_or_huge_stdin_is_cut_at_the_limit() {
    let limit = "<stdin>: more than 64 MiB of text";
    for script in [
        "\"$L\" bloom create --bits-per-key 10 < /dev/zero",
        "yes 61 | \"$L\" bloom create --bits-per-key 10",
        "yes 61 | \"$L\" bloom may-match testdata/tables/CHECKSUMS",
        "echo 00 > \"$TMPDIR/f\"; yes '0 61' | \"$L\" block may-match \"$TMPDIR/f\"",
        "yes 'key 61' | \"$L\" block build --bits-per-key 10",
        // probe streams its keys: what is bounded is a line.
        &format!("\"$L\" probe {TABLE} --keys-from /dev/zero"),
        &format!("(printf 61; cat /dev/zero) | \"$L\" probe {TABLE}"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let script = script.replace("$TMPDIR", dir.path().to_str().unwrap());
        let needle = if script.contains("--keys-from") {
            "/dev/zero line 1: a line longer than 64 MiB"
        } else if script.contains("probe") {
            "<stdin> line 1: a line longer than 64 MiB"
        } else {
            limit
        };
        assert_fails(&sh(&script), needle);
    }
}

/// `probe` answers keys as they come, in memory for one line whatever the
/// input's length (here 70 MB of keys, past the 64 MiB a whole text may
/// take, under a 2 GiB address space), and answers a key before the next
/// one arrives.
#[test]
fn probe_streams_its_answers() {
    let key = "61".repeat(500);
    for table in [TABLE, "testdata/rocksdb/fastbloom-fv5-partitioned-xxh3.sst"] {
        let out = sh(&format!(
            "yes {key} | head -n 70000 | \"$L\" probe {table} | uniq -c"
        ));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{table}: {stderr}");
        assert_eq!(stdout.lines().count(), 1, "{table}: {stdout}");
        let want = format!("70000 {key} ");
        assert!(stdout.trim_start().starts_with(&want), "{stdout}");
        // One key in, its answer read back, and only then stdin closed: a
        // probe that waited for the end of its input would never answer
        // (`timeout` ends the deadlock, and the test fails).
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let out = sh(&format!(
            "mkfifo {d}/keys {d}/answers; \"$L\" probe {table} < {d}/keys > {d}/answers & \
             timeout 20 sh -c 'exec 3> {d}/keys; echo 6b6579 >&3; read -r line < {d}/answers; echo \"$line\"'; \
             status=$?; kill $! 2>/dev/null; exit $status"
        ));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{table}: {out:?}");
        assert!(stdout.starts_with("6b6579 "), "{table}: {stdout:?}");
    }
}

#[test]
fn tables_must_be_regular_files_and_are_judged_by_their_footer_first() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.ldb");
    let sparse = dir.path().join("sparse.ldb");
    // A 2 GiB file of zeros: read whole, it would not fit in the address space.
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    // 1.5 GiB of zeros ending in RocksDB's magic, format_version 0; and
    // one whose footer names an index past the file's end.
    let footer = |version: u32, index: &[u8]| {
        let mut footer = vec![1, 0, 1];
        footer.extend_from_slice(index);
        footer.resize(41, 0);
        footer.extend_from_slice(&version.to_le_bytes());
        footer.extend_from_slice(&0x88e2_41b7_85f4_cff7u64.to_le_bytes());
        footer
    };
    let sparse_rocksdb = dir.path().join("sparse-fv0.sst");
    let past_end = dir.path().join("index-past-end.sst");
    for (path, footer) in [
        (&sparse_rocksdb, footer(0, &[0, 1])),
        (
            &past_end,
            footer(5, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 1]),
        ),
    ] {
        let file = std::fs::File::create(path).unwrap();
        let len = 3 << 29;
        file.set_len(len).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&file, &footer, len - 53).unwrap();
    }
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let (fifo, sparse) = (fifo.to_str().unwrap(), sparse.to_str().unwrap());
    let sparse_rocksdb = sparse_rocksdb.to_str().unwrap();
    let past_end = past_end.to_str().unwrap();
    for command in ["verify", "inspect", "probe"] {
        let key = if command == "probe" { " 00" } else { "" };
        for (file, code, needle) in [
            (
                "/dev/zero",
                2,
                "/dev/zero: is a character device, not a table file",
            ),
            (fifo, 2, "is a FIFO (named pipe), not a table file"),
            (sparse, 1, "bad magic 0x0000000000000000"),
            (sparse_rocksdb, 1, "unsupported format_version"),
            (
                past_end,
                1,
                "index block at offset 1099511627776 (1 bytes and a 5-byte trailer) runs past the end of the file",
            ),
        ] {
            let out = sh(&format!("\"$L\" {command} {file}{key}"));
            assert_fails_with(&out, code, needle);
        }
    }
}

/// `probe` reads its table before its keys: a table that does not read is
/// said at once, even with stdin open and silent (a FIFO opened read-write,
/// which never ends; `timeout` would end a probe that waited on it).
#[test]
fn probe_checks_its_table_before_reading_keys() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("keys");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let out = sh(&format!(
        "exec 3<> {}; timeout 20 \"$L\" probe /nonexistent.ldb <&3",
        fifo.to_str().unwrap()
    ));
    assert_fails(&out, "/nonexistent.ldb: No such file or directory");
}

#[test]
fn usage_errors_are_one_line_and_exit_2() {
    for (args, needle) in [
        ("bloom create", "--bits-per-key <BITS_PER_KEY>"),
        ("bloom create --bits-per-key x", "invalid value 'x'"),
        ("bloom may-match", "<FILE>"),
        ("bloom", "a command is needed: create, may-match"),
        ("block", "a command is needed: build, may-match"),
        (
            "",
            "a command is needed: bloom, block, inspect, probe, verify",
        ),
        ("verify", "<TABLE|DIR>"),
        ("verify --bitz 3 t.ldb", "--bitz"),
    ] {
        let out = sh(&format!("\"$L\" {args} < /dev/null"));
        assert_fails(&out, needle);
        assert!(String::from_utf8_lossy(&out.stderr).ends_with("more with --help)\n"));
    }
    // Help is not an error.
    assert_eq!(sh("\"$L\" bloom create --help").status.code(), Some(0));
}

#[test]
fn hex_errors_name_the_stray_character() {
    for (input, needle) in [
        ("61 ", "line 1: not hex: a space at column 3"),
        ("6\t1", "line 1: not hex: a tab at column 2"),
        (
            "61\r\r",
            "line 1: not hex: a carriage return (CR) at column 3",
        ),
        ("00\n6g", "line 2: not hex: 'g' at column 2"),
        ("abc", "line 1: not hex: an odd number of digits (3)"),
    ] {
        let out = sh(&format!(
            "printf '{}\\n' | \"$L\" bloom create --bits-per-key 10",
            input.replace('\t', "\\t").replace('\r', "\\r")
        ));
        assert_fails(&out, needle);
    }
}

#[test]
fn an_empty_filter_or_block_file_is_an_error() {
    for command in ["bloom may-match /dev/null", "block may-match /dev/null"] {
        let out = sh(&format!("echo 0061 | \"$L\" {command}"));
        assert_fails(&out, "/dev/null: an empty file, not a filter");
    }
    // One empty line is the empty filter: LevelDB answers false (a Bloom
    // filter) and true (a filter block) for it.
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.hex");
    std::fs::write(&empty, "\n").unwrap();
    let out = sh(&format!(
        "echo 61 | \"$L\" bloom may-match {}",
        empty.display()
    ));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "false\n");
}

#[cfg(unix)]
#[test]
fn a_path_that_is_not_utf8_is_kept_exactly() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"t\xff.ldb");
    let path = dir.path().join(name);
    std::fs::copy(run::root().join(TABLE), &path).unwrap();
    let out = run::command()
        .args(["inspect".as_ref(), "--json".as_ref(), path.as_os_str()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hex: String = path
        .as_os_str()
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(json["path_hex"], hex);
    let out = run::command()
        .args(["verify".as_ref(), path.as_os_str()])
        .output()
        .unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(line.contains("t\\xff.ldb: OK "), "{line}");
    // A path of valid UTF-8 has no path_hex.
    let out = run::command()
        .args(["inspect", "--json", TABLE])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json.get("path_hex").is_none());
}
