//! The tables the paths on the command line name: table files as they are,
//! and database directories by their live tables (`CURRENT` or Pebble's
//! marker files, then the MANIFEST they name), or by every table file
//! present.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use leveldb_filter::db::{
    locate_manifest, KeyOrder, LiveManifest, LiveTable, LocateProblem, Manifest,
};

use crate::Failure;

/// The paths of a table command: tables, and database directories.
#[derive(Args)]
pub struct Inputs {
    /// Table files (.ldb, .sst) and database directories (LevelDB, RocksDB,
    /// Pebble).
    #[arg(required = true, value_name = "TABLE|DIR")]
    paths: Vec<PathBuf>,
    /// In a database directory, every table file present (.ldb, .sst),
    /// live or not, instead of the live tables the MANIFEST lists.
    #[arg(long)]
    all_files: bool,
    /// Tables worked on at once (default: one per core).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) jobs: Option<u16>,
}

/// A table to work on and, for a database's live table, where the
/// MANIFEST puts it.
pub(crate) struct Target {
    pub(crate) path: PathBuf,
    pub(crate) live: Option<Live>,
}

/// A live table's place in its database.
pub(crate) struct Live {
    pub(crate) level: u32,
    pub(crate) number: u64,
    pub(crate) column_family: String,
    /// The file size the MANIFEST records (a virtual table's: its backing
    /// table's).
    pub(crate) size: u64,
    /// Pebble's virtual table: its backing table's number, whose file it
    /// reads.
    pub(crate) backing: Option<u64>,
    /// The database's comparator, as its MANIFEST names it.
    pub(crate) comparator: Option<String>,
    /// Its key order, where this crate knows it (`Manifest::key_order`:
    /// a MANIFEST that names none is bytewise).
    pub(crate) key_order: Option<KeyOrder>,
    /// The smallest and largest user keys the MANIFEST records.
    pub(crate) key_range: (Vec<u8>, Vec<u8>),
}

/// A database directory whose MANIFEST reads.
pub(crate) struct Database {
    pub(crate) dir: PathBuf,
    /// The MANIFEST's file name, as `CURRENT` or a marker gives it.
    pub(crate) manifest_name: String,
    /// How the directory names its MANIFEST, and what its names say.
    pub(crate) located: LiveManifest,
    pub(crate) manifest: Manifest,
    /// The newest OPTIONS file's text (`OPTIONS-NNNNNN`), if any:
    /// RocksDB's or Pebble's.
    pub(crate) options: Option<String>,
}

impl Database {
    /// The file of a live table: the first of its names the engine tries
    /// that is present, else (`Err`) the first name.
    pub(crate) fn file_of(&self, table: &LiveTable) -> Result<PathBuf, PathBuf> {
        let names = table.file_names(self.manifest.engine());
        let paths = names.map(|n| self.dir.join(n));
        match paths.iter().find(|p| p.is_file()) {
            Some(path) => Ok(path.clone()),
            None => Err(paths[0].clone()),
        }
    }
}

/// What the paths name: the tables in order, the problems found before any
/// table is read (each with the number of tables before it, so that it is
/// said in its place), and the databases.
#[derive(Default)]
pub(crate) struct Targets {
    pub(crate) tables: Vec<Target>,
    pub(crate) problems: Vec<(usize, Failure)>,
    /// Files of database directories that are not tables worked on.
    pub(crate) skipped: usize,
    pub(crate) databases: Vec<Database>,
    /// Whether a directory was named (a run summary is then written).
    pub(crate) directories: bool,
}

impl Inputs {
    /// The tables and databases the paths name.
    pub(crate) fn targets(&self) -> Targets {
        let mut targets = Targets::default();
        for path in &self.paths {
            if path.is_dir() {
                targets.directories = true;
                targets.directory(path, self.all_files);
            } else {
                targets.tables.push(Target {
                    path: path.clone(),
                    live: None,
                });
            }
        }
        targets
    }
}

impl Targets {
    /// A run summary is written for a directory or more than one table.
    pub(crate) fn many(&self) -> bool {
        self.directories || self.tables.len() + self.problems.len() > 1
    }

    /// A problem, said after the tables found so far.
    fn problem(&mut self, failure: Failure) {
        self.problems.push((self.tables.len(), failure));
    }

    fn directory(&mut self, dir: &Path, all_files: bool) {
        if !all_files {
            match read_database(dir) {
                Ok(Some(database)) => return self.database(database),
                // Not a database's directory: its table files.
                Ok(None) => {}
                // Every table present is checked instead, after the problem.
                Err(failure) => self.problem(failure),
            }
        }
        match table_files(dir) {
            // Nothing to check, and nothing said yet of the directory.
            Ok((tables, _))
                if tables.is_empty() && !self.problems.iter().any(|p| p.1.is_about(dir)) =>
            {
                self.problem(Failure::Unreadable {
                    path: dir.to_owned(),
                    what: "holds no table files (.ldb, .sst), no CURRENT and no MANIFEST marker"
                        .into(),
                });
            }
            Ok((tables, others)) => {
                self.skipped += others;
                self.tables
                    .extend(tables.into_iter().map(|path| Target { path, live: None }));
            }
            Err(e) => self.problem(Failure::Unreadable {
                path: dir.to_owned(),
                what: e.to_string(),
            }),
        }
    }

    /// The database's live tables in the MANIFEST's order; a live table
    /// whose file is missing is a problem; other files are skipped.
    fn database(&mut self, database: Database) {
        let files: Vec<Result<PathBuf, PathBuf>> = database
            .manifest
            .tables()
            .iter()
            .map(|t| database.file_of(t))
            .collect();
        let families = database.manifest.column_families();
        for (table, file) in database.manifest.tables().iter().zip(&files) {
            let column_family = families
                .get(&table.column_family)
                .cloned()
                .unwrap_or_else(|| table.column_family.to_string());
            match file {
                Ok(path) => self.tables.push(Target {
                    path: path.clone(),
                    live: Some(Live {
                        level: table.level,
                        number: table.number,
                        column_family,
                        size: table.file_size(),
                        backing: table.backing().map(|b| b.number),
                        comparator: database
                            .manifest
                            .comparator(table.column_family)
                            .map(str::to_string),
                        key_order: database.manifest.key_order(table.column_family).ok(),
                        key_range: (
                            table.smallest_user_key().to_vec(),
                            table.largest_user_key().to_vec(),
                        ),
                    }),
                }),
                // In another of RocksDB's `db_paths`: not here to read.
                Err(path) if table.path_id > 0 => self.problem(Failure::Unreadable {
                    path: path.clone(),
                    what: format!(
                        "live at level {} in RocksDB's db_paths[{}], another directory: name its files to check them",
                        table.level, table.path_id
                    ),
                }),
                Err(path) => self.problem(Failure::File {
                    path: path.clone(),
                    what: match table.backing() {
                        Some(_) => format!(
                            "missing: the MANIFEST lists it as the backing table of virtual table {} live at level {}",
                            table.number, table.level
                        ),
                        None => format!(
                            "missing: the MANIFEST lists it live at level {}",
                            table.level
                        ),
                    },
                    hint: Some(MISSING),
                }),
            }
        }
        let mut blobs_present = 0;
        for blob in database.manifest.blob_files() {
            let path = database.dir.join(blob_file_name(blob.number));
            match path.is_file() {
                true => blobs_present += 1,
                false => self.problem(Failure::File {
                    path,
                    what: format!(
                        "missing: the MANIFEST lists it as a live blob file of {} blobs",
                        blob.total.0
                    ),
                    hint: Some(MISSING_BLOB),
                }),
            }
        }
        for blob in database.manifest.pebble_blob_files() {
            let path = database.dir.join(blob_file_name(blob.number));
            match path.is_file() {
                true => blobs_present += 1,
                false => self.problem(Failure::File {
                    path,
                    what: format!(
                        "missing: the MANIFEST lists it as live blob file {} of {} bytes of values",
                        blob.id, blob.value_size
                    ),
                    hint: Some(MISSING_BLOB),
                }),
            }
        }
        if let Ok((present, others)) = table_files(&database.dir) {
            // Virtual tables share their backing's file: files, not tables.
            let live = files
                .iter()
                .filter_map(|f| f.as_ref().ok())
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            let others = others.saturating_sub(blobs_present);
            self.skipped += others + present.len().saturating_sub(live);
        }
        self.databases.push(database);
    }
}

/// What a missing live table means.
const MISSING: &str =
    "reads of the keys it holds fail, and the engine will not open the database: restore the file from a backup or replica";

/// The most bytes of an OPTIONS file read (RocksDB's are a few KiB).
const MAX_OPTIONS: u64 = 1 << 20;

/// What a missing live blob file means.
const MISSING_BLOB: &str =
    "reads of the values stored in it fail (the tables hold only references to them): restore the file from a backup or replica";

/// A blob file's name in its database's directory.
pub(crate) fn blob_file_name(number: u64) -> String {
    format!("{number:06}.blob")
}

/// What a MANIFEST that does not read means.
const MANIFEST_DAMAGED: &str = "LevelDB, RocksDB and Pebble will not open the database; RepairDB (LevelDB's, RocksDB's) rebuilds a MANIFEST from the tables; every table file present is checked instead";

/// The database at `dir`: the MANIFEST `CURRENT` or Pebble's marker names,
/// replayed, read as its directory says (Pebble's where its markers or
/// OPTIONS say Pebble); `Ok(None)` where `dir` has neither `CURRENT` nor a
/// marker.
pub(crate) fn read_database(dir: &Path) -> Result<Option<Database>, Failure> {
    let unreadable = |path: &Path, e: &dyn std::fmt::Display| Failure::Unreadable {
        path: path.to_owned(),
        what: e.to_string(),
    };
    let damaged = |path: &Path, what: String| Failure::File {
        path: path.to_owned(),
        what,
        hint: Some(MANIFEST_DAMAGED),
    };
    let located = match locate_manifest(dir) {
        Ok(Some(located)) => located,
        Ok(None) => return Ok(None),
        Err(e) => {
            return Err(match &e.problem {
                LocateProblem::Io(io) => unreadable(&e.path, io),
                problem => damaged(&e.path, problem.to_string()),
            })
        }
    };
    let path = dir.join(&located.name);
    let named_by = match located.pointer {
        leveldb_filter::db::ManifestPointer::Current => "CURRENT names it".to_string(),
        leveldb_filter::db::ManifestPointer::Marker { ref file, .. } => format!("{file} names it"),
    };
    let log = read_regular(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => damaged(&path, format!("missing: {named_by}")),
        _ => unreadable(&path, &e),
    })?;
    let options = located
        .options_file
        .as_ref()
        .and_then(|name| read_options(&dir.join(name)));
    let manifest = Manifest::parse(&log)
        .and_then(|m| m.in_directory(&located, options.as_deref()))
        .map_err(|e| damaged(&path, e.to_string()))?;
    if manifest.truncated_tail() {
        crate::report::say(format_args!(
            "{}: note: it ends in a record cut short (a write that did not finish), which LevelDB, RocksDB and Pebble pass over too",
            crate::report::shown(&path)
        ));
    }
    Ok(Some(Database {
        dir: dir.to_owned(),
        manifest_name: located.name.clone(),
        located,
        manifest,
        options,
    }))
}

/// The text of an OPTIONS file, read up to [`MAX_OPTIONS`] bytes.
fn read_options(path: &Path) -> Option<String> {
    let mut text = Vec::new();
    fs::File::open(path)
        .and_then(|f| f.take(MAX_OPTIONS).read_to_end(&mut text))
        .ok()?;
    String::from_utf8(text).ok()
}

/// A regular file's bytes (a FIFO or device is refused before it is opened).
fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    if !fs::metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    fs::read(path)
}

/// The table files of a directory (`.ldb`, `.sst`), by name, and how many
/// other entries it has.
fn table_files(dir: &Path) -> std::io::Result<(Vec<PathBuf>, usize)> {
    let mut tables = Vec::new();
    let mut others = 0;
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let table = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("ldb" | "sst")
        );
        if table && path.is_file() {
            tables.push(path);
        } else {
            others += 1;
        }
    }
    tables.sort();
    Ok((tables, others))
}
