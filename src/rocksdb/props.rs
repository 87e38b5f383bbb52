//! The properties block (`rocksdb.properties`): the properties RocksDB's
//! reader acts on, read once when a table opens.

use crate::format::Corruption;
use crate::format::{varint64, BlockKind};
use crate::format::{Cursor, Layout};
use crate::Error;

/// The properties RocksDB's reader acts on, read once when the table opens.
#[derive(Clone, Debug, Default)]
pub(super) struct Props<'a> {
    pub(super) block: &'a [u8],
    pub(super) index_type: u32,
    pub(super) index_user_keys: bool,
    pub(super) index_delta: bool,
    pub(super) whole_key_filtering: bool,
    pub(super) prefix_extractor: Option<&'a [u8]>,
    /// `rocksdb.comparator`: the name of the comparator that orders the keys.
    pub(super) comparator: Option<&'a [u8]>,
    /// `rocksdb.user.defined.timestamps.persisted` (RocksDB 8.8+): 0 where
    /// the keys were stored without their timestamps.
    pub(super) timestamps_persisted: bool,
    /// The size of `rocksdb.timestamp_min`, the table's smallest timestamp.
    pub(super) timestamp_min_len: Option<usize>,
    /// `rocksdb.data.block.restart.interval` (RocksDB 11.0+), which data
    /// blocks of separated keys and values need.
    pub(super) data_restart_interval: u64,
}

impl<'a> Props<'a> {
    /// Walks the properties block as `ReadTablePropertiesHelper` does: up to
    /// an entry that does not read, keys in strictly increasing order (else
    /// RocksDB fails the table: "properties unsorted").
    pub(super) fn read(block: &'a [u8], offset: u64) -> Result<Self, Error> {
        let corrupt = |what| Error::CorruptBlock {
            block: BlockKind::Properties,
            offset,
            what,
        };
        let mut props = Props {
            block,
            whole_key_filtering: true,
            timestamps_persisted: true,
            ..Props::default()
        };
        // An entry that does not read ends the properties, RocksDB keeping
        // those before it; keys out of order fail the table.
        let mut cursor = Cursor::new(block, Layout::Plain).map_err(corrupt)?;
        let mut last = Vec::new();
        let mut more = cursor.seek_to_first().unwrap_or(false);
        while more {
            let (key, value) = (cursor.key(), cursor.value());
            if !last.is_empty() && key <= &last[..] {
                return Err(corrupt(Corruption::PropertiesUnsorted));
            }
            // `GetUint64Property`: a varint64, 0 where it does not parse.
            let number = || varint64(value).map_or(0, |(n, _)| n);
            match key {
                b"rocksdb.block.based.table.index.type" => {
                    // `DecodeFixed32` of the value, whatever its length.
                    let mut fixed = [0; 4];
                    let n = value.len().min(4);
                    fixed[..n].copy_from_slice(&value[..n]);
                    props.index_type = u32::from_le_bytes(fixed);
                }
                b"rocksdb.index.key.is.user.key" => props.index_user_keys = number() != 0,
                b"rocksdb.index.value.is.delta.encoded" => props.index_delta = number() != 0,
                b"rocksdb.data.block.restart.interval" => props.data_restart_interval = number(),
                b"rocksdb.block.based.table.whole.key.filtering" => {
                    props.whole_key_filtering = value != b"0";
                }
                b"rocksdb.prefix.extractor.name" => props.prefix_extractor = Some(value),
                b"rocksdb.comparator" => props.comparator = Some(value),
                b"rocksdb.user.defined.timestamps.persisted" => {
                    props.timestamps_persisted = number() != 0;
                }
                b"rocksdb.timestamp_min" => props.timestamp_min_len = Some(value.len()),
                _ => {}
            }
            last.clear();
            last.extend_from_slice(key);
            more = cursor.advance().unwrap_or(false);
        }
        Ok(props)
    }
}
