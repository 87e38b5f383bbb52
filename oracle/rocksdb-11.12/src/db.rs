//! `--db --seed N OUT_DIR`: a whole RocksDB 11.12 database directory, and
//! beside it RocksDB's own answers, as oracle/rocksdb-7.8/gen-rocksdb-db.cc does for
//! 7.8 and oracle/rocksdb-9.8/gen-rocksdb9-db.py for 9.8: the live tables
//! (`DB::live_files`, GetLiveFilesMetaData) and, for a few hundred probe
//! keys per column family, what get says and how many tables' filters ruled
//! the key out (the ticker BLOOM_FILTER_USEFUL across that get). These are
//! the golden databases of testdata/db/rocksdb-11.12/.
//!
//! OUT_DIR/db is the database, left as RocksDB leaves it (CURRENT,
//! MANIFEST-*, *.sst, *.log, IDENTITY, LOCK, LOG, LOG.old.*, OPTIONS-*). Two
//! column families, "default" and "other", with different keys
//! `user:%08d`; level compaction, a full Bloom filter of 10 bits per key
//! (the default format_version), 64 KiB write buffers, 32 KiB tables and a
//! 64 KiB level 1 growing 4 times a level; keys written in rounds
//! (overwrites and deletions among them, part of each family compacted with
//! compact_range), the last rounds with automatic compactions off, to stay
//! at level 0.
//!
//! OUT_DIR/live.txt: one line per live table, in GetLiveFilesMetaData's
//! order: `COLUMN_FAMILY LEVEL NUMBER FILE_SIZE SMALLEST_USER_KEY_HEX
//! LARGEST_USER_KEY_HEX SMALLEST_SEQNO LARGEST_SEQNO`.
//! OUT_DIR/gets.txt: one line per probe, by column family, then key:
//! `COLUMN_FAMILY KEY_HEX found|notfound USEFUL`, USEFUL the change of the
//! ticker rocksdb.bloom.filter.useful across the get (a count of tables).
//!
//! Every write is flushed to a table before the probes (the WAL holds no
//! data); the probes run with automatic compactions off, and the live
//! tables are the same before and after them; live.txt is checked against
//! a copy of the closed database, reopened, and against the tables in
//! OUT_DIR/db.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rust_rocksdb::{
    statistics::Ticker, BlockBasedOptions, ColumnFamilyDescriptor, DBCompactionStyle, Options, DB,
};

use crate::{hex, Rng};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

pub(crate) const FAMILIES: [&str; 2] = ["default", "other"];
/// ids 0..9999; user:00010000 and up never written.
pub(crate) const SPACE: u64 = 10000;

impl Rng {
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The database's options (with statistics) and each family's.
pub(crate) fn options() -> (Options, Options) {
    let mut db = Options::default();
    db.create_if_missing(true);
    db.create_missing_column_families(true);
    db.set_max_background_jobs(2);
    db.enable_statistics();
    let mut table = BlockBasedOptions::default();
    table.set_bloom_filter(10.0, false);
    let mut cf = Options::default();
    cf.set_block_based_table_factory(&table);
    cf.set_compaction_style(DBCompactionStyle::Level);
    cf.set_write_buffer_size(64 << 10);
    cf.set_target_file_size_base(32 << 10);
    cf.set_max_bytes_for_level_base(64 << 10);
    cf.set_max_bytes_for_level_multiplier(4.0);
    cf.set_level_zero_file_num_compaction_trigger(4);
    (db, cf)
}

pub(crate) fn open(db: &Options, cf: &Options, path: &Path) -> Result<DB> {
    let descriptors = FAMILIES
        .iter()
        .map(|name| ColumnFamilyDescriptor::new(*name, cf.clone()));
    Ok(DB::open_cf_descriptors(db, path, descriptors)?)
}

fn int_property(db: &DB, name: &str) -> Result<u64> {
    db.property_int_value(name)?
        .ok_or_else(|| format!("no property {name}").into())
}

/// Waits until no flush or compaction runs or is pending (in any family; a
/// compaction counts as pending only while automatic compactions are on:
/// with them off, the property still says whether one is needed).
pub(crate) fn quiesce(db: &DB, auto_on: bool) -> Result<()> {
    let mut quiet = 0;
    while quiet < 5 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut busy = int_property(db, "rocksdb.num-running-compactions")?
            + int_property(db, "rocksdb.num-running-flushes")?;
        for name in FAMILIES {
            let h = db.cf_handle(name).ok_or("no family")?;
            if auto_on {
                busy += db
                    .property_int_value_cf(h, "rocksdb.compaction-pending")?
                    .unwrap_or(0);
            }
            busy += db
                .property_int_value_cf(h, "rocksdb.mem-table-flush-pending")?
                .unwrap_or(0);
        }
        quiet = if busy > 0 { 0 } else { quiet + 1 };
    }
    Ok(())
}

/// `/000012.sst` -> 12
fn number_of(name: &str) -> Result<u64> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let number = base
        .strip_suffix(".sst")
        .ok_or_else(|| format!("not a table: {name}"))?;
    Ok(number.parse()?)
}

/// One line per live table, in GetLiveFilesMetaData's order, and the tables'
/// numbers.
pub(crate) fn live_text(db: &DB) -> Result<(String, BTreeSet<u64>)> {
    let mut out = String::new();
    let mut numbers = BTreeSet::new();
    for f in db.live_files()? {
        let number = number_of(&f.name)?;
        numbers.insert(number);
        let key = |k: &Option<Vec<u8>>| hex(k.as_deref().unwrap_or_default());
        out.push_str(&format!(
            "{} {} {} {} {} {} {} {}\n",
            f.column_family_name,
            f.level,
            number,
            f.size,
            key(&f.start_key),
            key(&f.end_key),
            f.smallest_seqno,
            f.largest_seqno
        ));
    }
    Ok((out, numbers))
}

pub(crate) fn key_of(id: u64) -> Vec<u8> {
    format!("user:{id:08}").into_bytes()
}

fn value_of(rng: &mut Rng, family: &str, id: u64, round: u64) -> Vec<u8> {
    let mut v = format!("{family}.{id}.{round}:").into_bytes();
    let n = 40 + rng.below(120);
    v.extend((0..n).map(|_| b' ' + rng.below(95) as u8));
    v
}

/// One column family's keys: id -> present (false: deleted).
#[derive(Default)]
struct Model {
    ids: BTreeMap<u64, bool>,
    overwritten: BTreeSet<u64>,
}

impl Model {
    fn present(&self, lo: u64, hi: u64) -> Vec<u64> {
        self.ids
            .range(lo..hi)
            .filter(|(_, live)| **live)
            .map(|(id, _)| *id)
            .collect()
    }
}

struct Writer<'a> {
    db: &'a DB,
    rng: &'a mut Rng,
    models: &'a mut [Model; 2],
}

impl Writer<'_> {
    fn put(&mut self, f: usize, id: u64, round: u64) -> Result<()> {
        let h = self.db.cf_handle(FAMILIES[f]).ok_or("no family")?;
        self.db
            .put_cf(h, key_of(id), value_of(self.rng, FAMILIES[f], id, round))?;
        let m = &mut self.models[f];
        if m.ids.contains_key(&id) {
            m.overwritten.insert(id);
        }
        m.ids.insert(id, true);
        Ok(())
    }

    fn delete(&mut self, f: usize, id: u64) -> Result<()> {
        let h = self.db.cf_handle(FAMILIES[f]).ok_or("no family")?;
        self.db.delete_cf(h, key_of(id))?;
        self.models[f].ids.insert(id, false);
        Ok(())
    }

    /// n writes to family f's ids in [lo, hi): new keys, overwrites, deletions.
    #[allow(clippy::too_many_arguments)]
    fn mix(
        &mut self,
        f: usize,
        lo: u64,
        hi: u64,
        n: u64,
        round: u64,
        overwrite: u64,
        erase: u64,
    ) -> Result<()> {
        for _ in 0..n {
            let ids = self.models[f].present(lo, hi);
            let r = self.rng.below(100);
            if !ids.is_empty() && r < overwrite {
                let id = ids[self.rng.below(ids.len() as u64) as usize];
                self.put(f, id, round)?;
            } else if !ids.is_empty() && r < overwrite + erase {
                let id = ids[self.rng.below(ids.len() as u64) as usize];
                self.delete(f, id)?;
            } else {
                let id = loop {
                    let id = lo + self.rng.below(hi - lo);
                    if !self.models[f].ids.contains_key(&id) {
                        break id;
                    }
                };
                self.put(f, id, round)?;
            }
        }
        Ok(())
    }

    /// Both families written in turns of a few keys, sharing the WAL.
    fn both(
        &mut self,
        mut n0: u64,
        mut n1: u64,
        round: u64,
        overwrite: u64,
        erase: u64,
    ) -> Result<()> {
        while n0 > 0 || n1 > 0 {
            let a = n0.min(1 + self.rng.below(20));
            let b = n1.min(1 + self.rng.below(20));
            self.mix(0, 0, SPACE, a, round, overwrite, erase)?;
            self.mix(1, 0, SPACE, b, round, overwrite, erase)?;
            n0 -= a;
            n1 -= b;
        }
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        for name in FAMILIES {
            self.db
                .flush_cf(self.db.cf_handle(name).ok_or("no family")?)?;
        }
        Ok(())
    }
}

/// The tables (`*.sst`) in a database directory.
pub(crate) fn tables_in(path: &Path) -> Result<BTreeSet<u64>> {
    let mut numbers = BTreeSet::new();
    for entry in std::fs::read_dir(path)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".sst") {
            numbers.insert(number_of(&name)?);
        }
    }
    Ok(numbers)
}

pub fn run(seed: u64, out: &str) -> Result<()> {
    let out = Path::new(out);
    std::fs::create_dir_all(out)?;
    let path = out.join("db");
    if path.exists() {
        return Err(format!("{} exists", path.display()).into());
    }
    let (mut db_opts, cf_opts) = options();
    db_opts.set_error_if_exists(true);
    let mut db = open(&db_opts, &cf_opts, &path)?;
    db_opts.set_error_if_exists(false);

    let mut rng = Rng(seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(0xdb11)
        | 1);
    rng.next();
    let mut models: [Model; 2] = Default::default();

    // Rounds 1 and 2: new keys, then overwrites, deletions and new keys.
    {
        let mut w = Writer {
            db: &db,
            rng: &mut rng,
            models: &mut models,
        };
        w.both(1800, 1000, 1, 0, 0)?;
        w.both(900, 500, 2, 30, 20)?;
    }
    quiesce(&db, true)?;
    // Closed and reopened: a new MANIFEST, LOG.old.*, a new OPTIONS file.
    drop(db);
    db = open(&db_opts, &cf_opts, &path)?;
    // Part of each family compacted down.
    db.compact_range_cf(
        db.cf_handle("default").ok_or("no family")?,
        Some(key_of(0)),
        Some(key_of(SPACE / 4)),
    );
    db.compact_range_cf(
        db.cf_handle("other").ok_or("no family")?,
        Some(key_of(SPACE / 2)),
        Some(key_of(SPACE * 7 / 10)),
    );
    // Round 3: more writes, automatic compactions on.
    {
        let mut w = Writer {
            db: &db,
            rng: &mut rng,
            models: &mut models,
        };
        w.both(500, 300, 3, 30, 15)?;
        w.flush()?;
    }
    quiesce(&db, true)?;
    // Round 4: automatic compactions off, each pass flushed to level 0.
    for name in FAMILIES {
        db.set_options_cf(
            db.cf_handle(name).ok_or("no family")?,
            &[("disable_auto_compactions", "true")],
        )?;
    }
    quiesce(&db, false)?;
    {
        let mut w = Writer {
            db: &db,
            rng: &mut rng,
            models: &mut models,
        };
        for pass in 0..3 {
            let n = 120 + w.rng.below(40);
            w.mix(0, 0, SPACE, n, 4 + pass, 30, 15)?;
            if pass < 2 {
                let n = 100 + w.rng.below(40);
                w.mix(1, 0, SPACE, n, 4 + pass, 30, 15)?;
            }
            w.flush()?;
        }
    }
    quiesce(&db, false)?;
    let (before_probes, _) = live_text(&db)?;

    // The probes of each family: its present keys (some overwritten), deleted
    // keys, keys of the other family alone, never written inside the space,
    // near misses, and keys outside every table's range.
    let mut answers = String::new();
    let (mut found, mut probed, mut ruled_out, mut useful_total) = (0, 0, 0, 0);
    for (f, name) in FAMILIES.iter().enumerate() {
        let (m, o) = (&models[f], &models[1 - f]);
        let live = m.present(0, u64::MAX);
        let dead: Vec<u64> = m
            .ids
            .iter()
            .filter(|(_, l)| !**l)
            .map(|(id, _)| *id)
            .collect();
        let over: Vec<u64> = m.overwritten.iter().copied().collect();
        let others: Vec<u64> = o
            .present(0, u64::MAX)
            .into_iter()
            .filter(|id| !m.ids.contains_key(id))
            .collect();
        let mut pick = |ids: &[u64]| key_of(ids[rng.below(ids.len() as u64) as usize]);
        let mut probes = BTreeSet::new();
        for _ in 0..70 {
            probes.insert(pick(&live));
        }
        for _ in 0..40 {
            probes.insert(pick(&over));
        }
        for _ in 0..50 {
            probes.insert(pick(&dead));
        }
        for _ in 0..40 {
            probes.insert(pick(&others));
        }
        for _ in 0..70 {
            let id = rng.below(SPACE);
            if !m.ids.contains_key(&id) && !o.ids.contains_key(&id) {
                probes.insert(key_of(id));
            }
        }
        for _ in 0..12 {
            let k = key_of(live[rng.below(live.len() as u64) as usize]);
            let mut longer = k.clone();
            longer.push(b'0' + rng.below(10) as u8);
            probes.insert(longer);
            probes.insert(k[..k.len() - 1].to_vec());
        }
        for _ in 0..12 {
            probes.insert(key_of(SPACE + rng.below(90_000_000)));
        }
        for k in [
            &b"a"[..],
            b"user",
            b"user:",
            b"user:0",
            b"user:~",
            b"zzz",
            b"\x01",
            b"\xff\xfe",
            b"USER:00000001",
            b"user:99999999",
        ] {
            probes.insert(k.to_vec());
        }
        let h = db.cf_handle(name).ok_or("no family")?;
        for key in &probes {
            let before = db_opts.get_ticker_count(Ticker::BloomFilterUseful);
            let value = db.get_cf(h, key)?;
            let useful = db_opts.get_ticker_count(Ticker::BloomFilterUseful) - before;
            let mut expect = false;
            if key.len() == 13
                && key.starts_with(b"user:")
                && key[5..].iter().all(u8::is_ascii_digit)
            {
                let id: u64 = std::str::from_utf8(&key[5..])?.parse()?;
                expect = m.ids.get(&id) == Some(&true);
            }
            if value.is_some() != expect {
                return Err(format!("get {} disagrees with the model", hex(key)).into());
            }
            if let Some(v) = &value {
                if !v.starts_with(format!("{name}.").as_bytes()) {
                    return Err(format!("get {}: a value of another family", hex(key)).into());
                }
            }
            found += value.is_some() as u64;
            probed += 1;
            ruled_out += (useful > 0) as u64;
            useful_total += useful;
            let answer = if value.is_some() { "found" } else { "notfound" };
            answers.push_str(&format!("{name} {} {answer} {useful}\n", hex(key)));
        }
    }
    quiesce(&db, false)?;
    let (live, numbers) = live_text(&db)?;
    if live != before_probes {
        return Err("the live tables changed during the probes".into());
    }
    drop(db);

    // The closed database's directory holds exactly the live tables.
    if tables_in(&path)? != numbers {
        return Err("the database's directory holds other tables than the live ones".into());
    }
    // A copy of the closed database, reopened, holds the same tables.
    let copy = out.join(".db-copy");
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy)?;
    for entry in std::fs::read_dir(&path)? {
        let entry = entry?;
        std::fs::copy(entry.path(), copy.join(entry.file_name()))?;
    }
    {
        let mut cf = cf_opts.clone();
        cf.set_disable_auto_compactions(true);
        let reopened = open(&db_opts, &cf, &copy)?;
        if live_text(&reopened)?.0 != live {
            return Err("the reopened copy holds other tables".into());
        }
    }
    std::fs::remove_dir_all(&copy)?;
    if tables_in(&path)? != numbers {
        return Err("the database's directory changed".into());
    }

    std::fs::write(out.join("gets.txt"), answers)?;
    std::fs::write(out.join("live.txt"), &live)?;
    let mut shape: BTreeMap<String, usize> = BTreeMap::new();
    let mut total = 0u64;
    for line in live.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        *shape
            .entry(format!("{} L{}", fields[0], fields[1]))
            .or_default() += 1;
        total += fields[3].parse::<u64>()?;
    }
    print!("{} tables, {total} bytes;", live.lines().count());
    for (at, n) in &shape {
        print!(" {at}: {n}");
    }
    println!("; {probed} probes, {found} found, {ruled_out} ruled out by a filter ({useful_total} tables)");
    Ok(())
}
