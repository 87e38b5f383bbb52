//! A database rusty-leveldb wrote through `RustyPolicy` (the testkit's
//! `rusty_database`): `ldbfilter verify` finds every table's filter
//! LevelDB's.

use leveldb_filter::rusty::RustyPolicy;
use leveldb_filter::BloomFilterPolicy;

use crate::{run, rusty_database};

#[test]
fn a_rusty_database_verifies_through_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let policy = RustyPolicy::new(BloomFilterPolicy::new(10));
    let tables = rusty_database::write(dir.path(), policy);
    let mut args = vec![std::ffi::OsString::from("verify")];
    args.extend(tables.iter().map(|t| t.clone().into_os_string()));
    let out = run::ldbfilter(&args, "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.matches(": OK leveldb.BuiltinBloomFilter2").count(),
        tables.len(),
        "{stdout}"
    );
}
