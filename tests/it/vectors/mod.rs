//! The golden vector files (`testdata/vectors/*.vec`, format in the README
//! beside them), read for the tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub fn vector_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/vectors")
}

/// One `[case NAME]`: its header lines and its `[section]`s.
#[derive(Debug, Default)]
pub struct Case {
    pub name: String,
    pub header: BTreeMap<String, String>,
    pub sections: BTreeMap<String, Vec<String>>,
}

impl Case {
    pub fn section(&self, name: &str) -> Option<&[String]> {
        self.sections.get(name).map(Vec::as_slice)
    }
    pub fn bits_per_key(&self) -> usize {
        self.header["bits-per-key"].parse().unwrap()
    }
    pub fn hex_lines(&self, name: &str) -> Vec<Vec<u8>> {
        self.section(name)
            .unwrap()
            .iter()
            .map(|l| unhex(l))
            .collect()
    }
    pub fn single_hex(&self, name: &str) -> Option<Vec<u8>> {
        self.section(name).map(|lines| {
            assert_eq!(lines.len(), 1, "{}: [{name}] is one line", self.name);
            unhex(&lines[0])
        })
    }
    /// A section as the text a command reads or prints: its lines, each
    /// ended by a newline.
    pub fn text(&self, name: &str) -> String {
        self.section(name)
            .unwrap()
            .iter()
            .map(|l| format!("{l}\n"))
            .collect()
    }
    pub fn answers(&self) -> Vec<bool> {
        self.section("answers")
            .unwrap()
            .iter()
            .map(|l| l == "true")
            .collect()
    }
}

pub fn unhex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "odd hex {text:?}");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

pub fn read_cases(file: &str) -> Vec<Case> {
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
