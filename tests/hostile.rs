//! `ldbfilter` under hostile arguments and streams, each run with 2 GiB of
//! address space (`ulimit -v`): one line on stderr naming what is wrong,
//! exit 1, nothing on stdout; never an abort, never a wait on a stream.

mod run;

use std::process::{Command, Output};

use run::assert_fails;

/// `sh -c SCRIPT` with `$L` the ldbfilter binary and 2 GiB of address space.
fn sh(script: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v 2097152 && {script}"))
        .env("L", env!("CARGO_BIN_EXE_ldbfilter"))
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
        "yes 61 | \"$L\" bloom may-match testdata/tables/MANIFEST",
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
