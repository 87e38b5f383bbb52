//! The golden vectors in `testdata/vectors/`, made by LevelDB 1.23 itself
//! (`gen-vectors` in `oracle/`), read back through the library: every filter
//! and block byte for byte, every answer as LevelDB gave it. No LevelDB needed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use leveldb_filter::{BloomFilterPolicy, FilterBlockBuilder, FilterBlockReader, FilterPolicy};

fn vector_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/vectors")
}

/// One `[case NAME]`: its header lines and its `[section]`s.
#[derive(Debug, Default)]
struct Case {
    name: String,
    header: BTreeMap<String, String>,
    sections: BTreeMap<String, Vec<String>>,
}

impl Case {
    fn section(&self, name: &str) -> Option<&[String]> {
        self.sections.get(name).map(Vec::as_slice)
    }
    fn bits_per_key(&self) -> usize {
        self.header["bits-per-key"].parse().unwrap()
    }
    fn hex_lines(&self, name: &str) -> Vec<Vec<u8>> {
        self.section(name)
            .unwrap()
            .iter()
            .map(|l| unhex(l))
            .collect()
    }
    fn single_hex(&self, name: &str) -> Option<Vec<u8>> {
        self.section(name).map(|lines| {
            assert_eq!(lines.len(), 1, "{}: [{name}] is one line", self.name);
            unhex(&lines[0])
        })
    }
    fn answers(&self) -> Vec<bool> {
        self.section("answers")
            .unwrap()
            .iter()
            .map(|l| l == "true")
            .collect()
    }
}

fn unhex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "odd hex {text:?}");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn read_cases(file: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(vector_dir().join(file)).unwrap();
    let mut cases: Vec<Case> = Vec::new();
    let mut section: Option<String> = None;
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        if let Some(name) = line
            .strip_prefix("[case ")
            .and_then(|l| l.strip_suffix(']'))
        {
            cases.push(Case {
                name: name.to_owned(),
                ..Case::default()
            });
            section = None;
        } else if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            cases
                .last_mut()
                .unwrap()
                .sections
                .insert(name.to_owned(), Vec::new());
            section = Some(name.to_owned());
        } else {
            let case = cases.last_mut().unwrap();
            match &section {
                Some(name) => case.sections.get_mut(name).unwrap().push(line.to_owned()),
                None => {
                    let (key, value) = line.split_once(' ').unwrap();
                    case.header.insert(key.to_owned(), value.to_owned());
                }
            }
        }
    }
    assert!(!cases.is_empty(), "{file} holds cases");
    cases
}

/// The manifests' CRC-32 (IEEE, an integrity check of the files, not LevelDB's
/// CRC-32C) and size of each golden file: a file mangled in transit fails here.
#[test]
fn manifests_match_files() {
    for dir in ["vectors", "tables"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata")
            .join(dir);
        let manifest = std::fs::read_to_string(dir.join("MANIFEST")).unwrap();
        let mut checked = 0;
        for line in manifest.lines().filter(|l| !l.starts_with('#')) {
            let fields: Vec<&str> = line.split(' ').collect();
            let bytes = std::fs::read(dir.join(fields[2])).unwrap();
            assert_eq!(
                format!("{:08x}", crc32fast::hash(&bytes)),
                fields[0],
                "{} crc32",
                fields[2]
            );
            assert_eq!(bytes.len().to_string(), fields[1], "{} size", fields[2]);
            checked += 1;
        }
        // Every golden file is in the manifest.
        let files = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name().into_string().unwrap();
                [".vec", ".ldb", ".probe"].iter().any(|x| name.ends_with(x))
            })
            .count();
        assert_eq!(checked, files, "{}", dir.display());
    }
}

#[test]
fn bloom_filters_and_answers() {
    let cases = read_cases("bloom.vec");
    assert!(cases.len() >= 150);
    for case in &cases {
        let policy = BloomFilterPolicy::new(case.bits_per_key());
        let keys = case.hex_lines("keys");
        let slices: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut filter = Vec::new();
        policy.create_filter(&slices, &mut filter);
        assert_eq!(
            Some(&filter),
            case.single_hex("filter").as_ref(),
            "{}",
            case.name
        );
        probe_bloom(case, &policy, &filter);
    }
}

/// LevelDB's answers for the case's probes, one at a time and in a batch.
fn probe_bloom(case: &Case, policy: &BloomFilterPolicy, filter: &[u8]) {
    let probes = case.hex_lines("probes");
    let answers: Vec<bool> = probes
        .iter()
        .map(|p| policy.key_may_match(p, filter))
        .collect();
    assert_eq!(answers, case.answers(), "{}", case.name);
    let refs: Vec<&[u8]> = probes.iter().map(Vec::as_slice).collect();
    let mut batch = vec![false; refs.len()];
    policy.key_may_match_batch(&refs, filter, &mut batch);
    assert_eq!(batch, case.answers(), "{} (batch)", case.name);
}

#[test]
fn malformed_bloom_answers() {
    let cases = read_cases("bloom-malformed.vec");
    assert!(cases.len() >= 1000);
    let policy = BloomFilterPolicy::new(10);
    for case in &cases {
        probe_bloom(case, &policy, &case.single_hex("filter").unwrap());
    }
}

fn probe_block(case: &Case, block: &[u8]) {
    let reader = FilterBlockReader::new(BloomFilterPolicy::new(10), block);
    let answers: Vec<bool> = case
        .section("probes")
        .unwrap()
        .iter()
        .map(|line| {
            let (offset, key) = line.split_once(' ').unwrap();
            reader.key_may_match(offset.parse().unwrap(), &unhex(key))
        })
        .collect();
    assert_eq!(answers, case.answers(), "{}", case.name);
}

#[test]
fn filter_blocks_and_answers() {
    let cases = read_cases("block.vec");
    assert!(cases.len() >= 50);
    for case in &cases {
        let mut builder = FilterBlockBuilder::new(BloomFilterPolicy::new(case.bits_per_key()));
        for call in case.section("calls").unwrap() {
            match call.split_once(' ').unwrap() {
                ("start", offset) => builder.start_block(offset.parse().unwrap()),
                ("key", key) => builder.add_key(&unhex(key)),
                other => panic!("{}: bad call {other:?}", case.name),
            }
        }
        assert_eq!(
            Some(builder.finish()),
            case.single_hex("block").as_deref(),
            "{}",
            case.name
        );
        probe_block(case, builder.finish());
    }
}

#[test]
fn malformed_block_answers() {
    let cases = read_cases("block-malformed.vec");
    assert!(cases.len() >= 1000);
    for case in &cases {
        probe_block(case, &case.single_hex("block").unwrap());
    }
}
