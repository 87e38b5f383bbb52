//! Which MANIFEST a database directory holds live, as each engine's
//! `DB::Open` finds it: LevelDB and RocksDB read `CURRENT`; Pebble reads
//! its marker files (`marker.manifest.NNNNNN.MANIFEST-NNNNNN`, the highest
//! iteration the live one) from format major version 2 on, and `CURRENT`
//! below it (`marker.format-version.NNNNNN.VVV` gives the version; none is
//! version 1, FormatMostCompatible). From version 3 Pebble leaves a
//! `CURRENT` naming `MANIFEST-000000`, which no MANIFEST is: older
//! versions of Pebble then refuse the database.
//!
//! ```
//! use leveldb_filter::db::{DirNames, ManifestPointer};
//!
//! let mut names = DirNames::default();
//! for name in ["CURRENT", "marker.format-version.000004.016",
//!              "marker.manifest.000002.MANIFEST-000009", "000012.sst"] {
//!     names.add(name);
//! }
//! // The placeholder in CURRENT is not read: the marker names the MANIFEST.
//! let live = names.live_manifest(Some(b"MANIFEST-000000\n")).unwrap();
//! assert_eq!(live.name, "MANIFEST-000009");
//! assert_eq!(live.pebble_format, Some(16));
//! assert!(matches!(live.pointer, ManifestPointer::Marker { iteration: 2, .. }));
//! ```

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{current_manifest, CurrentProblem, Engine, Manifest, ManifestError, PebbleGet};

/// The most bytes of a `CURRENT` file read: one file name and a newline
/// (Pebble refuses a larger one).
pub const MAX_CURRENT: u64 = 4096;

/// Pebble's first format major version whose MANIFEST is named by a marker
/// (`formatVersionedManifestMarker`); below it, `CURRENT` names it.
const MARKER_FORMAT: u64 = 2;

/// How a directory names its live MANIFEST.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ManifestPointer {
    /// `CURRENT`'s line: LevelDB, RocksDB, Pebble below format major
    /// version 2.
    Current,
    /// Pebble's marker file of the highest iteration.
    Marker {
        /// The marker file's name.
        file: String,
        /// Its iteration.
        iteration: u64,
    },
}

/// A database directory's live MANIFEST, and what its file names say of the
/// engine that wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveManifest {
    /// The MANIFEST's file name.
    pub name: String,
    /// Where the name comes from.
    pub pointer: ManifestPointer,
    /// Pebble's format major version, from its format-version marker
    /// (`None`: no such marker: another engine, or Pebble's
    /// FormatMostCompatible).
    pub pebble_format: Option<u64>,
    /// Whether the directory holds Pebble's marker files (`marker.*`).
    pub pebble_markers: bool,
    /// The newest OPTIONS file (`OPTIONS-NNNNNN`, the highest number), if
    /// any: RocksDB's and Pebble's options, and their versions.
    pub options_file: Option<String>,
}

/// What is wrong with the files naming a directory's live MANIFEST.
#[derive(Debug)]
#[non_exhaustive]
pub enum LocateProblem {
    /// The directory or `CURRENT` does not read.
    Io(std::io::Error),
    /// `CURRENT` does not name a MANIFEST.
    Current(CurrentProblem),
    /// A `marker.` file whose name is not `marker.NAME.ITERATION.VALUE`:
    /// Pebble refuses to open the database.
    MalformedMarker,
    /// Two markers of one name at the same iteration, naming different
    /// values: which one Pebble takes depends on the directory's order.
    MarkerTie {
        /// The other marker file.
        other: String,
    },
    /// The manifest marker's value is not `MANIFEST-` and a number.
    MarkerValue,
    /// The format-version marker's value is not a version.
    FormatVersion,
    /// A format major version whose MANIFEST a marker names, and no marker
    /// names one.
    NoManifestMarker {
        /// The format major version.
        format: u64,
    },
    /// `CURRENT` names `MANIFEST-000000`, Pebble's placeholder, and no
    /// marker names the MANIFEST.
    Placeholder,
}

/// A problem locating the live MANIFEST, and the file it is about.
#[derive(Debug)]
pub struct LocateError {
    /// The file (or directory) the problem is in.
    pub path: PathBuf,
    /// What is wrong.
    pub problem: LocateProblem,
}

impl fmt::Display for LocateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocateProblem::Io(e) => write!(f, "{e}"),
            LocateProblem::Current(problem) => {
                write!(f, "{}", ManifestError::Current(*problem))
            }
            LocateProblem::MalformedMarker => write!(
                f,
                "a marker file whose name is not `marker.NAME.ITERATION.VALUE` (Pebble refuses to open the database)"
            ),
            LocateProblem::MarkerTie { other } => write!(
                f,
                "a marker of the same iteration as {other:?}, naming another value: which one Pebble takes depends on the directory's order"
            ),
            LocateProblem::MarkerValue => {
                write!(f, "the manifest marker does not name a MANIFEST (expected `MANIFEST-` and a number)")
            }
            LocateProblem::FormatVersion => {
                write!(f, "the format-version marker does not name a format major version")
            }
            LocateProblem::NoManifestMarker { format } => write!(
                f,
                "format major version {format} names its MANIFEST by a marker (`marker.manifest.*`), and there is none"
            ),
            LocateProblem::Placeholder => write!(
                f,
                "CURRENT names MANIFEST-000000, Pebble's placeholder for versions that cannot open the database, and no marker names the MANIFEST"
            ),
        }
    }
}

impl fmt::Display for LocateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.problem)
    }
}

impl std::error::Error for LocateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.problem {
            LocateProblem::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// A marker's state: the file of the highest iteration, and another of the
/// same iteration with another value, if any.
#[derive(Clone, Debug)]
struct Marker {
    iteration: u64,
    value: String,
    file: String,
    tie: Option<String>,
}

/// The names of a directory's files, gathered one by one into what decides
/// the live MANIFEST: whether `CURRENT` is there, each marker's latest
/// state, the newest OPTIONS file. Memory stays bounded whatever the
/// directory holds: one state per marker name, and markers other than
/// Pebble's two are counted, not kept.
#[derive(Clone, Debug, Default)]
pub struct DirNames {
    current: bool,
    manifest: Option<Marker>,
    format: Option<Marker>,
    /// Whether any `marker.` file is there (Pebble's, or another marker).
    markers: bool,
    /// The first `marker.` file whose name does not parse.
    malformed: Option<String>,
    options: Option<(u64, String)>,
}

impl DirNames {
    /// Takes the name of one of the directory's entries.
    pub fn add(&mut self, name: &str) {
        if name == "CURRENT" {
            self.current = true;
        } else if let Some(rest) = name.strip_prefix("marker.") {
            self.markers = true;
            // Pebble's `parseMarkerFilename`: a name, an iteration (a
            // decimal), the rest the value; every `marker.` file must parse.
            let parsed = rest.split_once('.').and_then(|(marker, rest)| {
                let (iteration, value) = rest.split_once('.')?;
                Some((marker, parse_decimal(iteration)?, value))
            });
            let Some((marker, iteration, value)) = parsed else {
                self.malformed.get_or_insert_with(|| name.to_string());
                return;
            };
            let slot = match marker {
                "manifest" => &mut self.manifest,
                "format-version" => &mut self.format,
                _ => return,
            };
            match slot {
                Some(best) if best.iteration > iteration => {}
                Some(best) if best.iteration == iteration => {
                    if best.value != value {
                        best.tie.get_or_insert_with(|| name.to_string());
                    }
                }
                _ => {
                    *slot = Some(Marker {
                        iteration,
                        value: value.to_string(),
                        file: name.to_string(),
                        tie: None,
                    })
                }
            }
        } else if let Some(number) = name.strip_prefix("OPTIONS-").and_then(parse_decimal) {
            if self.options.as_ref().is_none_or(|(n, _)| *n < number) {
                self.options = Some((number, name.to_string()));
            }
        }
    }

    /// Whether the names are a database's: a `CURRENT`, or a marker.
    pub fn is_database(&self) -> bool {
        self.current || self.markers
    }

    /// Whether the live MANIFEST's name is read from `CURRENT` (its bytes
    /// are then given to [`DirNames::live_manifest`]).
    pub fn reads_current(&self) -> bool {
        let marker_names_it = matches!(
            (self.format_version(), &self.manifest),
            (Ok(Some(format)), Some(_)) if format >= MARKER_FORMAT
        );
        self.current && !marker_names_it
    }

    /// Pebble's format major version, from the format-version marker.
    fn format_version(&self) -> Result<Option<u64>, (String, LocateProblem)> {
        let Some(marker) = &self.format else {
            return Ok(None);
        };
        if let Some(other) = &marker.tie {
            let problem = LocateProblem::MarkerTie {
                other: other.clone(),
            };
            return Err((marker.file.clone(), problem));
        }
        // Pebble never writes version 0 (FormatDefault).
        match parse_decimal(&marker.value).filter(|&v| v > 0) {
            Some(version) => Ok(Some(version)),
            None => Err((marker.file.clone(), LocateProblem::FormatVersion)),
        }
    }

    /// The live MANIFEST, given `CURRENT`'s bytes where the directory has
    /// one: Pebble's manifest marker where the format major version (or
    /// a placeholder `CURRENT`) says so, else `CURRENT`'s line. `Err`
    /// names the file at fault (by its name in the directory; the
    /// directory itself is `.`).
    pub fn live_manifest(
        &self,
        current: Option<&[u8]>,
    ) -> Result<LiveManifest, (String, LocateProblem)> {
        if let Some(name) = &self.malformed {
            return Err((name.clone(), LocateProblem::MalformedMarker));
        }
        let format = self.format_version()?;
        let located = |name: String, pointer| LiveManifest {
            name,
            pointer,
            pebble_format: format,
            pebble_markers: self.markers,
            options_file: self.options.as_ref().map(|(_, name)| name.clone()),
        };
        let from_marker = |marker: &Marker| -> Result<LiveManifest, (String, LocateProblem)> {
            if let Some(other) = &marker.tie {
                let problem = LocateProblem::MarkerTie {
                    other: other.clone(),
                };
                return Err((marker.file.clone(), problem));
            }
            // Pebble parses the value as a file name and opens the file of
            // its number, written `MANIFEST-%06d`.
            let number = marker
                .value
                .strip_prefix("MANIFEST-")
                .and_then(parse_decimal)
                .ok_or_else(|| (marker.file.clone(), LocateProblem::MarkerValue))?;
            let pointer = ManifestPointer::Marker {
                file: marker.file.clone(),
                iteration: marker.iteration,
            };
            Ok(located(format!("MANIFEST-{number:06}"), pointer))
        };
        match (format, &self.manifest) {
            (Some(format), Some(marker)) if format >= MARKER_FORMAT => return from_marker(marker),
            (Some(format), None) if format >= MARKER_FORMAT => {
                return Err((".".into(), LocateProblem::NoManifestMarker { format }))
            }
            _ => {}
        }
        let current_error = |problem| ("CURRENT".to_string(), problem);
        match current {
            Some(bytes) => {
                let name = current_manifest(bytes).map_err(|e| match e {
                    ManifestError::Current(problem) => {
                        current_error(LocateProblem::Current(problem))
                    }
                    _ => current_error(LocateProblem::Current(CurrentProblem::NotAManifestName)),
                })?;
                // Pebble's placeholder names no MANIFEST: a marker does, if
                // any.
                let placeholder = name.strip_prefix("MANIFEST-").and_then(parse_decimal) == Some(0);
                match (placeholder, &self.manifest) {
                    (true, Some(marker)) => from_marker(marker),
                    (true, None) => Err(current_error(LocateProblem::Placeholder)),
                    (false, _) => Ok(located(name.to_string(), ManifestPointer::Current)),
                }
            }
            None => match &self.manifest {
                Some(marker) => from_marker(marker),
                None => Err(current_error(LocateProblem::Io(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "missing: no marker names the MANIFEST",
                )))),
            },
        }
    }
}

/// A decimal number as Go's `strconv.ParseUint(s, 10, 64)` reads one:
/// ASCII digits alone, within 64 bits.
fn parse_decimal(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The live MANIFEST of the database at `dir`; `Ok(None)` where `dir` is
/// no database's (neither `CURRENT` nor a marker). The directory is read
/// once, name by name; `CURRENT` up to [`MAX_CURRENT`] bytes.
pub fn locate_manifest(dir: &Path) -> Result<Option<LiveManifest>, LocateError> {
    let io = |path: &Path, e: std::io::Error| LocateError {
        path: path.to_owned(),
        problem: LocateProblem::Io(e),
    };
    let mut names = DirNames::default();
    for entry in std::fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let entry = entry.map_err(|e| io(dir, e))?;
        if let Some(name) = entry.file_name().to_str() {
            names.add(name);
        }
    }
    if !names.is_database() {
        return Ok(None);
    }
    let current = match names.reads_current() {
        true => {
            let path = dir.join("CURRENT");
            let mut bytes = Vec::new();
            std::fs::File::open(&path)
                .and_then(|f| f.take(MAX_CURRENT).read_to_end(&mut bytes))
                .map_err(|e| io(&path, e))?;
            Some(bytes)
        }
        false => None,
    };
    names
        .live_manifest(current.as_deref())
        .map(Some)
        .map_err(|(name, problem)| LocateError {
            path: match name.as_str() {
                "." => dir.to_owned(),
                _ => dir.join(name),
            },
            problem,
        })
}

/// The engine an OPTIONS file's text names in its `[Version]` section:
/// `pebble_version` (Pebble) or `rocksdb_version` (RocksDB).
///
/// ```
/// use leveldb_filter::db::{options_engine, Engine};
/// let text = "[Version]\n  pebble_version=0.1\n\n[Options]\n  wal_dir=\n";
/// assert_eq!(options_engine(text), Some(Engine::Pebble));
/// assert_eq!(options_engine("[Version]\n  rocksdb_version=7.8.3\n"), Some(Engine::RocksDb));
/// assert_eq!(options_engine("[Options]\n  pebble_version=1\n"), None);
/// ```
pub fn options_engine(options: &str) -> Option<Engine> {
    let mut inside = false;
    for line in options.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[Version]";
        } else if inside {
            match line.split_once('=').map(|(key, _)| key.trim()) {
                Some("pebble_version") => return Some(Engine::Pebble),
                Some("rocksdb_version") => return Some(Engine::RocksDb),
                _ => {}
            }
        }
    }
    None
}

impl Manifest {
    /// The MANIFEST read as its directory says: Pebble's where the
    /// directory holds Pebble's marker files or its newest OPTIONS file
    /// (`options`, its text) names Pebble. Pebble at its most compatible
    /// format writes edits of LevelDB's and RocksDB's tags alone, which
    /// their bytes cannot tell from RocksDB's; Pebble's own tags say
    /// Pebble whatever the directory holds. `Err` where the directory says
    /// Pebble and an edit holds what Pebble's decoder refuses (a tag, a
    /// level past 6). A Pebble database's `Get` order is then the one of
    /// the release that opened it last ([`PebbleGet::of`]).
    pub fn in_directory(
        mut self,
        located: &LiveManifest,
        options: Option<&str>,
    ) -> Result<Manifest, ManifestError> {
        let pebble =
            located.pebble_markers || options.and_then(options_engine) == Some(Engine::Pebble);
        if pebble && self.engine != Engine::Pebble {
            if let Some((offset, tag)) = self.not_pebble {
                return Err(ManifestError::Edit {
                    offset,
                    what: super::EditProblem::UnknownTag { tag },
                });
            }
            if let Some((offset, level)) = self.deep {
                return Err(ManifestError::Edit {
                    offset,
                    what: super::EditProblem::LevelOutOfRange { level, limit: 7 },
                });
            }
            self.engine = Engine::Pebble;
        }
        if self.engine == Engine::Pebble {
            self.pebble_get = PebbleGet::of(located.pebble_format, options);
        }
        Ok(self)
    }
}
