//! Where a table's bytes come from: a slice already in memory, or a file
//! read a block at a time, so that a reader's memory follows the blocks it
//! reads, not the file's size.
//!
//! A table keeps a few blocks for as long as it is open (metaindex,
//! properties, filter, compression dictionary), as the engines pin them;
//! those are [`kept`](Source::kept), read once per file however often it is
//! opened. Data and index blocks are [`read`](Source::read) when needed and
//! dropped after.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use elsa::sync::FrozenMap;

use super::Error;

/// A table file opened for reading by block.
///
/// ```no_run
/// use leveldb_filter::format::TableFile;
/// use leveldb_filter::rocksdb::Table;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let file = TableFile::open("000042.sst")?;
/// let table = Table::open(&file)?; // footer, metaindex, properties, filter
/// let mut bytes = 0;
/// // One data block in memory at a time, however large the file.
/// let stats = table.for_each_key(|key, _| bytes += key.len())?;
/// println!("{} keys ({bytes} bytes of keys) in a file of {} bytes", stats.keys, file.len());
/// # Ok(()) }
/// ```
pub struct TableFile {
    file: File,
    len: u64,
    /// The blocks tables keep, by offset and length.
    kept: FrozenMap<(u64, usize), Vec<u8>>,
    kept_bytes: AtomicU64,
}

impl fmt::Debug for TableFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableFile").field("len", &self.len).finish()
    }
}

impl TableFile {
    /// Opens the file at `path`; nothing is read yet.
    pub fn open(path: impl AsRef<Path>) -> io::Result<TableFile> {
        TableFile::new(File::open(path)?)
    }

    /// The table in `file`, whose length is taken now: a file that grows
    /// later is read as it was, one that shrinks gives [`Error::Read`].
    pub fn new(file: File) -> io::Result<TableFile> {
        let len = file.metadata()?.len();
        Ok(TableFile {
            file,
            len,
            kept: FrozenMap::new(),
            kept_bytes: AtomicU64::new(0),
        })
    }

    /// The table in the file's first `len` bytes, as an engine opens a table
    /// at the size its MANIFEST records (a shorter file gives
    /// [`Error::Read`]).
    pub fn prefix(self, len: u64) -> TableFile {
        TableFile {
            len,
            kept: FrozenMap::new(),
            kept_bytes: AtomicU64::new(0),
            file: self.file,
        }
    }

    /// The bytes of the blocks tables opened on the file keep (metaindex,
    /// properties, filter, dictionary).
    pub fn kept_bytes(&self) -> u64 {
        self.kept_bytes.load(Ordering::Relaxed)
    }

    /// The file's length when it was opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file was empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `len` bytes at `offset`, which the caller has found inside the file.
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>, Error> {
        let failed = |what: String| Error::Read {
            offset,
            len: len as u64,
            what,
        };
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(len)
            .map_err(|_| failed("not enough memory".into()))?;
        bytes.resize(len, 0);
        read_exact_at(&self.file, &mut bytes, offset).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => failed(format!(
                "the file is shorter than the {} bytes it had when opened",
                self.len
            )),
            _ => failed(e.to_string()),
        })?;
        Ok(bytes)
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut std::mem::take(&mut buf)[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn read_exact_at(mut file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

/// A table's bytes: in memory, or a [`TableFile`]. The tables' `open`
/// functions take either (`&[u8]`, `&Vec<u8>` or `&TableFile`).
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// The whole file, in memory (or mapped by the caller).
    Bytes(&'a [u8]),
    /// A file read by block.
    File(&'a TableFile),
}

impl<'a> From<&'a [u8]> for Source<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Source::Bytes(bytes)
    }
}

impl<'a> From<&'a Vec<u8>> for Source<'a> {
    fn from(bytes: &'a Vec<u8>) -> Self {
        Source::Bytes(bytes)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Source<'a> {
    fn from(bytes: &'a [u8; N]) -> Self {
        Source::Bytes(bytes)
    }
}

impl<'a> From<&'a TableFile> for Source<'a> {
    fn from(file: &'a TableFile) -> Self {
        Source::File(file)
    }
}

impl<'a> Source<'a> {
    /// The file's length.
    pub fn len(self) -> u64 {
        match self {
            Source::Bytes(bytes) => bytes.len() as u64,
            Source::File(file) => file.len,
        }
    }

    /// Whether the file is empty.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// `len` bytes at `offset` (inside the file: the caller checks), for as
    /// long as the source lives: read once per file.
    pub(crate) fn kept(self, offset: u64, len: usize) -> Result<&'a [u8], Error> {
        match self {
            Source::Bytes(bytes) => Ok(&bytes[offset as usize..][..len]),
            Source::File(file) => match file.kept.get(&(offset, len)) {
                Some(kept) => Ok(kept),
                None => {
                    let bytes = file.read_at(offset, len)?;
                    file.kept_bytes.fetch_add(len as u64, Ordering::Relaxed);
                    Ok(file.kept.insert((offset, len), bytes))
                }
            },
        }
    }

    /// `len` bytes at `offset` (inside the file: the caller checks),
    /// borrowed from memory or read now.
    pub(crate) fn read(self, offset: u64, len: usize) -> Result<Cow<'a, [u8]>, Error> {
        match self {
            Source::Bytes(bytes) => Ok(Cow::Borrowed(&bytes[offset as usize..][..len])),
            Source::File(file) => file.read_at(offset, len).map(Cow::Owned),
        }
    }
}
