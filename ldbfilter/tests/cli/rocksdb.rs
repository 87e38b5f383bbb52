//! `ldbfilter` on the tables RocksDB 7.8 wrote (`testdata/rocksdb/`, or the
//! directory `ROCKSDB_TABLES` names): every command reads them, answers as
//! RocksDB did, and names a damaged one.

use crate::{run, vectors};
use vectors::{rocksdb_dir, rocksdb_tables};

use leveldb_filter::rocksdb::{FilterCheck, SstFilter, Table, Verdict};

/// `ldbfilter verify`, `probe` and `inspect --json` on every golden table.
#[test]
fn the_command_line_reads_rocksdb_tables() {
    let run = |args: &[&str]| {
        let out = run::ldbfilter(args, "");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{args:?}: {stderr}");
        String::from_utf8(out.stdout).unwrap()
    };
    for (name, _, keys) in rocksdb_tables() {
        let path = rocksdb_dir().join(format!("{name}.sst"));
        let path = path.to_str().unwrap();
        let verified = run(&["verify", path]);
        assert!(verified.contains(": OK "), "{name}: {verified}");
        assert!(verified.contains("bits/key"), "{verified}");
        let hex: Vec<String> = keys
            .iter()
            .map(|(k, _, _)| k.iter().map(|b| format!("{b:02x}")).collect())
            .collect();
        let mut args = vec!["probe", path];
        args.extend(hex.iter().map(String::as_str));
        let probed = run(&args);
        let answers: Vec<bool> = probed
            .lines()
            .map(|line| line.ends_with(" may-match"))
            .collect();
        let want: Vec<bool> = keys.iter().map(|k| k.2).collect();
        assert_eq!(answers, want, "{name}: probe answers");
        let json = run(&["inspect", "--json", path]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["format"], "rocksdb", "{json}");
        assert_eq!(
            v["entries"].as_u64(),
            Some(keys.iter().filter(|k| k.1).count() as u64)
        );
        let filters = v["filter"]["filters"].as_array().unwrap();
        assert!(!filters.is_empty() && filters.iter().all(|f| f["implementation"].is_string()));
    }
}

/// A damaged RocksDB table: one line naming the file and the block, exit 1,
/// and nothing on stdout.
#[test]
fn the_command_line_names_a_damaged_table() {
    let (name, bytes, _) = rocksdb_tables()
        .into_iter()
        .find(|t| t.0.contains("zstd"))
        .unwrap();
    let sst = Table::open(&bytes).unwrap();
    let block = sst.data_block_for(b"").unwrap().unwrap();
    let mut bad = bytes.clone();
    bad[block.offset as usize + 3] ^= 0x10;
    let path = std::env::temp_dir().join(format!("ldbfilter-damaged-{name}.sst"));
    std::fs::write(&path, &bad).unwrap();
    for command in ["verify", "inspect"] {
        let out = run::ldbfilter(&[command, path.to_str().unwrap()], "");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command}: {stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.is_empty(), "nothing half-written: {stdout}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(&format!("checksum mismatch at offset {}", block.offset))
                && stderr.contains("ldbfilter-damaged"),
            "{stderr}"
        );
    }
    std::fs::remove_file(path).unwrap();
}

/// A filter with one bit changed (its checksum made to match) no longer
/// checks: a Bloom or Ribbon filter differs from its rebuild at that byte, and
/// `ldbfilter verify` says MISMATCH and exits 1.
#[test]
fn a_changed_filter_bit_is_a_mismatch() {
    let mut mismatches = 0;
    for (name, bytes, _) in rocksdb_tables() {
        let sst = Table::open(&bytes).unwrap();
        let Ok(Some(SstFilter::Full(bits))) = sst.filter() else {
            continue;
        };
        let data = bits.bit_array();
        let at = data.as_ptr() as usize - bytes.as_ptr() as usize + data.len() / 2;
        // The filter block: its bit array and 5 bytes of metadata.
        let start = data.as_ptr() as usize - bytes.as_ptr() as usize;
        let end = start + data.len() + 5;
        let mut bad = bytes.clone();
        bad[at] ^= 0x04;
        if let Some(sum) = sst.footer().checksum.checksum(&bad[start..end], bad[end]) {
            bad[end + 1..end + 5].copy_from_slice(&sum.to_le_bytes());
        }
        let check = Table::open(&bad).unwrap().check_filter().unwrap();
        assert!(!check.ok(), "{name}: {check:?}");
        let Verdict::Filters(reports) = check else {
            panic!("{name}")
        };
        match &reports[0].check {
            FilterCheck::Mismatch { what } => {
                assert!(
                    what.contains(&format!("at byte {}", data.len() / 2)),
                    "{name}: {what}"
                )
            }
            other => panic!("{name}: {other:?}"),
        }
        let path = std::env::temp_dir().join(format!("ldbfilter-bit-{name}.sst"));
        std::fs::write(&path, &bad).unwrap();
        let out = run::ldbfilter(&["verify", path.to_str().unwrap()], "");
        std::fs::remove_file(&path).unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("MISMATCH"),
            "{name}"
        );
        mismatches += 1;
    }
    assert!(mismatches >= 8, "{mismatches}");
}
