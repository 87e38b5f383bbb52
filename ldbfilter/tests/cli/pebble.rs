//! `ldbfilter` on the tables Pebble wrote (`testdata/pebble/`, or the
//! directory `PEBBLE_TABLES` names): `verify` checks every filter (NOT
//! CHECKED under a comparer whose Split only its code knows, exit 0),
//! `inspect` names Pebble's format, and `probe` answers as Pebble did.

use crate::{run, vectors};
use vectors::{pebble_dir, pebble_tables};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `verify` of every table at once: OK, no filter or NOT CHECKED, exit 0.
#[test]
fn verify_checks_every_pebble_table() {
    let tables = pebble_tables();
    let paths: Vec<String> = tables
        .iter()
        .map(|t| {
            pebble_dir()
                .join(format!("{}.sst", t.name))
                .display()
                .to_string()
        })
        .collect();
    let mut args = vec!["verify".to_string()];
    args.extend(paths);
    let out = run::ldbfilter(&args, "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().filter(|l| l.contains(".sst: ")).collect();
    assert_eq!(lines.len(), tables.len(), "{stdout}");
    for (line, t) in lines.iter().zip(&tables) {
        let (_, said) = line.split_once(".sst: ").unwrap();
        let format = t.spec["table_format"].as_str().unwrap();
        match said.split(' ').next() {
            Some("OK") => assert!(said.contains(&format!(" {format} ")), "{line}"),
            Some("NOT") => assert!(said.contains("oracle.reverse-suffix"), "{line}"),
            _ => assert_eq!(said, "no filter block", "{line}"),
        }
    }
}

/// `inspect --json` names Pebble's table format and keys; `probe` answers
/// each key as Pebble's filter did, where the comparer's Split is known.
#[test]
fn inspect_and_probe_answer_as_pebble() {
    let run = |args: &[&str]| {
        let out = run::ldbfilter(args, "");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let mut probed = 0;
    for t in pebble_tables() {
        let path = pebble_dir().join(format!("{}.sst", t.name));
        let path = path.to_str().unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&run(&["inspect", "--json", path])).unwrap();
        assert_eq!(json["format"], "pebble", "{}", t.name);
        assert_eq!(json["table_format"], t.spec["table_format"], "{}", t.name);
        assert_eq!(json["entries"], t.spec["point_keys"], "{}", t.name);
        if t.spec["comparer"] == "oracle.reverse-suffix" || t.spec["filter_block_length"].is_null()
        {
            continue;
        }
        let keys: Vec<String> = t.answers.iter().map(|(k, _, _)| hex(k)).collect();
        let stdin = keys.join("\n") + "\n";
        let out = run::ldbfilter(&["probe", path], &stdin);
        let stdout = String::from_utf8(out.stdout).unwrap();
        let answers: Vec<bool> = stdout.lines().map(|l| !l.ends_with(" absent")).collect();
        let want: Vec<bool> = t.answers.iter().map(|a| a.2).collect();
        assert_eq!(answers, want, "{}: probe answers", t.name);
        probed += 1;
    }
    assert!(probed >= 40, "{probed} tables probed");
}
