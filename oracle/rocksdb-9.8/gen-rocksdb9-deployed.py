"""Writes RocksDB 9.8.4 databases (the library inside the PyPI wheel
rocksdict 0.3.29) with features real deployments turn on, and beside each
RocksDB's own answers, as gen-rocksdb-deployed.cc does for 7.8.3. Every
option reaches RocksDB through an OPTIONS file loaded with
Options.load_latest.

    python3 -m venv venv && venv/bin/pip install rocksdict==0.3.29
    venv/bin/python gen-rocksdb9-deployed.py --seed N OUT_DIR

OUT_DIR/NAME/db, one database per feature:
  blob       integrated BlobDB (enable_blob_files, min_blob_size 24, 16 KiB
             blob files, garbage collection of the oldest quarter), rounds
             of writes, overwrites and deletions flushed, and a compaction;
  deletions  point and range deletions and wide-column entities over
             several levels.
(rocksdict's close flushes the memtables: no keys are left in a WAL here;
gen-rocksdb-deployed.cc's wal database has them.)
Beside each db/: live.txt and gets.txt in gen-rocksdb-db.cc's format
(format_version 6, the default), and for blob, blobstats.txt: `COLUMN_FAMILY
FILES GARBAGE_BYTES`, the properties rocksdb.num-blob-files and
rocksdb.live-blob-file-garbage-size (rocksdict lists no blob file itself).
Each database is closed, a copy reopened, and must list the same tables.
"""
import gc
import os
import random
import re
import shutil
import sys
import time

from rocksdict import Options, Rdict

SPACE = 1500
TABLE = {"filter_policy": "bloomfilter:10:false"}
LEVELS = {"write_buffer_size": "32768", "target_file_size_base": "8192",
          "max_bytes_for_level_base": "16384", "max_bytes_for_level_multiplier": "4",
          "level0_file_num_compaction_trigger": "4",
          "level_compaction_dynamic_level_bytes": "false"}
FEATURES = {
    "blob": ({}, {"enable_blob_files": "true", "min_blob_size": "24",
                  "blob_file_size": "16384", "enable_blob_garbage_collection": "true",
                  "blob_garbage_collection_age_cutoff": "0.25"}),
    "deletions": ({}, {}),
}


def options(out, db_extra, cf_extra):
    """The database's options and its family's, from an OPTIONS file."""
    lines = ["[Version]", "  rocksdb_version=9.8.4", "  options_file_version=1.1", "",
             "[DBOptions]", "  create_if_missing=true", "  max_background_jobs=2"]
    lines += [f"  {k}={v}" for k, v in db_extra.items()]
    lines += ["", '[CFOptions "default"]']
    lines += [f"  {k}={v}" for k, v in {**LEVELS, **cf_extra}.items()]
    lines += ["", '[TableOptions/BlockBasedTable "default"]']
    lines += [f"  {k}={v}" for k, v in TABLE.items()] + [""]
    opt_dir = os.path.join(out, ".options")
    shutil.rmtree(opt_dir, ignore_errors=True)
    os.makedirs(opt_dir)
    with open(os.path.join(opt_dir, "OPTIONS-000001"), "w") as f:
        f.write("\n".join(lines) + "\n")
    _, families = Options.load_latest(opt_dir)
    shutil.rmtree(opt_dir)
    return families["default"]


def quiesce(db, auto_on=True):
    """Waits until no flush or compaction runs or is pending (a compaction
    counts as pending only while automatic compactions are on)."""
    quiet = 0
    while quiet < 5:
        time.sleep(0.02)
        busy = (db.property_int_value("rocksdb.num-running-compactions")
                + db.property_int_value("rocksdb.num-running-flushes")
                + db.property_int_value("rocksdb.mem-table-flush-pending"))
        if auto_on:
            busy += db.property_int_value("rocksdb.compaction-pending")
        quiet = 0 if busy else quiet + 1


SSTABLE = re.compile(r" (\d+):(\d+)\[(\d+) \.\. (\d+)\]\['([0-9A-Fa-f]*)' seq:\d+, type:\d+ "
                     r"\.\. '([0-9A-Fa-f]*)' seq:\d+, type:\d+\]")


def live_tables(db):
    """`default LEVEL NUMBER SIZE SMALLEST LARGEST SMALLEST_SEQ LARGEST_SEQ` lines."""
    lines, level = [], None
    for line in db.property_value("rocksdb.sstables").splitlines():
        if line.startswith("--- blob files"):
            break
        m = re.match(r"--- level (\d+) ---", line)
        if m:
            level = int(m.group(1))
        elif line:
            m = SSTABLE.match(line)
            if not m or level is None:
                sys.exit(f"gen-rocksdb9-deployed: rocksdb.sstables: unparsed line {line!r}")
            number, size, lo_seq, hi_seq, lo, hi = m.groups()
            lines.append(f"default {level} {number} {size} {lo.lower()} {hi.lower()} "
                         f"{lo_seq} {hi_seq}\n")
    return "".join(lines)


def key_of(i):
    return b"user:%08d" % i


def write(name, seed, out):
    path = os.path.join(out, "db")
    rng = random.Random(f"{seed}-rocksdb9-{name}")
    db_extra, cf_extra = FEATURES[name]
    opt = options(out, db_extra, cf_extra)
    opt.create_if_missing(True)
    opt.enable_statistics()
    db = Rdict(path, options=opt)

    def value(i, round):
        return b"%d.%d:" % (i, round) + bytes(32 + rng.randrange(95)
                                              for _ in range(8 + rng.randrange(60)))

    auto = [True]

    def rounds(count, n, one):
        for round in range(1, count + 1):
            for _ in range(n):
                one(round, rng.randrange(SPACE))
            db.flush()
            quiesce(db, auto[0])

    if name == "blob":
        def one(round, i):
            if round > 1 and rng.randrange(10) == 0:
                db.delete(key_of(i))
            else:
                db[key_of(i)] = value(i, round)
        rounds(2, 900, one)
        db.compact_range(key_of(0), key_of(SPACE // 2))
        rounds(2, 900, lambda round, i: one(round + 2, i))
    elif name == "deletions":
        def one(round, i):
            r = rng.randrange(100)
            if round == 1 and r < 10:
                db.put_entity(key_of(i), [b"a", b"b"], [value(i, round), b"column"])
            elif round == 1 or r < 60:
                db[key_of(i)] = value(i, round)
            elif r < 90:
                db.delete(key_of(i))
            else:
                lo = rng.randrange(SPACE)
                db.delete_range(key_of(lo), key_of(lo + 5 + rng.randrange(30)))
        rounds(4, 700, one)
        # The last rounds stay at level 0, their tombstones over the tables below.
        db.set_options({"disable_auto_compactions": "true"})
        auto[0] = False
        rounds(2, 700, lambda round, i: one(round + 4, i))
    quiesce(db, auto[0])

    probes = {key_of(i) for i in range(SPACE)}
    for _ in range(60):
        k = key_of(rng.randrange(SPACE))
        probes.update([k + b"%d" % rng.randrange(10), k[:-1],
                       key_of(SPACE + 200 + rng.randrange(90000000))])
    probes.update([b"a", b"user", b"user:", b"zzz", b"\x01", b"\xff\xfe"])
    gets = []
    for key in sorted(probes):
        stats = opt.get_statistics()
        before = int(re.search(r"rocksdb\.bloom\.filter\.useful COUNT : (\d+)", stats).group(1))
        found = db.get(key) is not None
        stats = opt.get_statistics()
        after = int(re.search(r"rocksdb\.bloom\.filter\.useful COUNT : (\d+)", stats).group(1))
        gets.append(f"default {key.hex()} {'found' if found else 'notfound'} {after - before}\n")
    quiesce(db, auto[0])
    live = live_tables(db)
    blobs = (f"default {db.property_int_value('rocksdb.num-blob-files')} "
             f"{db.property_int_value('rocksdb.live-blob-file-garbage-size')}\n")
    db.close()
    del db
    gc.collect()

    copy = os.path.join(out, ".db-copy")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(path, copy)
    _, copy_families = Options.load_latest(copy)
    reopened = Rdict(copy, options=copy_families["default"])
    if live_tables(reopened) != live:
        sys.exit(f"gen-rocksdb9-deployed: {name}: the reopened copy holds other tables")
    reopened.close()
    del reopened
    gc.collect()
    shutil.rmtree(copy)

    with open(os.path.join(out, "live.txt"), "w") as f:
        f.write(live)
    with open(os.path.join(out, "gets.txt"), "w") as f:
        f.writelines(gets)
    if name == "blob":
        with open(os.path.join(out, "blobstats.txt"), "w") as f:
            f.write(blobs)
    levels = sorted({line.split()[1] for line in live.splitlines()})
    print(f"{out}: {len(live.splitlines())} tables at levels {', '.join(levels)}")


def main():
    args = sys.argv[1:]
    if len(args) != 3 or args[0] != "--seed" or args[2].startswith("-"):
        sys.exit("usage: gen-rocksdb9-deployed.py --seed N OUT_DIR")
    seed, out = int(args[1]), args[2]
    for name in FEATURES:
        target = os.path.join(out, name)
        os.makedirs(target, exist_ok=True)
        if os.path.exists(os.path.join(target, "db")):
            sys.exit(f"gen-rocksdb9-deployed: {target}/db exists")
        write(name, seed, target)


main()
