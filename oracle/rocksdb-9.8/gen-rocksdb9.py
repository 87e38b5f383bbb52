"""Writes SST files with RocksDB 9.8.4 (the library inside the PyPI wheel
rocksdict 0.3.29), format_version 6, and beside each RocksDB's own per-key
decisions, as gen-rocksdb.cc does for 7.8: the file is ingested into a DB,
each key is read with get, and the statistics tickers
rocksdb.bloom.filter.useful and rocksdb.bloom.filter.prefix.useful say
whether the filter ruled the key out. Every table option reaches RocksDB
through an OPTIONS file loaded with Options.load_latest.

    python3 -m venv venv && venv/bin/pip install rocksdict==0.3.29
    venv/bin/python gen-rocksdb9.py OUT_DIR [SEED]

Tables named db-flush-* are a DB's flush output, db-compaction-* its
compaction output (the flushed keys written again and flushed, the two
files compacted into one at the last level); the rest SstFileWriter's.

For each table NAME: NAME.sst and NAME.answers (`<key hex>
written|unwritten may-match|absent`, the unwritten keys between the table's
first and last keys).
"""
import os
import random
import re
import shutil
import sys

from rocksdict import Options, Rdict, SstFileWriter

# name, keys, then the OPTIONS file's table and column-family settings.
# A hybrid filter: Bloom below level 1 (the flush), Ribbon from it.
HYBRID = {"filter_policy": "ribbonfilter:10:1", "partition_filters": "true",
          "index_type": "kTwoLevelIndexSearch", "metadata_block_size": "256"}
SPECS = [
    ("fastbloom-fv6-xxh3", 600, {}, {}),
    ("fastbloom-fv6-crc32c-lz4", 500, {"checksum": "kCRC32c"}, {"compression": "kLZ4Compression"}),
    ("fastbloom-fv6-none-zstd", 500, {"checksum": "kNoChecksum"}, {"compression": "kZSTD"}),
    ("fastbloom-fv6-partitioned-xxh3-snappy", 800,
     {"partition_filters": "true", "index_type": "kTwoLevelIndexSearch",
      "metadata_block_size": "256"}, {"compression": "kSnappyCompression"}),
    ("fastbloom-fv6-prefix4-xxhash64", 400, {"checksum": "kxxHash64"},
     {"prefix_extractor": "rocksdb.FixedPrefix.4"}),
    # Prefixes alone: a get probes the key's first 11 bytes.
    ("fastbloom-fv6-prefixonly11-xxh3", 400, {"whole_key_filtering": "false"},
     {"prefix_extractor": "rocksdb.FixedPrefix.11"}),
    # Ribbon; an index with first keys and data blocks with a hash index.
    ("ribbon-fv6-firstkey-hash-zstd-xxh3", 600,
     {"filter_policy": "ribbonfilter:10", "index_type": "kBinarySearchWithFirstKey",
      "data_block_index_type": "kDataBlockBinaryAndHash"}, {"compression": "kZSTD"}),
    # Filter partitions cut by their own entry count (decoupled from the index's).
    ("ribbon-fv6-partitioned-decoupled-xxh3", 800,
     {"filter_policy": "ribbonfilter:10", "partition_filters": "true",
      "decouple_partitioned_filters": "true", "index_type": "kTwoLevelIndexSearch",
      "metadata_block_size": "256"}, {}),
    ("fastbloom-fv6-partitioned-decoupled-prefix4-xxh3", 800,
     {"partition_filters": "true", "decouple_partitioned_filters": "true",
      "index_type": "kTwoLevelIndexSearch", "metadata_block_size": "256"},
     {"prefix_extractor": "rocksdb.FixedPrefix.4"}),
    # The index type kHashSearch: prefixes hashed to their index entries.
    ("fastbloom-fv6-hashsearch-prefix4-xxhash", 400,
     {"checksum": "kxxHash", "index_type": "kHashSearch"},
     {"prefix_extractor": "rocksdb.FixedPrefix.4"}),
    ("db-flush-hybrid-fv6-partitioned-xxh3", 500, HYBRID, {}),
    ("db-compaction-hybrid-fv6-partitioned-xxh3", 500, HYBRID, {}),
    ("db-flush-fastbloom-fv6-prefix4-crc32c-lz4", 300, {"checksum": "kCRC32c"},
     {"prefix_extractor": "rocksdb.FixedPrefix.4", "compression": "kLZ4Compression"}),
    ("db-compaction-fastbloom-fv6-prefix4-crc32c-lz4", 300, {"checksum": "kCRC32c"},
     {"prefix_extractor": "rocksdb.FixedPrefix.4", "compression": "kLZ4Compression"}),
]


def options(out, name, table, column_family):
    """The column family's options, from an OPTIONS file written for them."""
    table = {"format_version": "6", "filter_policy": "bloomfilter:10:false",
             "checksum": "kXXH3", "block_size": "1024",
             "index_block_restart_interval": "4", **table}
    column_family = {"compression": "kNoCompression", "disable_auto_compactions": "true",
                     **column_family}
    lines = ["[Version]", "  rocksdb_version=9.8.4", "  options_file_version=1.1", "",
             "[DBOptions]", "  create_if_missing=true", "", '[CFOptions "default"]']
    lines += [f"  {k}={v}" for k, v in column_family.items()]
    lines += ["", '[TableOptions/BlockBasedTable "default"]']
    lines += [f"  {k}={v}" for k, v in table.items()]
    opt_dir = os.path.join(out, ".options-" + name)
    shutil.rmtree(opt_dir, ignore_errors=True)
    os.makedirs(opt_dir)
    with open(os.path.join(opt_dir, "OPTIONS-000001"), "w") as f:
        f.write("\n".join(lines) + "\n")
    _, families = Options.load_latest(opt_dir)
    shutil.rmtree(opt_dir)
    opt = families["default"]
    opt.create_if_missing(True)
    opt.enable_statistics()
    return opt


def ruled_out(opt):
    stats = opt.get_statistics()
    return sum(int(n) for n in re.findall(
        r"rocksdb\.bloom\.filter\.(?:prefix\.)?useful COUNT : (\d+)", stats))


def write(out, spec, seed):
    name, keys, table, column_family = spec
    rng = random.Random(f"{seed}-{name}")
    # Key i: even written, odd probed; varying lengths, bytes >= 0x80 too.
    all_keys = [b"key%08d" % i + bytes(rng.randrange(256) for _ in range(rng.randrange(24)))
                for i in range(2 * keys)]
    opt = options(out, name, table, column_family)
    path = os.path.join(out, name + ".sst")
    db_dir = os.path.join(out, ".db-" + name)
    shutil.rmtree(db_dir, ignore_errors=True)
    if name.startswith("db-"):
        db = Rdict(db_dir, options=opt)
        for round in range(1 if name.startswith("db-flush-") else 2):
            for i in range(0, 2 * keys, 2):
                db[all_keys[i]] = b"v%d.%d" % (i, round)
            db.flush()
        if name.startswith("db-compaction-"):
            db.compact_range(None, None)
        # The DB's one table is the golden one.
        live = db.live_files()
        if len(live) != 1:
            sys.exit(f"gen-rocksdb9: {name}: {len(live)} live tables, not 1")
        shutil.copyfile(os.path.join(db_dir, live[0]["name"].lstrip("/")), path)
    else:
        writer = SstFileWriter(options=opt)
        writer.open(path)
        for i in range(0, 2 * keys, 2):
            writer[all_keys[i]] = b"v%d" % i
        writer.finish()
        db = Rdict(db_dir, options=opt)
        db.ingest_external_file([path])
    lines = []
    for i in range(2 * keys - 1):
        before = ruled_out(opt)
        value = db.get(all_keys[i])
        absent = ruled_out(opt) > before
        if i % 2 == 0 and (absent or value is None):
            sys.exit(f"gen-rocksdb9: {name}: a written key was not found")
        lines.append(f"{all_keys[i].hex()} {'written' if i % 2 == 0 else 'unwritten'} "
                     f"{'absent' if absent else 'may-match'}\n")
    db.close()
    shutil.rmtree(db_dir, ignore_errors=True)
    with open(os.path.join(out, name + ".answers"), "w") as f:
        f.writelines(lines)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: gen-rocksdb9.py OUT_DIR [SEED]")
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    os.makedirs(out, exist_ok=True)
    for spec in SPECS:
        write(out, spec, seed)


main()
