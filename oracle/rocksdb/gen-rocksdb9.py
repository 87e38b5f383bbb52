"""Writes SST files with RocksDB 9.8.4 (the library inside the PyPI wheel
rocksdict 0.3.29), format_version 6, and beside each RocksDB's own per-key
decisions, as gen-rocksdb.cc does for 7.8: the file is ingested into a DB,
each key is read with get, and the statistics ticker
rocksdb.bloom.filter.useful says whether the filter ruled the key out.

    python3 -m venv venv && venv/bin/pip install rocksdict==0.3.29
    venv/bin/python gen-rocksdb9.py OUT_DIR [SEED]

For each table NAME: NAME.sst and NAME.answers (`<key hex>
written|unwritten may-match|absent`, the unwritten keys between the table's
first and last keys).
"""
import os
import random
import re
import shutil
import sys

from rocksdict import (BlockBasedIndexType, BlockBasedOptions, ChecksumType,
                       DBCompressionType, Options, Rdict, SliceTransform,
                       SstFileWriter)

SPECS = [
    # name, checksum, compression, partitioned, prefix, keys
    ("fastbloom-fv6-xxh3", "xxh3", "none", False, 0, 600),
    ("fastbloom-fv6-crc32c-lz4", "crc32c", "lz4", False, 0, 500),
    ("fastbloom-fv6-none-zstd", "none", "zstd", False, 0, 500),
    ("fastbloom-fv6-partitioned-xxh3-snappy", "xxh3", "snappy", True, 0, 800),
    ("fastbloom-fv6-prefix4-xxhash64", "xxhash64", "none", False, 4, 400),
]


def checksum(name):
    return {"xxh3": ChecksumType.xxh3, "crc32c": ChecksumType.crc32c,
            "xxhash64": ChecksumType.xxhash64, "none": ChecksumType.no_checksum}[name]()


def compression(name):
    return {"none": DBCompressionType.none, "lz4": DBCompressionType.lz4,
            "zstd": DBCompressionType.zstd, "snappy": DBCompressionType.snappy}[name]()


def options(spec):
    name, check, codec, partitioned, prefix, _ = spec
    table = BlockBasedOptions()
    table.set_format_version(6)
    table.set_bloom_filter(10, False)
    table.set_checksum_type(checksum(check))
    table.set_block_size(1024)
    table.set_index_block_restart_interval(4)
    if partitioned:
        table.set_partition_filters(True)
        table.set_index_type(BlockBasedIndexType.two_level_index_search())
        table.set_metadata_block_size(256)
    opt = Options(raw_mode=True)
    opt.create_if_missing(True)
    opt.set_block_based_table_factory(table)
    opt.set_compression_type(compression(codec))
    if prefix:
        opt.set_prefix_extractor(SliceTransform.create_fixed_prefix(prefix))
    opt.enable_statistics()
    return opt


def useful(opt):
    found = re.search(r"rocksdb\.bloom\.filter\.useful COUNT : (\d+)", opt.get_statistics())
    return int(found.group(1)) if found else 0


def write(out, spec, seed):
    name, keys = spec[0], spec[5]
    rng = random.Random(f"{seed}-{name}")
    # Key i: even written, odd probed; varying lengths, bytes >= 0x80 too.
    all_keys = [b"key%08d" % i + bytes(rng.randrange(256) for _ in range(rng.randrange(24)))
                for i in range(2 * keys)]
    opt = options(spec)
    path = os.path.join(out, name + ".sst")
    writer = SstFileWriter(options=opt)
    writer.open(path)
    for i in range(0, 2 * keys, 2):
        writer[all_keys[i]] = b"v%d" % i
    writer.finish()
    db_dir = os.path.join(out, ".db-" + name)
    shutil.rmtree(db_dir, ignore_errors=True)
    db = Rdict(db_dir, options=opt)
    db.ingest_external_file([path])
    lines = []
    for i in range(2 * keys - 1):
        before = useful(opt)
        value = db.get(all_keys[i])
        ruled_out = useful(opt) > before
        if i % 2 == 0 and (ruled_out or value is None):
            sys.exit(f"gen-rocksdb9: {name}: a written key was not found")
        lines.append(f"{all_keys[i].hex()} {'written' if i % 2 == 0 else 'unwritten'} "
                     f"{'absent' if ruled_out else 'may-match'}\n")
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
