//! `--deployed --seed N OUT_DIR`: RocksDB 11.12 databases written with
//! features real deployments turn on, and beside each RocksDB's own
//! answers, as oracle/rocksdb-7.8/gen-rocksdb-deployed.cc does for 7.8.3. One
//! database a feature, OUT_DIR/FEATURE/db:
//!
//! - `deletions`: point, single and range deletions and merges (an
//!   associative operator that appends operands) over several levels;
//! - `blob`: the same writes under integrated BlobDB (enable_blob_files,
//!   min_blob_size 24, 16 KiB blob files, garbage collection of the oldest
//!   quarter);
//! - `wal`: the same writes, then more (puts, merges, deletions of each
//!   kind, a range deletion) left in the write-ahead log: the database is
//!   closed without a flush.
//!
//! Beside each db/: live.txt and gets.txt in db.rs's format (the options
//! of db.rs: level compaction, a full Bloom filter of 10 bits per key, two
//! column families, of which only `default` is written), and for blob,
//! blobstats.txt: `COLUMN_FAMILY FILES GARBAGE_BYTES`, the properties
//! rocksdb.num-blob-files and rocksdb.live-blob-file-garbage-size. Each get
//! is checked against a model of the writes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rust_rocksdb::merge_operator::MergeOperands;
use rust_rocksdb::{statistics::Ticker, ColumnFamily, DB};

use crate::db::{key_of, live_text, open, options, quiesce, tables_in, FAMILIES, SPACE};
use crate::{hex, Rng};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The merge operator: the existing value and the operands, comma separated.
fn append(_: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let mut out = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for operand in operands.iter() {
        if !out.is_empty() {
            out.push(b',');
        }
        out.extend_from_slice(operand);
    }
    Some(out)
}

/// What the writes left of each id of the default family.
#[derive(Default)]
struct Model {
    /// id -> present (false: deleted).
    ids: BTreeMap<u64, bool>,
    /// Ids put once and nothing else since: single deletions take these.
    once: BTreeSet<u64>,
    /// Ids single-deleted: never written again (RocksDB does not define a
    /// single deletion mixed with other writes of its key).
    retired: BTreeSet<u64>,
    merged: BTreeSet<u64>,
    ranged: BTreeSet<u64>,
}

impl Model {
    fn with(&self, present: bool) -> Vec<u64> {
        self.ids
            .iter()
            .filter(|(id, p)| **p == present && !self.retired.contains(id))
            .map(|(id, _)| *id)
            .collect()
    }
}

struct Writer<'a> {
    db: &'a DB,
    rng: &'a mut Rng,
    model: Model,
}

impl Writer<'_> {
    fn family(&self) -> Result<&ColumnFamily> {
        Ok(self.db.cf_handle(FAMILIES[0]).ok_or("no family")?)
    }

    /// A value of 8 to 200 bytes: some stay in the table, some go to a blob
    /// file (min_blob_size 24).
    fn value(&mut self, id: u64, round: u64) -> Vec<u8> {
        let mut v = format!("{id}.{round}:").into_bytes();
        let n = self.rng.below(190);
        v.extend((0..n).map(|_| b' ' + self.rng.below(95) as u8));
        v
    }

    fn pick(&mut self, ids: &[u64]) -> Option<u64> {
        (!ids.is_empty()).then(|| ids[self.rng.below(ids.len() as u64) as usize])
    }

    fn unwritten(&mut self) -> u64 {
        loop {
            let id = self.rng.below(SPACE);
            if !self.model.ids.contains_key(&id) {
                return id;
            }
        }
    }

    fn put(&mut self, id: u64, round: u64) -> Result<()> {
        let value = self.value(id, round);
        self.db.put_cf(self.family()?, key_of(id), value)?;
        match self.model.ids.insert(id, true) {
            Some(true) => self.model.once.remove(&id),
            _ => self.model.once.insert(id),
        };
        Ok(())
    }

    fn merge(&mut self, id: u64, round: u64) -> Result<()> {
        let operand = format!("m{round}");
        self.db.merge_cf(self.family()?, key_of(id), operand)?;
        self.model.ids.insert(id, true);
        self.model.once.remove(&id);
        self.model.merged.insert(id);
        Ok(())
    }

    fn delete(&mut self, id: u64) -> Result<()> {
        self.db.delete_cf(self.family()?, key_of(id))?;
        self.model.ids.insert(id, false);
        self.model.once.remove(&id);
        Ok(())
    }

    fn single_delete(&mut self, id: u64) -> Result<()> {
        self.db.single_delete_cf(self.family()?, key_of(id))?;
        self.model.ids.insert(id, false);
        self.model.once.remove(&id);
        self.model.retired.insert(id);
        Ok(())
    }

    /// A range deletion of `len` ids from a random one.
    fn delete_range(&mut self, len: u64) -> Result<()> {
        let from = self.rng.below(SPACE - len);
        self.db
            .delete_range_cf(self.family()?, key_of(from), key_of(from + len))?;
        for id in from..from + len {
            if let Some(present) = self.model.ids.get_mut(&id) {
                *present = false;
                self.model.once.remove(&id);
                self.model.ranged.insert(id);
            }
        }
        Ok(())
    }

    /// `n` writes of every kind.
    fn mix(&mut self, n: u64, round: u64) -> Result<()> {
        for _ in 0..n {
            let (present, absent) = (self.model.with(true), self.model.with(false));
            let once: Vec<u64> = self.model.once.iter().copied().collect();
            let r = self.rng.below(100);
            let done = match r {
                0..=24 => self.pick(&present).map(|id| self.put(id, round)),
                25..=39 => self.pick(&present).map(|id| self.merge(id, round)),
                40..=44 => self.pick(&absent).map(|id| self.merge(id, round)),
                45..=54 => self.pick(&present).map(|id| self.delete(id)),
                55..=64 => self.pick(&once).map(|id| self.single_delete(id)),
                65..=69 => {
                    let id = self.unwritten();
                    Some(self.merge(id, round))
                }
                _ => None,
            };
            match done {
                Some(result) => result?,
                None => {
                    let id = self.unwritten();
                    self.put(id, round)?;
                }
            }
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        Ok(self.db.flush_cf(self.family()?)?)
    }
}

pub fn run(seed: u64, out: &str) -> Result<()> {
    for (i, feature) in ["deletions", "blob", "wal"].into_iter().enumerate() {
        write(
            feature,
            seed.wrapping_add(i as u64),
            &Path::new(out).join(feature),
        )?;
    }
    Ok(())
}

fn write(feature: &str, seed: u64, out: &Path) -> Result<()> {
    std::fs::create_dir_all(out)?;
    let path = out.join("db");
    if path.exists() {
        return Err(format!("{} exists", path.display()).into());
    }
    let (mut db_opts, mut cf_opts) = options();
    cf_opts.set_merge_operator_associative("append", append);
    if feature == "blob" {
        cf_opts.set_enable_blob_files(true);
        cf_opts.set_min_blob_size(24);
        cf_opts.set_blob_file_size(16 << 10);
        cf_opts.set_enable_blob_gc(true);
        cf_opts.set_blob_gc_age_cutoff(0.25);
    }
    // The WAL's writes stay there: no flush at close.
    db_opts.set_avoid_flush_during_shutdown(true);
    db_opts.set_error_if_exists(true);
    let db = open(&db_opts, &cf_opts, &path)?;
    db_opts.set_error_if_exists(false);
    let mut rng = Rng(seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(0xde91)
        | 1);
    rng.next();
    let mut w = Writer {
        db: &db,
        rng: &mut rng,
        model: Model::default(),
    };
    // New keys, then every kind of write, flushed; part compacted down.
    for _ in 0..1500 {
        let id = w.unwritten();
        w.put(id, 1)?;
    }
    w.flush()?;
    w.mix(700, 2)?;
    w.delete_range(40)?;
    w.flush()?;
    quiesce(&db, true)?;
    db.compact_range_cf(w.family()?, Some(key_of(0)), Some(key_of(SPACE / 3)));
    w.mix(500, 3)?;
    w.delete_range(25)?;
    w.flush()?;
    quiesce(&db, true)?;
    // Automatic compactions off: passes flushed to level 0.
    db.set_options_cf(w.family()?, &[("disable_auto_compactions", "true")])?;
    quiesce(&db, false)?;
    for pass in 0..2 {
        w.mix(150, 4 + pass)?;
        w.flush()?;
    }
    quiesce(&db, false)?;
    if feature == "wal" {
        // Left in the memtable and the WAL.
        w.mix(250, 6)?;
        w.delete_range(15)?;
    }
    let model = std::mem::take(&mut w.model);
    let (before_probes, _) = live_text(&db)?;

    // Probes: present keys (merged ones among them), deleted ones (by
    // range, by a single deletion), never written, near misses, outside.
    let mut probes = BTreeSet::new();
    let mut sample = |ids: Vec<u64>, n: usize, rng: &mut Rng| {
        for _ in 0..n.min(ids.len()) {
            probes.insert(key_of(ids[rng.below(ids.len() as u64) as usize]));
        }
    };
    sample(model.with(true), 90, &mut rng);
    sample(model.merged.iter().copied().collect(), 50, &mut rng);
    sample(model.with(false), 60, &mut rng);
    sample(model.ranged.iter().copied().collect(), 40, &mut rng);
    sample(model.retired.iter().copied().collect(), 30, &mut rng);
    for _ in 0..60 {
        let id = rng.below(SPACE);
        if !model.ids.contains_key(&id) {
            probes.insert(key_of(id));
        }
    }
    for k in [&b"a"[..], b"user:", b"user:~", b"zzz", b"\xff\xfe"] {
        probes.insert(k.to_vec());
    }
    let family = db.cf_handle(FAMILIES[0]).ok_or("no family")?;
    let mut answers = String::new();
    let (mut found, mut ruled_out) = (0, 0);
    for key in &probes {
        let before = db_opts.get_ticker_count(Ticker::BloomFilterUseful);
        let value = db.get_cf(family, key)?;
        let useful = db_opts.get_ticker_count(Ticker::BloomFilterUseful) - before;
        let id = std::str::from_utf8(key)
            .ok()
            .and_then(|k| k.strip_prefix("user:"))
            .filter(|digits| digits.len() == 8)
            .and_then(|digits| digits.parse::<u64>().ok());
        let expect = id.is_some_and(|id| model.ids.get(&id) == Some(&true));
        if value.is_some() != expect {
            return Err(format!("{feature}: get {} disagrees with the model", hex(key)).into());
        }
        found += value.is_some() as u64;
        ruled_out += (useful > 0) as u64;
        let answer = if value.is_some() { "found" } else { "notfound" };
        answers.push_str(&format!("{} {} {answer} {useful}\n", FAMILIES[0], hex(key)));
    }
    quiesce(&db, false)?;
    let (live, numbers) = live_text(&db)?;
    if live != before_probes {
        return Err("the live tables changed during the probes".into());
    }
    let blob_stats = match feature {
        "blob" => {
            let number =
                |name| -> Result<u64> { Ok(db.property_int_value_cf(family, name)?.ok_or(name)?) };
            let files = number("rocksdb.num-blob-files")?;
            let garbage = number("rocksdb.live-blob-file-garbage-size")?;
            Some(format!("{} {files} {garbage}\n", FAMILIES[0]))
        }
        _ => None,
    };
    drop(db);
    if tables_in(&path)? != numbers {
        return Err("the database's directory holds other tables than the live ones".into());
    }
    std::fs::write(out.join("gets.txt"), answers)?;
    std::fs::write(out.join("live.txt"), &live)?;
    if let Some(stats) = blob_stats {
        std::fs::write(out.join("blobstats.txt"), stats)?;
    }
    println!(
        "{feature}: {} tables; {} probes, {found} found, {ruled_out} ruled out by a filter",
        numbers.len(),
        probes.len()
    );
    Ok(())
}
