//! LevelDB's table files (`.ldb`, `.sst`): the [`Table`] reader, which
//! checks what it reads, and what a table's own keys say about its filter
//! block: verification against a rebuild, probes as LevelDB's lookup makes
//! them, the false-positive rate measured, and per-filter statistics.

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
