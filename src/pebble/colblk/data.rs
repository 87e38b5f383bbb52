//! Columnar data blocks (Pebble's `DataBlockEncoder`), under a key schema.
//!
//! A data block splits each internal key across columns: the user key in
//! columns a key schema defines, then five columns of its own. Which
//! schema wrote a table is its property `pebble.colblk.schema`, and only
//! that schema's code can put the keys back together:
//!
//! ```text
//! key schema header     the schema's (DefaultKeySchema: none; crdb1: 1 byte)
//! maximum key length    u32 little-endian: the longest user key
//! columnar header       (see `header`), rows = entries
//! key schema columns    the schema's
//! trailers              uint: seqnum << 8 | kind
//! prefix changed        bool: the key's prefix differs from the row before
//! values                bytes: the value, or where it is stored
//! is value external     bool: the value is a value prefix byte and a handle
//!                       into a value block or a blob file
//! is obsolete           bool: a newer key of the table shadows this one
//! padding               u8
//! ```
//!
//! The key schemas Pebble v2 knows:
//!
//! - `DefaultKeySchema(<comparer name>,<bundle size>)`: a prefix-bytes column
//!   of each key's prefix (`Split` of the comparer), and a bytes column of
//!   the rest. The prefix is what a table's filter holds.
//! - `crdb1`, CockroachDB's (`cockroachkvs`): a prefix-bytes column of the
//!   roach key (the engine key before its 0x00 sentinel), a uint column of
//!   MVCC wall times, one of logical times, and a bytes column of versions
//!   that are not MVCC times (lock-table keys); its 1-byte header says which
//!   kinds of suffix the block holds. A key is put back as the roach key,
//!   0x00, and either the wall time (8 bytes big-endian), the logical time
//!   (4 bytes, where not 0) and a length byte (9 or 13), or the untyped
//!   version and its length + 1, or nothing where all are 0 or empty. The
//!   filter holds the roach key and the sentinel. A 13-byte version with
//!   the old synthetic byte comes back without it, as Pebble reads it.

use std::fmt;

use super::bitmap::Bitmap;
use super::header::{ColumnarBlock, DataType};
use super::prefix_bytes::{PrefixBytes, PrefixCursor};
use super::raw_bytes::RawBytes;
use super::uints::Uints;
use crate::format::Corruption;

/// The length of the maximum key length, after the key schema's header.
const MAX_KEY_LEN_LEN: usize = 4;

/// The data block's own columns, after the key schema's.
const OWN_COLUMNS: [DataType; 5] = [
    DataType::Uint,  // trailers
    DataType::Bool,  // prefix changed
    DataType::Bytes, // values
    DataType::Bool,  // is value external
    DataType::Bool,  // is obsolete
];

/// The key schema name `crdb1`: CockroachDB's.
pub(crate) const CRDB1: &str = "crdb1";

/// How a data block's user keys are split into columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum KeySchema {
    /// Pebble's `DefaultKeySchema`: prefix and suffix columns.
    Default,
    /// CockroachDB's `crdb1`: roach key, wall time, logical time, untyped
    /// version.
    Cockroach,
}

impl KeySchema {
    /// The schema a table's property `pebble.colblk.schema` names.
    /// `DefaultKeySchema` is read whatever comparer and bundle size its name
    /// gives: the bundle size is in every prefix column, and the comparer
    /// only decides where prefixes ended when the block was written.
    pub(crate) fn from_name(name: &str) -> Result<KeySchema, UnknownKeySchema> {
        if name == CRDB1 {
            return Ok(KeySchema::Cockroach);
        }
        if name.starts_with("DefaultKeySchema(") && name.ends_with(')') {
            return Ok(KeySchema::Default);
        }
        Err(UnknownKeySchema {
            name: name.to_owned(),
        })
    }

    /// The length of the schema's header in each block.
    pub(crate) fn header_len(self) -> usize {
        match self {
            KeySchema::Default => 0,
            KeySchema::Cockroach => 1,
        }
    }

    /// The schema's columns, before the data block's own.
    fn columns(self) -> &'static [DataType] {
        match self {
            KeySchema::Default => &[DataType::PrefixBytes, DataType::Bytes],
            KeySchema::Cockroach => &[
                DataType::PrefixBytes,
                DataType::Uint,
                DataType::Uint,
                DataType::Bytes,
            ],
        }
    }
}

/// A key schema this crate cannot read: a user-defined one, whose code
/// alone knows how its columns make a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnknownKeySchema {
    /// The name the table gives.
    pub(crate) name: String,
}

impl fmt::Display for UnknownKeySchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "data blocks written under key schema {:?}, which only its own code reads (known: DefaultKeySchema, {CRDB1})",
            self.name
        )
    }
}

impl std::error::Error for UnknownKeySchema {}

/// The key columns of a block, by schema.
#[derive(Clone, Copy, Debug)]
enum KeyColumns<'b> {
    Default {
        prefixes: PrefixBytes<'b>,
        suffixes: RawBytes<'b>,
    },
    Cockroach {
        roach_keys: PrefixBytes<'b>,
        wall_times: Uints<'b>,
        logical_times: Uints<'b>,
        untyped_versions: RawBytes<'b>,
    },
}

impl<'b> KeyColumns<'b> {
    /// The prefix-bytes column, whose strings start each key.
    fn prefixes(&self) -> PrefixBytes<'b> {
        match *self {
            KeyColumns::Default { prefixes, .. } => prefixes,
            KeyColumns::Cockroach { roach_keys, .. } => roach_keys,
        }
    }
}

/// A data block whose columns have been read and checked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DataBlock<'b> {
    schema: KeySchema,
    schema_header: &'b [u8],
    max_key_len: u32,
    rows: usize,
    keys: KeyColumns<'b>,
    trailers: Uints<'b>,
    prefix_changed: Bitmap<'b>,
    values: RawBytes<'b>,
    external: Bitmap<'b>,
    obsolete: Bitmap<'b>,
}

impl<'b> DataBlock<'b> {
    /// Reads `block`, written under `schema`. Checks every column, and every
    /// row: no key longer than the block's maximum, an external value with
    /// its prefix byte, a `crdb1` row's versions that agree. Takes time in
    /// proportion to the block's size, and allocates nothing.
    pub(crate) fn parse(block: &'b [u8], schema: KeySchema) -> Result<Self, Corruption> {
        let custom_len = schema.header_len() + MAX_KEY_LEN_LEN;
        let header = ColumnarBlock::parse(block, custom_len)?;
        header.expect_columns(&[schema.columns(), &OWN_COLUMNS])?;
        let rows = header.rows();
        if rows == 0 {
            return Err(Corruption::ColumnarNoRows);
        }
        let custom = header.custom_header();
        let (schema_header, max_len) = custom.split_at(schema.header_len());
        let max_key_len = u32::from_le_bytes([max_len[0], max_len[1], max_len[2], max_len[3]]);
        let keys = match schema {
            KeySchema::Default => KeyColumns::Default {
                prefixes: header.prefix_bytes(0, rows)?,
                suffixes: header.raw_bytes(1, rows)?,
            },
            KeySchema::Cockroach => KeyColumns::Cockroach {
                roach_keys: header.prefix_bytes(0, rows)?,
                wall_times: header.uints(1, rows)?,
                logical_times: header.uints(2, rows)?,
                untyped_versions: header.raw_bytes(3, rows)?,
            },
        };
        let own = schema.columns().len();
        let parsed = DataBlock {
            schema,
            schema_header,
            max_key_len,
            rows,
            keys,
            trailers: header.uints(own, rows)?,
            prefix_changed: header.bitmap(own + 1, rows)?,
            values: header.raw_bytes(own + 2, rows)?,
            external: header.bitmap(own + 3, rows)?,
            obsolete: header.bitmap(own + 4, rows)?,
        };
        parsed.check_rows()?;
        Ok(parsed)
    }

    /// Checks each row's key length, external value and versions, from the
    /// columns' lengths alone.
    fn check_rows(&self) -> Result<(), Corruption> {
        let max = u64::from(self.max_key_len);
        let lengths = self.keys.prefixes().lengths();
        for (row, prefix_len) in lengths.enumerate() {
            let suffix_len = match self.keys {
                KeyColumns::Default { suffixes, .. } => {
                    suffixes.get(row).ok_or(Corruption::ColumnarRowCount)?.len()
                }
                KeyColumns::Cockroach {
                    wall_times,
                    logical_times,
                    untyped_versions,
                    ..
                } => {
                    let version = cockroach_version(
                        wall_times.get(row),
                        logical_times.get(row),
                        untyped_versions.get(row),
                    )?;
                    1 + version.len()
                }
            };
            if (prefix_len as u64).saturating_add(suffix_len as u64) > max {
                return Err(Corruption::ColumnarKeyTooLong);
            }
            if self.external.get(row) == Some(true)
                && self.values.get(row).is_none_or(<[u8]>::is_empty)
            {
                return Err(Corruption::ColumnarExternalValue);
            }
        }
        Ok(())
    }

    /// The schema the block was read under.
    pub(crate) fn schema(&self) -> KeySchema {
        self.schema
    }

    /// The key schema's header: empty for `DefaultKeySchema`; for `crdb1`
    /// one byte of flags for the suffixes in the block (1 MVCC times, 2
    /// empty, 4 other versions).
    pub(crate) fn schema_header(&self) -> &'b [u8] {
        self.schema_header
    }

    /// The longest user key the block's writer put in it.
    pub(crate) fn max_key_len(&self) -> u32 {
        self.max_key_len
    }

    /// How many entries the block holds (at least 1).
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The entries, in order.
    pub(crate) fn iter(&self) -> DataRows<'b> {
        DataRows {
            block: *self,
            cursor: self.keys.prefixes().cursor(),
            buf: Vec::new(),
        }
    }
}

/// A `crdb1` row's version, as Pebble's key seeker puts it after the
/// sentinel: the MVCC time where the wall or logical time is not 0, else
/// the untyped version and its length + 1, else nothing. `None` inputs are
/// rows past a column's end, which a parsed block does not have.
fn cockroach_version(
    wall: Option<u64>,
    logical: Option<u64>,
    untyped: Option<&[u8]>,
) -> Result<Version<'_>, Corruption> {
    let (Some(wall), Some(logical), Some(untyped)) = (wall, logical, untyped) else {
        return Err(Corruption::ColumnarRowCount);
    };
    // Logical times are 32 bits; an untyped version's length byte says
    // length + 1; the writer stores an untyped version for keys without a
    // time alone.
    let logical = u32::try_from(logical).map_err(|_| Corruption::ColumnarCockroachVersion)?;
    if untyped.len() >= 255 || (!untyped.is_empty() && (wall != 0 || logical != 0)) {
        return Err(Corruption::ColumnarCockroachVersion);
    }
    Ok(match (wall, logical) {
        (0, 0) if untyped.is_empty() => Version::None,
        (0, 0) => Version::Untyped(untyped),
        (wall, 0) => Version::Wall(wall),
        (wall, logical) => Version::WallLogical(wall, logical),
    })
}

/// The suffix of a `crdb1` key, after its sentinel.
#[derive(Clone, Copy, Debug)]
enum Version<'b> {
    None,
    Untyped(&'b [u8]),
    Wall(u64),
    WallLogical(u64, u32),
}

impl Version<'_> {
    /// Its length in the key.
    fn len(self) -> usize {
        match self {
            Version::None => 0,
            Version::Untyped(v) => v.len() + 1,
            Version::Wall(_) => 9,
            Version::WallLogical(..) => 13,
        }
    }

    /// Appends it to a key.
    fn append_to(self, key: &mut Vec<u8>) {
        match self {
            Version::None => {}
            Version::Untyped(v) => {
                key.extend_from_slice(v);
                // Under 255 bytes, checked when the block was parsed.
                key.push(v.len() as u8 + 1);
            }
            Version::Wall(wall) => {
                key.extend_from_slice(&wall.to_be_bytes());
                key.push(9);
            }
            Version::WallLogical(wall, logical) => {
                key.extend_from_slice(&wall.to_be_bytes());
                key.extend_from_slice(&logical.to_be_bytes());
                key.push(13);
            }
        }
    }
}

/// A data block's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Row<'r, 'b> {
    /// The user key, put back together as the key schema does it.
    pub(crate) user_key: &'r [u8],
    /// The key's prefix, the part a table's filter holds: the prefix
    /// column's string (`DefaultKeySchema`), or the roach key and its 0x00
    /// sentinel (`crdb1`).
    pub(crate) prefix: &'r [u8],
    /// Sequence number << 8 | kind.
    pub(crate) trailer: u64,
    /// The value, or where it is.
    pub(crate) value: Value<'b>,
    /// Whether the prefix differs from the row before's (always for the
    /// first row of a block Pebble writes).
    pub(crate) prefix_changed: bool,
    /// Whether a newer entry of the table shadows this one.
    pub(crate) obsolete: bool,
}

impl Row<'_, '_> {
    /// The sequence number.
    pub(crate) fn seqnum(&self) -> u64 {
        self.trailer >> 8
    }

    /// The kind: the trailer's low byte.
    pub(crate) fn kind(&self) -> u8 {
        self.trailer as u8
    }
}

/// An entry's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Value<'b> {
    /// The value itself.
    InPlace(&'b [u8]),
    /// A value stored elsewhere. `prefix` is Pebble's value prefix byte:
    /// bits 6-7 the kind (0x80 a value-block handle, 0x40 a blob handle),
    /// bit 5 "a SET with the prefix of the SET before", bits 0-2 a short
    /// attribute; `handle` locates the value.
    External { prefix: u8, handle: &'b [u8] },
}

/// The entries of a [`DataBlock`], in order, each key built in a buffer of
/// the walk's own from the key before (a lending iterator: a row's keys
/// live until the next call).
#[derive(Clone, Debug)]
pub(crate) struct DataRows<'b> {
    block: DataBlock<'b>,
    cursor: PrefixCursor<'b>,
    buf: Vec<u8>,
}

impl<'b> DataRows<'b> {
    /// The next entry.
    pub(crate) fn next(&mut self) -> Option<Row<'_, 'b>> {
        let row = self.cursor.position();
        let prefix_len = self.cursor.next(&mut self.buf)?;
        let block = &self.block;
        let prefix_len = match block.keys {
            KeyColumns::Default { suffixes, .. } => {
                self.buf.extend_from_slice(suffixes.get(row)?);
                prefix_len
            }
            KeyColumns::Cockroach {
                wall_times,
                logical_times,
                untyped_versions,
                ..
            } => {
                let version = cockroach_version(
                    wall_times.get(row),
                    logical_times.get(row),
                    untyped_versions.get(row),
                )
                .ok()?;
                self.buf.push(0);
                version.append_to(&mut self.buf);
                prefix_len + 1
            }
        };
        let value = block.values.get(row)?;
        let value = if block.external.get(row)? {
            let (&prefix, handle) = value.split_first()?;
            Value::External { prefix, handle }
        } else {
            Value::InPlace(value)
        };
        Some(Row {
            user_key: &self.buf,
            prefix: self.buf.get(..prefix_len)?,
            trailer: block.trailers.get(row)?,
            value,
            prefix_changed: block.prefix_changed.get(row)?,
            obsolete: block.obsolete.get(row)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `crdb1` row's version as Pebble puts it back, and the rows no
    /// writer makes.
    #[test]
    fn cockroach_versions() {
        let key = |wall, logical, untyped: &[u8]| {
            let mut key = b"roach".to_vec();
            cockroach_version(Some(wall), Some(logical), Some(untyped)).map(|v| {
                v.append_to(&mut key);
                assert_eq!(key.len(), 5 + v.len());
                key
            })
        };
        assert_eq!(key(0, 0, b""), Ok(b"roach".to_vec()));
        assert_eq!(key(0, 0, b"lock"), Ok(b"roachlock\x05".to_vec()));
        assert_eq!(
            key(0x0102, 0, b""),
            Ok(b"roach\0\0\0\0\0\0\x01\x02\x09".to_vec())
        );
        assert_eq!(
            key(0, 7, b""),
            Ok(b"roach\0\0\0\0\0\0\0\0\0\0\0\x07\x0d".to_vec())
        );
        let wrong = Err(Corruption::ColumnarCockroachVersion);
        assert_eq!(key(0, 1 << 32, b""), wrong);
        assert_eq!(key(1, 0, b"lock"), wrong);
        assert_eq!(key(0, 1, b"lock"), wrong);
        assert_eq!(key(0, 0, &[7; 255]), wrong);
        assert_eq!(key(0, 0, &[7; 254]).map(|k| k[k.len() - 1]), Ok(255));
        assert_eq!(
            cockroach_version(None, Some(0), Some(b"")).err(),
            Some(Corruption::ColumnarRowCount)
        );
    }
}
