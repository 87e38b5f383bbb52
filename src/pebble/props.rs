//! A Pebble table's properties block (`rocksdb.properties`): RocksDB's
//! names and Pebble's own, read whole as Pebble's reader reads them.

use crate::format::varint64;

/// A Pebble table's properties, each name with its value as stored, in
/// the block's order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Props {
    /// Every property: name, value.
    pub entries: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Props {
    /// The value of property `name`: the last of that name, as Pebble's
    /// reader keeps it.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.entries
            .iter()
            .rfind(|(n, _)| n == name.as_bytes())
            .map(|(_, v)| &v[..])
    }

    /// A property as text (names of the comparer, merger, filter policy,
    /// key schema).
    pub fn text(&self, name: &str) -> Option<String> {
        self.get(name)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// A property stored as a varint, as Pebble stores its numbers.
    pub fn number(&self, name: &str) -> Option<u64> {
        self.get(name).and_then(varint64).map(|(n, _)| n)
    }

    /// `rocksdb.comparator`: the comparer that orders the keys, whose name
    /// says how keys split for the filter.
    pub fn comparer(&self) -> Option<String> {
        self.text("rocksdb.comparator")
    }

    /// `pebble.colblk.schema`: the key schema of a columnar table's data
    /// blocks (Pebblev5 and later).
    pub fn key_schema(&self) -> Option<String> {
        self.text("pebble.colblk.schema")
    }

    /// Whether the index has two levels (`rocksdb.block.based.table.index.type`
    /// 2, a fixed32).
    pub fn two_level_index(&self) -> bool {
        self.get("rocksdb.block.based.table.index.type")
            .and_then(|v| v.get(..4))
            .is_some_and(|v| v == [2, 0, 0, 0])
    }

    /// The point keys (of every kind) in the data blocks:
    /// `rocksdb.num.entries`, which counts range deletions too, less
    /// `rocksdb.num.range-deletions`.
    pub fn point_keys(&self) -> Option<u64> {
        let deletions = self.number("rocksdb.num.range-deletions").unwrap_or(0);
        Some(
            self.number("rocksdb.num.entries")?
                .saturating_sub(deletions),
        )
    }
}
