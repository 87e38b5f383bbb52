//! Damaged tables whose checksums pass, and LevelDB's lookup decisions on
//! them: the golden tables (`testdata/tables`) with one block damaged (a
//! restart offset moved or two swapped, the restart count changed, a key
//! byte or any byte changed) and its CRC-32C refitted, so that LevelDB 1.23
//! reads what the damage made.
//!
//! ```text
//! cargo run -p leveldb-filter-oracle --bin gen-damaged -- [--seed N] [--count N] [--differing] OUT_DIR
//! ```
//!
//! `--count` tables (48 unless given); with `--differing`, only tables on
//! which some decision of LevelDB's differs from the undamaged table's (the
//! golden set, `testdata/damaged`).
//!
//! For each `damaged-NNNN.ldb` it writes `damaged-NNNN.probe`: a comment line
//! naming the source table, the damage and how LevelDB reads the table, then
//! one line per probe key of the source's `.probe` as `ldbfilter probe`
//! prints it, every answer from LevelDB's `Table::InternalGet`
//! (`KEYHEX - corrupt` where its status is Corruption before a data block is
//! read); or, where LevelDB does not open the table, only the comment line
//! `# LevelDB does not open this table ...`.
//!
//! Blocks are found by this program's own reading of the footer and of the
//! index and metaindex where they are stored uncompressed; the crate under
//! test is not used.

use std::path::{Path, PathBuf};

use leveldb_filter_oracle::rng::Rng;
use leveldb_filter_oracle::{table_probe, PolicyKind};

/// A block: what it is, where its contents lie, and its compression byte.
#[derive(Clone, Copy)]
struct Block {
    kind: &'static str,
    offset: usize,
    size: usize,
    compression: u8,
}

fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

fn handle(bytes: &[u8], at: &mut usize) -> Option<(usize, usize)> {
    Some((varint(bytes, at)? as usize, varint(bytes, at)? as usize))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

/// The entries of an uncompressed block, as (key, value) pairs.
fn entries(block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let restarts = u32_at(block, block.len() - 4) as usize;
    let end = block.len() - 4 - 4 * restarts;
    let (mut at, mut key, mut out) = (0, Vec::new(), Vec::new());
    while at < end {
        let (Some(shared), Some(unshared), Some(len)) = (
            varint(block, &mut at),
            varint(block, &mut at),
            varint(block, &mut at),
        ) else {
            break;
        };
        key.truncate(shared as usize);
        key.extend_from_slice(&block[at..at + unshared as usize]);
        at += unshared as usize;
        out.push((key.clone(), block[at..at + len as usize].to_vec()));
        at += len as usize;
    }
    out
}

/// The index, the metaindex, and where they are stored uncompressed the
/// filter block and the data blocks.
fn blocks(file: &[u8]) -> Vec<Block> {
    let footer = file.len() - 48;
    let mut at = footer;
    let (meta, index) = (
        handle(file, &mut at).unwrap(),
        handle(file, &mut at).unwrap(),
    );
    let block = |kind, (offset, size): (usize, usize)| Block {
        kind,
        offset,
        size,
        compression: file[offset + size],
    };
    let mut all = vec![block("index", index), block("metaindex", meta)];
    for (kind, from, prefix) in [("filter", meta, &b"filter."[..]), ("data", index, b"")] {
        if file[from.0 + from.1] != 0 {
            continue;
        }
        for (key, value) in entries(&file[from.0..from.0 + from.1]) {
            if key.starts_with(prefix) {
                all.push(block(kind, handle(&value, &mut 0).unwrap()));
            }
        }
    }
    all
}

/// Damages `block`'s contents in `file` in one of several ways; says how.
fn damage(rng: &mut Rng, file: &mut [u8], block: Block) -> String {
    let contents = &mut file[block.offset..block.offset + block.size];
    let len = contents.len();
    let restarts = if block.compression == 0 && len >= 4 {
        u32_at(contents, len - 4) as usize
    } else {
        0
    };
    let structured = restarts > 0 && 4 + 4 * restarts <= len;
    let array = len.saturating_sub(4 + 4 * restarts);
    match rng.range(0, 4) {
        0 if structured => {
            let i = rng.range(0, restarts as u64 - 1) as usize;
            let old = u32_at(contents, array + 4 * i);
            let new = match rng.range(0, 3) {
                0 => old.wrapping_add(rng.range(1, 8) as u32),
                1 => old.wrapping_sub(rng.range(1, 8) as u32),
                2 => rng.range(0, array as u64 + 8) as u32,
                _ => u32_at(
                    contents,
                    array + 4 * rng.range(0, restarts as u64 - 1) as usize,
                ),
            };
            contents[array + 4 * i..][..4].copy_from_slice(&new.to_le_bytes());
            format!("restart {i} of {restarts}: {old} -> {new}")
        }
        1 if structured && restarts > 1 => {
            let i = rng.range(0, restarts as u64 - 2) as usize;
            let j = rng.range(i as u64 + 1, restarts as u64 - 1) as usize;
            let (a, b) = (
                u32_at(contents, array + 4 * i),
                u32_at(contents, array + 4 * j),
            );
            contents[array + 4 * i..][..4].copy_from_slice(&b.to_le_bytes());
            contents[array + 4 * j..][..4].copy_from_slice(&a.to_le_bytes());
            format!("restarts {i} and {j} of {restarts} swapped")
        }
        2 if structured => {
            let new = match rng.range(0, 2) {
                0 => rng.range(0, restarts as u64 + 3) as u32,
                1 => restarts as u32 - 1,
                _ => rng.next_u64() as u32,
            };
            contents[len - 4..].copy_from_slice(&new.to_le_bytes());
            format!("restart count {restarts} -> {new}")
        }
        3 if structured && array > 0 => {
            // A byte among the entries: a key's or a length's.
            let at = rng.range(0, array as u64 - 1) as usize;
            let old = contents[at];
            contents[at] = old.wrapping_add(rng.range(1, 255) as u8);
            format!("entry byte {at}: {old:#04x} -> {:#04x}", contents[at])
        }
        _ => {
            let at = rng.range(0, len.max(1) as u64 - 1) as usize;
            if len > 0 {
                contents[at] ^= 1 << rng.range(0, 7);
            }
            format!("bit flipped in byte {at}")
        }
    }
}

/// Moves the footer's index or metaindex handle by a few bytes (its offset
/// or its size, a varint byte changed in place); says how.
fn damage_footer(rng: &mut Rng, file: &mut [u8]) -> String {
    let footer = file.len() - 48;
    // The four varints: metaindex offset and size, index offset and size.
    let mut starts = Vec::new();
    let mut at = footer;
    for _ in 0..4 {
        starts.push(at);
        while file[at] & 0x80 != 0 {
            at += 1;
        }
        at += 1;
    }
    let which = rng.range(0, 3) as usize;
    let byte = starts[which];
    let old = file[byte];
    let delta = rng.range(1, 6) as u8;
    // The low 7 bits move by a little; the continuation bit stays.
    file[byte] = (old & 0x80) | (old & 0x7f).wrapping_add(delta) & 0x7f;
    let name = [
        "metaindex offset",
        "metaindex size",
        "index offset",
        "index size",
    ][which];
    format!("footer's {name} byte {:#04x} -> {:#04x}", old, file[byte])
}

/// LevelDB's masked CRC-32C of `contents` and the compression byte that
/// follows them, written after it.
fn refit_crc(file: &mut [u8], block: Block) {
    let end = block.offset + block.size;
    let crc = crc32c(&file[block.offset..=end]);
    let masked = (crc.rotate_right(15)).wrapping_add(0xa282ead8);
    file[end + 1..end + 5].copy_from_slice(&masked.to_le_bytes());
}

/// CRC-32C (Castagnoli), bit by bit: small and plainly right.
fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82f6_3b78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A golden table: its bytes, how LevelDB reads it, and its probe keys.
struct Source {
    name: String,
    bytes: Vec<u8>,
    policy: PolicyKind,
    internal: bool,
    header: String,
    keys: Vec<String>,
    /// LevelDB's answers on the undamaged table, as in its `.probe`.
    answers: String,
}

fn sources(dir: &Path) -> Vec<Source> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| fail(&format!("{}: {e}", dir.display())))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ldb"))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|path| {
            let probe = std::fs::read_to_string(path.with_extension("probe")).ok()?;
            let mut lines = probe.lines();
            let header = lines.next()?.to_owned();
            let policy = [
                ("Bloom2", PolicyKind::Bloom2),
                ("GoLevelDb", PolicyKind::GoLevelDb),
                ("LegacyLevelDb", PolicyKind::LegacyLevelDb),
                ("LegacyRocksDb", PolicyKind::LegacyRocksDb),
                ("NoFilter", PolicyKind::NoFilter),
            ]
            .into_iter()
            .find(|(name, _)| header.contains(&format!("policy {name},")))?
            .1;
            let answers: String = lines.map(|l| format!("{l}\n")).collect();
            let keys: Vec<String> = answers
                .lines()
                .filter_map(|l| l.split(' ').next().map(str::to_owned))
                .collect();
            let bytes = std::fs::read(&path).ok()?;
            let name = path.file_name()?.to_string_lossy().into_owned();
            (bytes.len() >= 48 && !keys.is_empty()).then(|| Source {
                name,
                bytes,
                policy,
                internal: header.contains("internal"),
                header,
                keys,
                answers,
            })
        })
        .collect()
}

fn fail(what: &str) -> ! {
    eprintln!("gen-damaged: {what}");
    std::process::exit(1)
}

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    let mut count = 48;
    let differing = args.iter().any(|a| a == "--differing");
    args.retain(|a| a != "--differing");
    if let Some(i) = args.iter().position(|a| a == "--count") {
        count = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| fail("--count needs a number"));
        args.drain(i..i + 2);
    }
    let (seed, out) = leveldb_filter_oracle::generator_args_from("gen-damaged", args);
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tables");
    let sources = sources(&golden);
    if sources.is_empty() {
        fail(&format!("no golden tables in {}", golden.display()));
    }
    let mut rng = Rng(seed);
    let mut written = Vec::new();
    let mut n = 0;
    while n < count {
        let source = rng.pick(&sources);
        let mut file = source.bytes.clone();
        let all = blocks(&file);
        let block = *rng.pick(&all);
        let (what, block) = if rng.chance(10) {
            // A footer handle moved: no checksum covers the footer.
            (
                damage_footer(&mut rng, &mut file),
                Block {
                    kind: "footer",
                    ..block
                },
            )
        } else {
            let what = damage(&mut rng, &mut file, block);
            refit_crc(&mut file, block);
            (what, block)
        };
        let stem = format!("damaged-{n:04}");
        let path = out.join(format!("{stem}.ldb"));
        std::fs::write(&path, &file).unwrap_or_else(|e| fail(&e.to_string()));
        let damage = match block.kind {
            "footer" => format!("{} with its footer damaged ({what})", source.name),
            kind => format!(
                "{} with its {kind} block at {} damaged ({what}), CRC refitted",
                source.name, block.offset
            ),
        };
        let mut text = String::new();
        for key in &source.keys {
            let bytes: Vec<u8> = (0..key.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&key[i..i + 2], 16).unwrap())
                .collect();
            match table_probe(&path, source.policy, source.internal, &bytes) {
                Ok(answer) => text += &format!("{key} {}\n", answer.words()),
                Err(_) => {
                    text = String::new();
                    break;
                }
            }
        }
        if differing && text == source.answers {
            continue;
        }
        n += 1;
        let header = if text.is_empty() {
            format!("# LevelDB does not open this table: {damage}\n")
        } else {
            format!("{}; {damage}\n", source.header)
        };
        std::fs::write(out.join(format!("{stem}.probe")), header + &text)
            .unwrap_or_else(|e| fail(&e.to_string()));
        written.extend([format!("{stem}.ldb"), format!("{stem}.probe")]);
    }
    leveldb_filter_oracle::write_checksums(&out, &written).unwrap_or_else(|e| fail(&e.to_string()));
}
