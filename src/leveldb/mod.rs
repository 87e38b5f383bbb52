//! LevelDB's table files (`.ldb`, `.sst`): the [`Table`] reader, which
//! checks what it reads, and what a table's own keys say about its filter
//! block: verification against a rebuild, probes as LevelDB's lookup makes
//! them, the false-positive rate measured, and per-filter statistics.

mod detect;
mod get;
mod table;
mod verify;

pub use crate::internal_key::user_key;
pub use detect::{detect, Basis, Detected, Evidence, FilterFound};
pub use table::{BlockEntry, Table, TableFilter, FOOTER_LEN};
pub(crate) use verify::Neighbours;
pub use verify::{
    bits_per_key_candidates, compare_internal, entry_type, holds_key, measure_fpr, probe,
    variants_for_name, verify_filter, BloomStats, KeyFormat, KeyStats, MeasuredFpr, Probe,
    VariantFound, Verdict, VerifyOptions,
};
