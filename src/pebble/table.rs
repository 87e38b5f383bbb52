//! A Pebble table opened as Pebble's `sstable.NewReader` opens it: the
//! footer decides the format, then the metaindex (every entry), the
//! properties, the filter (`fullfilter.rocksdb.BuiltinBloomFilter`) and the
//! top-level index are read and checked.

use std::borrow::Cow;
use std::sync::OnceLock;

use super::colblk::KeySchema;
use super::comparer::Comparer;
use super::props::Props;
use super::tombstones::Tombstones;
use crate::format::{checked_block, minlz_block, read_block, uncompress};
use crate::format::{BlockHandle, BlockKind, Corruption, Field, Footer};
use crate::format::{Checkpoints, Cursor, Layout, Source};
use crate::format::{PEBBLE_MAGIC, ROCKSDB_MAGIC, TABLE_MAGIC};
use crate::Error;

/// The metaindex name of Pebble's filter: the only one its reader reads.
pub const FILTER_NAME: &str = "fullfilter.rocksdb.BuiltinBloomFilter";

/// Pebble's table formats (`sstable.TableFormat`), from the footer's magic
/// and version; ordered as Pebble orders them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PebbleFormat {
    /// `TableFormatLevelDB`: LevelDB's footer.
    LevelDb,
    /// `TableFormatRocksDBv2`: RocksDB's footer, format_version 2.
    RocksDbV2,
    /// `TableFormatPebblev<n>`: Pebble's magic, version n (1 to 7).
    Pebble(u32),
}

impl PebbleFormat {
    /// The format a footer gives, as Pebble's `ParseTableFormat` decides.
    pub fn of(footer: &Footer) -> Option<PebbleFormat> {
        match (footer.magic, footer.format_version) {
            (TABLE_MAGIC, _) => Some(PebbleFormat::LevelDb),
            (ROCKSDB_MAGIC, 2) => Some(PebbleFormat::RocksDbV2),
            (PEBBLE_MAGIC, v @ 1..=7) => Some(PebbleFormat::Pebble(v)),
            _ => None,
        }
    }

    /// Whether data and index blocks are columnar (Pebblev5 and later).
    pub fn columnar(self) -> bool {
        self >= PebbleFormat::Pebble(5)
    }
}

impl std::fmt::Display for PebbleFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PebbleFormat::LevelDb => f.write_str("LevelDB"),
            PebbleFormat::RocksDbV2 => f.write_str("RocksDBv2"),
            PebbleFormat::Pebble(v) => write!(f, "Pebblev{v}"),
        }
    }
}

/// A Pebble table: footer, metaindex, properties, filter and top-level
/// index, read and checked. `Send + Sync`: its one cache, the range
/// deletions, is read once.
#[derive(Clone, Debug)]
pub struct Table<'a> {
    pub(super) file: Source<'a>,
    pub(super) footer: Footer,
    pub(super) format: PebbleFormat,
    pub(super) metaindex: Vec<(Vec<u8>, Vec<u8>)>,
    pub(super) props: Props,
    /// The filter block, where the metaindex names one; its error kept, as a
    /// filter that does not read rules nothing out.
    pub(super) filter: Option<(BlockHandle, Result<&'a [u8], Error>)>,
    pub(super) index: Cow<'a, [u8]>,
    /// A row top-level index's checkpoints, made by the first lookup.
    pub(super) index_checkpoints: OnceLock<Checkpoints>,
    /// What the properties say, read once: the comparer, whether
    /// the index has two levels, the columnar key schema (or the name of
    /// one this crate does not read).
    pub(super) comparer: Option<Comparer>,
    pub(super) two_level: bool,
    pub(super) schema: Result<KeySchema, String>,
    /// Whether the data blocks hold no point key (`None`: unknown, as a
    /// walk that fails leaves it), found once, where an empty filter asks:
    /// such a filter rules every key out only then.
    pub(super) pointless: OnceLock<Option<bool>>,
    /// The range deletions, read when a `Get` first needs them.
    pub(super) tombstones: OnceLock<Result<Tombstones, Error>>,
}

impl<'a> Table<'a> {
    /// Opens a table of any of Pebble's formats (its own magic, RocksDB's
    /// of format_version 2, LevelDB's).
    pub fn open(file: impl Into<Source<'a>>) -> Result<Table<'a>, Error> {
        let file = file.into();
        let footer = Footer::read_last(file)?;
        let format = PebbleFormat::of(&footer).ok_or(Error::Unsupported {
            what: Field::PebbleFormatVersion,
            found: u64::from(footer.format_version),
        })?;
        let meta_block = read_block(file, &footer, BlockKind::Metaindex, footer.metaindex)?;
        let metaindex = super::blocks::key_values(meta_block, format >= PebbleFormat::Pebble(6))
            .map_err(|what| Error::CorruptBlock {
                block: BlockKind::Metaindex,
                offset: footer.metaindex.offset,
                what,
            })?;
        let mut table = Table {
            file,
            footer,
            format,
            metaindex,
            props: Props::default(),
            filter: None,
            index: Cow::Borrowed(&[]),
            index_checkpoints: OnceLock::new(),
            comparer: None,
            two_level: false,
            schema: Err(String::new()),
            pointless: OnceLock::new(),
            tombstones: OnceLock::new(),
        };
        if let Some(handle) = table.meta_handle("rocksdb.properties")? {
            let block = table.block(BlockKind::Properties, handle)?;
            let entries = super::blocks::key_values(&block, format >= PebbleFormat::Pebble(7))
                .map_err(|what| Error::CorruptBlock {
                    block: BlockKind::Properties,
                    offset: handle.offset,
                    what,
                })?;
            table.props = Props { entries };
        }
        if let Some(handle) = table.meta_handle(FILTER_NAME)? {
            table.filter = Some((handle, read_block(file, &footer, BlockKind::Filter, handle)));
        }
        table.comparer = table.props.comparer().as_deref().and_then(Comparer::of);
        table.two_level = table.props.two_level_index();
        table.schema = table.key_schema_named();
        table.index = table.block(BlockKind::Index, footer.index)?;
        table.check_index()?;
        Ok(table)
    }

    /// The key schema the properties name (Pebblev5 and later), as Pebble's
    /// reader resolves it: under a `DefaultKeySchema` of another comparer
    /// than the table's, Pebble does not open the table, and the blocks'
    /// prefixes are no filter keys of this table's (the name, then).
    fn key_schema_named(&self) -> Result<KeySchema, String> {
        let name = self.props.key_schema().unwrap_or_default();
        let schema = KeySchema::from_name(&name).map_err(|_| name.clone())?;
        let comparer = self.props.comparer().unwrap_or_default();
        let agrees = match schema {
            KeySchema::Default => name
                .strip_prefix("DefaultKeySchema(")
                .is_some_and(|rest| rest.starts_with(&format!("{comparer},"))),
            KeySchema::Cockroach => comparer == "cockroach_comparator",
        };
        agrees.then_some(schema).ok_or(name)
    }

    /// Checks a columnar top-level index whole, once: lookups then seek in
    /// it reading only the rows they compare.
    fn check_index(&self) -> Result<(), Error> {
        if !self.format.columnar() {
            return Ok(());
        }
        super::columnar::index_len(&self.index)
            .map(|_| ())
            .map_err(|what| Error::CorruptBlock {
                block: BlockKind::Index,
                offset: self.footer.index.offset,
                what,
            })
    }

    /// Whether the table holds no point key, walked once when first asked
    /// (false where the walk fails).
    pub(super) fn holds_no_point_key(&self) -> bool {
        let pointless = self.pointless.get_or_init(|| {
            let mut any = false;
            let walked = self.for_each_data_handle(|handle| {
                let block = self.block(BlockKind::Data, handle)?;
                self.block_keys(&block, handle, &mut |_, _, _| any = true)?;
                Ok(!any)
            });
            walked.ok().map(|()| !any)
        });
        *pointless == Some(true)
    }

    /// The handle a metaindex entry names (`None`: no such entry).
    pub(super) fn meta_handle(&self, name: &str) -> Result<Option<BlockHandle>, Error> {
        let Some(value) = self.meta(name) else {
            return Ok(None);
        };
        // `pebble.value_index` adds three length bytes after its handle.
        match BlockHandle::decode(value) {
            Some((handle, _)) => Ok(Some(handle)),
            None => Err(Error::CorruptBlock {
                block: BlockKind::Metaindex,
                offset: self.footer.metaindex.offset,
                what: Corruption::NotAHandle,
            }),
        }
    }

    /// The value of metaindex entry `name`: the last of that name, as
    /// Pebble's reader loads the metaindex into a map.
    pub fn meta(&self, name: &str) -> Option<&[u8]> {
        self.metaindex
            .iter()
            .rfind(|(n, _)| n == name.as_bytes())
            .map(|(_, v)| &v[..])
    }

    /// The metaindex's entries: name, value (a block handle, for most).
    pub fn metaindex(&self) -> &[(Vec<u8>, Vec<u8>)] {
        &self.metaindex
    }

    /// The footer.
    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    /// The table's format.
    pub fn format(&self) -> PebbleFormat {
        self.format
    }

    /// The properties.
    pub fn props(&self) -> &Props {
        &self.props
    }

    /// The comparer the properties name, where this crate knows it (`None`:
    /// one whose order and split are its own code's, or none named).
    pub fn comparer(&self) -> Option<Comparer> {
        self.comparer
    }

    /// The filter block: its handle, and its bytes or why they do not read;
    /// `None` where the table has no Bloom filter Pebble reads.
    pub fn filter(&self) -> Option<(BlockHandle, Result<&'a [u8], &Error>)> {
        self.filter
            .as_ref()
            .map(|(handle, bytes)| (*handle, bytes.as_ref().copied()))
    }

    /// Bytes held beyond the file's kept blocks: the top-level index, where
    /// it was uncompressed, and the range deletions once read.
    pub fn held_bytes(&self) -> u64 {
        let index = match &self.index {
            Cow::Owned(index) => index.len() as u64,
            Cow::Borrowed(_) => 0,
        };
        let tombstones = match self.tombstones.get() {
            Some(Ok(tombstones)) => tombstones.bytes(),
            _ => 0,
        };
        index + tombstones
    }

    /// A block's contents, checksum checked and uncompressed as Pebble
    /// compresses them (Snappy, Zstandard; MinLZ from Pebblev6).
    pub(super) fn block(
        &self,
        kind: BlockKind,
        handle: BlockHandle,
    ) -> Result<Cow<'a, [u8]>, Error> {
        let (contents, type_byte) = checked_block(self.file, &self.footer, kind, handle)?;
        match type_byte {
            // Zstandard's blocks carry their size first, as RocksDB's from
            // format_version 2.
            0 | 1 | 7 => {
                let (_, contents) =
                    uncompress(self.file.len(), kind, handle, contents, (type_byte, 2), &[])?;
                Ok(contents)
            }
            // MinLZ (Snappy where the first byte is not 0, as Pebble's
            // decoder falls back), its own length first.
            8 if self.format >= PebbleFormat::Pebble(6) => Ok(Cow::Owned(minlz_block(
                self.file.len(),
                kind,
                handle,
                &contents,
            )?)),
            _ => Err(Error::Unsupported {
                what: Field::CompressionType,
                found: u64::from(type_byte),
            }),
        }
    }

    /// A cursor over a row block, bit 31 of its restart points masked as
    /// Pebble's `decodeRestart` masks it in every format (Pebblev3 and later
    /// set it).
    pub(super) fn row_cursor<'b>(
        &self,
        block: &'b [u8],
        layout: Layout,
    ) -> Result<Cursor<'b>, Corruption> {
        Ok(Cursor::new(block, layout)?.flagged_restarts(true))
    }
}
