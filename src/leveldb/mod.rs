//! LevelDB's table files (`.ldb`, `.sst`): the [`Table`] reader, which
//! checks what it reads, and what a table's own keys say about its filter
//! block: verification against a rebuild, probes as LevelDB's lookup makes
//! them, the false-positive rate measured, and per-filter statistics.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use leveldb_filter::leveldb::Table;
//! use leveldb_filter::leveldb::{measure_fpr, probe, verify_filter, KeyFormat, Probe, Verdict, VerifyOptions};
//! use leveldb_filter::BloomFilterPolicy;
//!
//! let bytes = std::fs::read("000005.ldb")?;
//! let table = Table::open(&bytes)?;
//! let stats = table.key_stats()?; // one pass over the keys
//! if let Verdict::Match { key_format, .. } = verify_filter(&table, &stats, VerifyOptions::default())? {
//!     let policy = BloomFilterPolicy::new(10);
//!     // A user key, as an engine's Get asks for it.
//!     if let Probe::Block { offset, may_match } = probe(&table, Some(&policy), key_format, b"key")? {
//!         println!("block at {offset}: {}", if may_match { "read it" } else { "skip it" });
//!     }
//!     let measured = measure_fpr(&table, &policy, key_format)?;
//!     println!("false positives on neighbouring keys: {:.3}%", 100.0 * measured.rate());
//! }
//! # Ok(()) }
//! ```

mod detect;
mod get;
mod keys;
mod measure;
mod probe;
mod table;
mod verify;

pub use crate::format::user_key;
pub use crate::format::MeasuredFpr;
pub use detect::{detect, Basis, Detected, Evidence, FilterFound};
pub use keys::{compare_internal, KeyFormat, KeyStats};
pub use measure::{measure_fpr, BloomStats};
pub use probe::{entry_type, holds_key, probe, Probe};
pub use table::{BlockEntry, Table, TableFilter, FOOTER_LEN};
pub use verify::{
    bits_per_key_candidates, variants_for_name, verify_filter, VariantFound, Verdict, VerifyOptions,
};
