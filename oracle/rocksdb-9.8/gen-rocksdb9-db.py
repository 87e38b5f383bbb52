"""Writes a whole RocksDB database directory with RocksDB 9.8.4 (the library
inside the PyPI wheel rocksdict 0.3.29), and beside it RocksDB's own
answers, as gen-rocksdb-db.cc does for 7.8: the live tables and, for a few
hundred probe keys per column family, what get says and how many tables'
filters ruled the key out (the statistics ticker
rocksdb.bloom.filter.useful across that get). Every option reaches RocksDB
through an OPTIONS file loaded with Options.load_latest (which also opens
the database in raw mode: keys stored as given).

    python3 -m venv venv && venv/bin/pip install rocksdict==0.3.29
    venv/bin/python gen-rocksdb9-db.py --seed N OUT_DIR

OUT_DIR/db is the database, left as RocksDB leaves it (CURRENT, MANIFEST-*,
*.sst, *.log, IDENTITY, LOCK, LOG, LOG.old.*, OPTIONS-*), and rocksdict's
own rocksdict-config.json. Two column families, "default" and "other",
with different keys `user:%08d`; level compaction, a full Bloom filter of
10 bits per key (format_version 6, the default), 64 KiB write buffers,
32 KiB tables and a 64 KiB level 1 growing 4 times a level; keys written in
rounds (overwrites and deletions among them, part of each family compacted
with compact_range), the last rounds with automatic compactions off, to
stay at level 0.

OUT_DIR/live.txt: one line per live table, by column family (default,
other), then in the property rocksdb.sstables's order (by level, level 0
newest first): `COLUMN_FAMILY LEVEL NUMBER FILE_SIZE SMALLEST_USER_KEY_HEX
LARGEST_USER_KEY_HEX SMALLEST_SEQNO LARGEST_SEQNO` (rocksdict's live_files
lacks the family and the sequence numbers: they come from rocksdb.sstables,
checked against live_files).
OUT_DIR/gets.txt: one line per probe, by column family, then key:
`COLUMN_FAMILY KEY_HEX found|notfound USEFUL`, USEFUL the change of the
ticker rocksdb.bloom.filter.useful across the get (a count of tables).

Every write is flushed to a table before the probes (the WAL holds no
data), no compaction runs, and live.txt is checked against a copy of the
closed database, reopened.
"""
import gc
import os
import random
import re
import shutil
import sys
import time

from rocksdict import Options, Rdict

FAMILIES = ["default", "other"]
SPACE = 10000  # ids 0..9999; user:00010000 and up never written
COLUMN_FAMILY = {"write_buffer_size": "65536", "target_file_size_base": "32768",
                 "max_bytes_for_level_base": "65536", "max_bytes_for_level_multiplier": "4",
                 "level0_file_num_compaction_trigger": "4",
                 "compaction_style": "kCompactionStyleLevel"}
TABLE = {"filter_policy": "bloomfilter:10:false"}


def options(out):
    """The database's options and each family's, from an OPTIONS file."""
    lines = ["[Version]", "  rocksdb_version=9.8.4", "  options_file_version=1.1", "",
             "[DBOptions]", "  create_if_missing=true", "  create_missing_column_families=true",
             "  max_background_jobs=2", ""]
    for name in FAMILIES:
        lines += [f'[CFOptions "{name}"]'] + [f"  {k}={v}" for k, v in COLUMN_FAMILY.items()]
        lines += ["", f'[TableOptions/BlockBasedTable "{name}"]']
        lines += [f"  {k}={v}" for k, v in TABLE.items()] + [""]
    opt_dir = os.path.join(out, ".options")
    shutil.rmtree(opt_dir, ignore_errors=True)
    os.makedirs(opt_dir)
    with open(os.path.join(opt_dir, "OPTIONS-000001"), "w") as f:
        f.write("\n".join(lines) + "\n")
    _, families = Options.load_latest(opt_dir)
    shutil.rmtree(opt_dir)
    return families


def open_db(path, families):
    opt = families["default"]
    opt.create_if_missing(True)
    opt.create_missing_column_families(True)
    opt.enable_statistics()
    db = Rdict(path, options=opt,
               column_families={name: families[name] for name in FAMILIES[1:]})
    handles = [db] + [db.get_column_family(name) for name in FAMILIES[1:]]
    return db, handles, opt


def close(handles):
    """Closes the database: each family's Rdict holds it open."""
    for h in reversed(handles):
        h.close()
    handles.clear()
    gc.collect()


def useful(opt):
    stats = opt.get_statistics()
    return int(re.search(r"rocksdb\.bloom\.filter\.useful COUNT : (\d+)", stats).group(1))


def quiesce(handles, auto_on=True):
    """Waits until no flush or compaction runs or is pending (a compaction
    counts as pending only while automatic compactions are on: with them
    off, the property still says whether one is needed)."""
    quiet = 0
    while quiet < 5:
        time.sleep(0.02)
        busy = (handles[0].property_int_value("rocksdb.num-running-compactions")
                + handles[0].property_int_value("rocksdb.num-running-flushes"))
        for h in handles:
            busy += h.property_int_value("rocksdb.mem-table-flush-pending")
            if auto_on:
                busy += h.property_int_value("rocksdb.compaction-pending")
        quiet = 0 if busy else quiet + 1


# ` 10:1202[2 .. 2]['646566' seq:2, type:1 .. '646566' seq:2, type:1](0)`
SSTABLE = re.compile(r" (\d+):(\d+)\[(\d+) \.\. (\d+)\]\['([0-9A-Fa-f]*)' seq:\d+, type:\d+ "
                     r"\.\. '([0-9A-Fa-f]*)' seq:\d+, type:\d+\]")


def live_tables(handles):
    """(family, level, number, size, smallest hex, largest hex, smallest
    seqno, largest seqno) of every live table, checked against live_files."""
    tables = []
    for name, h in zip(FAMILIES, handles):
        level = None
        for line in h.property_value("rocksdb.sstables").splitlines():
            m = re.match(r"--- level (\d+) ---", line)
            if m:
                level = int(m.group(1))
                continue
            if not line:
                continue
            m = SSTABLE.match(line)
            if not m or level is None:
                sys.exit(f"gen-rocksdb9-db: rocksdb.sstables: unparsed line {line!r}")
            number, size, lo_seq, hi_seq, lo, hi = m.groups()
            tables.append((name, level, int(number), int(size), lo.lower(), hi.lower(),
                           int(lo_seq), int(hi_seq)))
    files = sorted((int(f["name"].lstrip("/").split(".")[0]), f["level"], f["size"],
                    f["start_key"].hex(), f["end_key"].hex())
                   for f in handles[0].live_files())
    if files != sorted(t[2:3] + t[1:2] + t[3:6] for t in tables):
        sys.exit("gen-rocksdb9-db: rocksdb.sstables and live_files disagree")
    return tables


def key_of(i):
    return b"user:%08d" % i


def value_of(rng, family, i, round):
    head = b"%s.%d.%d:" % (family.encode(), i, round)
    return head + bytes(32 + rng.randrange(95) for _ in range(40 + rng.randrange(120)))


class Model:
    """One column family's keys: id -> present (False: deleted)."""

    def __init__(self):
        self.ids = {}
        self.overwritten = set()

    def present(self, lo=0, hi=1 << 30):
        return sorted(i for i, live in self.ids.items() if live and lo <= i < hi)


def main():
    args = sys.argv[1:]
    seed = 1
    if len(args) >= 2 and args[0] == "--seed":
        seed = int(args[1])
        args = args[2:]
    if len(args) != 1 or args[0].startswith("-"):
        sys.exit("usage: gen-rocksdb9-db.py --seed N OUT_DIR")
    out = args[0]
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "db")
    if os.path.exists(path):
        sys.exit(f"gen-rocksdb9-db: {path} exists")
    rng = random.Random(f"{seed}-rocksdb9-db")
    families = options(out)
    db, handles, opt = open_db(path, families)
    models = [Model() for _ in FAMILIES]

    def put(f, i, round):
        handles[f][key_of(i)] = value_of(rng, FAMILIES[f], i, round)
        if i in models[f].ids:
            models[f].overwritten.add(i)
        models[f].ids[i] = True

    def delete(f, i):
        del handles[f][key_of(i)]
        models[f].ids[i] = False

    def mix(f, lo, hi, n, round, overwrite, erase):
        """n writes to family f's ids in [lo, hi): new keys, overwrites, deletions."""
        for _ in range(n):
            ids = models[f].present(lo, hi)
            r = rng.randrange(100)
            if ids and r < overwrite:
                put(f, rng.choice(ids), round)
            elif ids and r < overwrite + erase:
                delete(f, rng.choice(ids))
            else:
                while True:
                    i = rng.randrange(lo, hi)
                    if i not in models[f].ids:
                        break
                put(f, i, round)

    def both(n0, n1, round, overwrite, erase):
        """Both families written in turns of a few keys, sharing the WAL."""
        while n0 > 0 or n1 > 0:
            a, b = min(n0, 1 + rng.randrange(20)), min(n1, 1 + rng.randrange(20))
            mix(0, 0, SPACE, a, round, overwrite, erase)
            mix(1, 0, SPACE, b, round, overwrite, erase)
            n0 -= a
            n1 -= b

    def flush():
        for h in handles:
            h.flush()

    # Rounds 1 and 2: new keys, then overwrites, deletions and new keys.
    both(1800, 1000, 1, 0, 0)
    both(900, 500, 2, 30, 20)
    quiesce(handles)
    # Closed and reopened: a new MANIFEST, LOG.old.*, a new OPTIONS file.
    close(handles)
    db, handles, opt = open_db(path, families)
    # Part of each family compacted down.
    handles[0].compact_range(key_of(0), key_of(SPACE // 4))
    handles[1].compact_range(key_of(SPACE // 2), key_of(SPACE * 7 // 10))
    # Round 3: more writes, automatic compactions on.
    both(500, 300, 3, 30, 15)
    flush()
    quiesce(handles)
    # Round 4: automatic compactions off, each pass flushed to level 0.
    for h in handles:
        h.set_options({"disable_auto_compactions": "true"})
    quiesce(handles, False)
    for p in range(3):
        mix(0, 0, SPACE, 120 + rng.randrange(40), 4 + p, 30, 15)
        if p < 2:
            mix(1, 0, SPACE, 100 + rng.randrange(40), 4 + p, 30, 15)
        flush()
    quiesce(handles, False)

    # The probes of each family: its present keys (some overwritten),
    # deleted keys, keys of the other family alone, never written inside the
    # space, near misses, and keys outside every table's range.
    lines = []
    counts = {"probes": 0, "found": 0, "ruled out": 0, "tables": 0}
    for f, name in enumerate(FAMILIES):
        m, o = models[f], models[1 - f]
        live = m.present()
        dead = sorted(i for i, is_live in m.ids.items() if not is_live)
        over = sorted(m.overwritten)
        others = [i for i in o.present() if i not in m.ids]
        probes = set()
        probes.update(key_of(rng.choice(live)) for _ in range(70))
        probes.update(key_of(rng.choice(over)) for _ in range(40))
        probes.update(key_of(rng.choice(dead)) for _ in range(50))
        probes.update(key_of(rng.choice(others)) for _ in range(40))
        for _ in range(70):
            i = rng.randrange(SPACE)
            if i not in m.ids and i not in o.ids:
                probes.add(key_of(i))
        for _ in range(12):
            k = key_of(rng.choice(live))
            probes.add(k + b"%d" % rng.randrange(10))
            probes.add(k[:-1])
        probes.update(key_of(SPACE + rng.randrange(90000000)) for _ in range(12))
        probes.update([b"a", b"user", b"user:", b"user:0", b"user:~", b"zzz", b"\x01",
                       b"\xff\xfe", b"USER:00000001", b"user:99999999"])
        for key in sorted(probes):
            before = useful(opt)
            value = handles[f].get(key)
            delta = useful(opt) - before
            expect = False
            if len(key) == 13 and key.startswith(b"user:") and key[5:].isdigit():
                expect = m.ids.get(int(key[5:])) is True
            if (value is not None) != expect:
                sys.exit(f"gen-rocksdb9-db: get {key!r} disagrees with the model")
            if value is not None and not value.startswith(name.encode() + b"."):
                sys.exit(f"gen-rocksdb9-db: get {key!r}: a value of another family")
            counts["probes"] += 1
            counts["found"] += value is not None
            counts["ruled out"] += delta > 0
            counts["tables"] += delta
            lines.append(f"{name} {key.hex()} {'found' if value is not None else 'notfound'} "
                         f"{delta}\n")
    quiesce(handles, False)
    tables = live_tables(handles)
    close(handles)
    del db

    # A copy of the closed database, reopened (with its own latest options:
    # automatic compactions off), holds the same tables.
    copy = os.path.join(out, ".db-copy")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(path, copy)
    _, copy_families = Options.load_latest(copy)
    reopened, copy_handles, _ = open_db(copy, copy_families)
    if live_tables(copy_handles) != tables:
        sys.exit("gen-rocksdb9-db: the reopened copy holds other tables")
    close(copy_handles)
    del reopened
    shutil.rmtree(copy)

    with open(os.path.join(out, "gets.txt"), "w") as f:
        f.writelines(lines)
    with open(os.path.join(out, "live.txt"), "w") as f:
        f.writelines(" ".join(str(x) for x in t) + "\n" for t in tables)
    shape = {}
    for t in tables:
        shape[f"{t[0]} L{t[1]}"] = shape.get(f"{t[0]} L{t[1]}", 0) + 1
    print(f"{len(tables)} tables, {sum(t[3] for t in tables)} bytes; "
          + " ".join(f"{k}: {v}" for k, v in sorted(shape.items()))
          + f"; {counts['probes']} probes, {counts['found']} found, {counts['ruled out']} "
          f"ruled out by a filter ({counts['tables']} tables)")


main()
