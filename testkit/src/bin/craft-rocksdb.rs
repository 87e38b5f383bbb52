//! Writes the crafted RocksDB tables (`testkit/src/crafted/rocksdb.rs`) made
//! from the golden tables, each with the keys to ask RocksDB about:
//!
//!     cargo run -p leveldb-filter-testkit --bin craft-rocksdb -- OUT_DIR [GOLDEN_DIR]
//!
//! (GOLDEN_DIR: testdata/rocksdb, or a set gen-rocksdb made from another seed.)
//! `craft-rocksdb --bombs OUT_DIR` writes instead the tables whose index
//! blocks name one block many times (`tests/it/bounds.rs` holds them to the
//! memory bound), to measure a reader on them; `craft-rocksdb --intervals
//! OUT_DIR`, the tables whose index blocks are one long restart interval
//! (`testkit/src/crafted/intervals.rs`, RocksDB's and a LevelDB one).
//!
//! For each case NAME: `NAME.sst`, and `NAME.keys`: a first line `options`
//! (with ` prefix=11` where RocksDB reads it with an 11-byte fixed prefix
//! extractor), then `<key hex> written|unwritten` for each key of the golden
//! table it is made from. `oracle/rocksdb-7.8/answer-rocksdb.cc` adds RocksDB's
//! answers.

use leveldb_filter_testkit::crafted::intervals as long;
use leveldb_filter_testkit::crafted::rocksdb as crafted;

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).peekable();
    let bombs = args.next_if(|a| a == "--bombs").is_some();
    let intervals = !bombs && args.next_if(|a| a == "--intervals").is_some();
    let usage = "usage: craft-rocksdb [--bombs|--intervals] OUT_DIR [GOLDEN_DIR]";
    let out = PathBuf::from(args.next().ok_or(usage)?);
    if bombs || intervals {
        std::fs::create_dir_all(&out)?;
        let tables = match bombs {
            true => crafted::bombs(),
            false => {
                let mut tables = long::rocksdb();
                tables.push(("leveldb-index-one-interval", long::leveldb(400_000)));
                tables
            }
        };
        for (name, bytes) in tables {
            std::fs::write(out.join(format!("{name}.sst")), bytes)?;
        }
        return Ok(());
    }
    let golden = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| leveldb_filter_testkit::vectors::testdata().join("rocksdb"));
    std::fs::create_dir_all(&out)?;
    for (name, source, prefix, change) in crafted::cases() {
        let bytes = std::fs::read(golden.join(format!("{source}.sst")))?;
        let mut sst = crafted::Sst::new(&bytes);
        change(&mut sst);
        std::fs::write(out.join(format!("{name}.sst")), sst.finish())?;
        let answers = std::fs::read_to_string(golden.join(format!("{source}.answers")))?;
        let mut keys = String::from(if prefix {
            "options prefix=11\n"
        } else {
            "options\n"
        });
        for line in answers.lines() {
            let mut words = line.split(' ');
            keys.push_str(&format!(
                "{} {}\n",
                words.next().unwrap_or(""),
                words.next().unwrap_or("")
            ));
        }
        std::fs::write(out.join(format!("{name}.keys")), keys)?;
    }
    Ok(())
}
