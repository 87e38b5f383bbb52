//! Writes golden vectors made by the real LevelDB 1.23 (through this crate's
//! shim): Bloom filters, filters LevelDB never writes, and filter blocks, each
//! with LevelDB's answers to probes.
//!
//! ```text
//! cargo run -p leveldb-filter-oracle --bin gen-vectors -- [--seed N] OUT_DIR
//! ```
//!
//! The same seed gives the same files. Nothing here computes a filter or an
//! answer: keys, layouts and damage are chosen here, the bytes and the answers
//! all come from LevelDB. Format: see `testdata/vectors/README.md`.

use std::fmt::Write as _;
use std::path::Path;

use leveldb_filter_oracle::hex;
use leveldb_filter_oracle::rng::Rng;
use leveldb_filter_oracle::Bloom;

fn random_bytes(rng: &mut Rng, min_len: u64, max_len: u64) -> Vec<u8> {
    let len = rng.range(min_len, max_len);
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// One vector file being written.
struct VecFile {
    text: String,
    cases: usize,
    prefix: &'static str,
}

impl VecFile {
    fn new(prefix: &'static str, what: &str, seed: u64) -> Self {
        let mut text = String::new();
        let _ = writeln!(text, "# leveldb-filter golden vectors: {what}");
        let _ = writeln!(
            text,
            "# made by LevelDB 1.23 (Debian libleveldb-dev) through leveldb-filter-oracle"
        );
        let _ = writeln!(
            text,
            "# cargo run -p leveldb-filter-oracle --bin gen-vectors -- --seed {seed} OUT_DIR"
        );
        VecFile {
            text,
            cases: 0,
            prefix,
        }
    }
    fn case(&mut self) {
        self.cases += 1;
        let _ = writeln!(self.text, "[case {}-{:04}]", self.prefix, self.cases);
    }
    fn line(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
    }
    fn hex_section<K: AsRef<[u8]>>(&mut self, name: &str, items: &[K]) {
        self.line(&format!("[{name}]"));
        for item in items {
            self.line(&hex(item.as_ref()));
        }
    }
    fn answers(&mut self, answers: impl IntoIterator<Item = bool>) {
        self.line("[answers]");
        for a in answers {
            self.line(if a { "true" } else { "false" });
        }
    }
}

fn bloom_cases(rng: &mut Rng, seed: u64) -> VecFile {
    let mut out = VecFile::new(
        "bloom",
        "Bloom filters (NewBloomFilterPolicy, CreateFilter, KeyMayMatch)",
        seed,
    );
    let mut sizes: Vec<(i32, usize, u64)> = Vec::new();
    for bits_per_key in 0..=50 {
        for n in [rng.range(0, 3), rng.range(4, 40), rng.range(40, 250)] {
            sizes.push((bits_per_key, n as usize, 64));
        }
    }
    // Large sets of short keys, to keep the files small.
    sizes.extend([
        (10, 10_000, 8),
        (1, 10_000, 6),
        (50, 2_000, 8),
        (7, 5_000, 8),
    ]);
    for (bits_per_key, n, max_len) in sizes {
        let policy = Bloom::new(bits_per_key);
        let keys = rng.keys(n, max_len);
        let filter = policy.create_filter(&keys);
        let probes = rng.probes(&keys, 48, 48);
        out.case();
        out.line(&format!("bits-per-key {bits_per_key}"));
        out.hex_section("keys", &keys);
        out.hex_section("filter", &[&filter]);
        out.hex_section("probes", &probes);
        out.answers(probes.iter().map(|p| policy.key_may_match(p, &filter)));
    }
    out
}

/// Filters LevelDB never writes: lengths 0, 1 and 2, k bytes 0 and 31..=255,
/// damaged and random bytes.
fn malformed_bloom_cases(rng: &mut Rng, seed: u64) -> VecFile {
    let mut out = VecFile::new(
        "bloom-malformed",
        "filters LevelDB never writes, with KeyMayMatch's answers",
        seed,
    );
    let policy = Bloom::new(10);
    for i in 0..1500u64 {
        let n = rng.range(0, 12) as usize;
        let keys = rng.keys(n, 24);
        let mut filter = policy.create_filter(&keys);
        match i % 6 {
            0 => filter = random_bytes(rng, 0, 2),
            1 | 2 => {
                // Every k byte value appears: 0..=255 over the cases.
                let last = filter.len() - 1;
                filter[last] = (i / 3 % 256) as u8;
            }
            3 => filter = random_bytes(rng, 2, 40),
            4 => filter.truncate(rng.range(0, filter.len() as u64) as usize),
            _ => {
                for _ in 0..rng.range(1, 4) {
                    let at = rng.range(0, filter.len() as u64 - 1) as usize;
                    filter[at] ^= 1 << rng.range(0, 7);
                }
            }
        }
        let probes = rng.probes(&keys, 4, 4);
        out.case();
        out.hex_section("filter", &[&filter]);
        out.hex_section("probes", &probes);
        out.answers(probes.iter().map(|p| policy.key_may_match(p, &filter)));
    }
    out
}

/// A table-like call sequence: keys before the first block sometimes, offsets
/// that skip many 2 KiB ranges, blocks without keys.
struct Layout {
    calls: Vec<(Option<u64>, Vec<u8>)>,
    offsets: Vec<u64>,
    keys: Vec<Vec<u8>>,
}

impl Layout {
    fn random(rng: &mut Rng, max_blocks: u64, max_keys_per_block: u64) -> Self {
        let mut layout = Layout {
            calls: Vec::new(),
            offsets: Vec::new(),
            keys: Vec::new(),
        };
        if rng.chance(30) {
            for _ in 0..rng.range(1, 5) {
                layout.key(rng.key(32));
            }
        }
        let mut offset = if rng.chance(70) {
            0
        } else {
            rng.range(0, 20_000)
        };
        for _ in 0..rng.range(0, max_blocks) {
            layout.calls.push((Some(offset), Vec::new()));
            layout.offsets.push(offset);
            for _ in 0..rng.range(0, max_keys_per_block) {
                let key = if !layout.keys.is_empty() && rng.chance(10) {
                    rng.pick(&layout.keys).clone()
                } else {
                    rng.key(64)
                };
                layout.key(key);
            }
            offset += match rng.range(0, 9) {
                0..=6 => rng.range(0, 3000),
                7 | 8 => rng.range(3000, 20_000),
                _ => rng.range(20_000, 300_000),
            };
        }
        layout
    }
    fn key(&mut self, key: Vec<u8>) {
        self.keys.push(key.clone());
        self.calls.push((None, key));
    }
    fn build(&self, policy: &Bloom) -> Vec<u8> {
        let mut builder = policy.block_builder();
        for (offset, key) in &self.calls {
            match offset {
                Some(offset) => builder.start_block(*offset),
                None => builder.add_key(key),
            }
        }
        builder.finish()
    }
}

/// Probes at the layout's own offsets, inside skipped ranges and past the end.
fn block_probes(rng: &mut Rng, layout: &Layout, count: usize) -> Vec<(u64, Vec<u8>)> {
    let last = layout.offsets.last().copied().unwrap_or(0);
    (0..count)
        .map(|_| {
            let offset = match rng.range(0, 7) {
                0..=2 if !layout.offsets.is_empty() => *rng.pick(&layout.offsets),
                3 => rng.range(0, last + 4096),
                4 => last + rng.range(1, 64) * 2048,
                5 => *rng.pick(&[0, 2047, 2048, 1 << 32, 1 << 63, u64::MAX]),
                6 => rng.next_u64(),
                _ => rng.range(0, 8) * 2048,
            };
            let key = if !layout.keys.is_empty() && rng.chance(50) {
                rng.pick(&layout.keys).clone()
            } else {
                rng.key(64)
            };
            (offset, key)
        })
        .collect()
}

fn write_block_probes(
    out: &mut VecFile,
    probes: &[(u64, Vec<u8>)],
    reader: &leveldb_filter_oracle::BlockReader,
) {
    out.line("[probes]");
    for (offset, key) in probes {
        out.line(&format!("{offset} {}", hex(key)));
    }
    out.answers(
        probes
            .iter()
            .map(|(offset, key)| reader.key_may_match(*offset, key)),
    );
}

fn block_cases(rng: &mut Rng, seed: u64) -> VecFile {
    let mut out = VecFile::new(
        "block",
        "filter blocks (FilterBlockBuilder, FilterBlockReader)",
        seed,
    );
    for i in 0..80u32 {
        let bits_per_key = if i.is_multiple_of(3) {
            10
        } else {
            rng.range(0, 50) as i32
        };
        let policy = Bloom::new(bits_per_key);
        let layout = match i {
            0 => Layout {
                calls: Vec::new(),
                offsets: Vec::new(),
                keys: Vec::new(),
            },
            1..=3 => Layout::random(rng, 0, 0),
            _ => Layout::random(rng, 40, 12),
        };
        let block = layout.build(&policy);
        let probes = block_probes(rng, &layout, 64);
        out.case();
        out.line(&format!("bits-per-key {bits_per_key}"));
        out.line("[calls]");
        for (offset, key) in &layout.calls {
            match offset {
                Some(offset) => out.line(&format!("start {offset}")),
                None => out.line(&format!("key {}", hex(key))),
            }
        }
        out.hex_section("block", &[&block]);
        write_block_probes(&mut out, &probes, &policy.block_reader(&block));
    }
    out
}

/// Blocks LevelDB never writes: truncated, flipped, any base_lg, array offsets
/// past the end, filter offsets out of order, random bytes.
fn malformed_block_cases(rng: &mut Rng, seed: u64) -> VecFile {
    let mut out = VecFile::new(
        "block-malformed",
        "filter blocks LevelDB never writes, with FilterBlockReader's answers",
        seed,
    );
    let policy = Bloom::new(10);
    for i in 0..1500u64 {
        let layout = Layout::random(rng, 6, 4);
        let mut block = layout.build(&policy);
        let n = block.len();
        let array_offset = u32::from_le_bytes(block[n - 5..n - 1].try_into().unwrap()) as usize;
        match i % 7 {
            0 => block.truncate(rng.range(0, n as u64) as usize),
            1 => block[n - 1] = (i / 7 % 256) as u8,
            2 => {
                let value = match rng.range(0, 2) {
                    0 => rng.range(0, n as u64 + 8) as u32,
                    1 => rng.next_u64() as u32,
                    _ => (n - 4) as u32,
                };
                block[n - 5..n - 1].copy_from_slice(&value.to_le_bytes());
            }
            3 if n - 5 - array_offset >= 8 => {
                // Swap two filter offsets, or point one anywhere.
                let count = (n - 5 - array_offset) / 4;
                let a = array_offset + 4 * rng.range(0, count as u64 - 1) as usize;
                let b = array_offset + 4 * rng.range(0, count as u64 - 1) as usize;
                if rng.chance(50) {
                    for j in 0..4 {
                        block.swap(a + j, b + j);
                    }
                } else {
                    block[a..a + 4]
                        .copy_from_slice(&(rng.range(0, n as u64 + 16) as u32).to_le_bytes());
                }
            }
            4 => block = random_bytes(rng, 0, 40),
            _ => {
                for _ in 0..rng.range(1, 3) {
                    let at = rng.range(0, n as u64 - 1) as usize;
                    block[at] ^= 1 << rng.range(0, 7);
                }
            }
        }
        let probes = block_probes(rng, &layout, 8);
        out.case();
        out.hex_section("block", &[&block]);
        write_block_probes(&mut out, &probes, &policy.block_reader(&block));
    }
    out
}

fn main() {
    let (seed, dir) = leveldb_filter_oracle::generator_args("gen-vectors");
    let mut rng = Rng(seed);
    let files = [
        bloom_cases(&mut rng, seed),
        malformed_bloom_cases(&mut rng, seed),
        block_cases(&mut rng, seed),
        malformed_block_cases(&mut rng, seed),
    ];
    let mut checksums = String::from(
        "# crc32 (IEEE) and size of each vector file, to catch one mangled in transit\n",
    );
    for file in &files {
        let name = format!("{}.vec", file.prefix);
        let path = dir.join(&name);
        std::fs::write(&path, &file.text).unwrap_or_else(|e| fail(&path, e));
        let _ = writeln!(
            checksums,
            "{:08x} {} {name}",
            crc32fast::hash(file.text.as_bytes()),
            file.text.len()
        );
        eprintln!(
            "{}: {} cases, {} bytes",
            path.display(),
            file.cases,
            file.text.len()
        );
    }
    let path = dir.join("CHECKSUMS");
    std::fs::write(&path, checksums).unwrap_or_else(|e| fail(&path, e));
}

fn fail(path: &Path, e: std::io::Error) -> ! {
    eprintln!("gen-vectors: {}: {e}", path.display());
    std::process::exit(1)
}
