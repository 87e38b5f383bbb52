// Writes a whole RocksDB database directory with RocksDB 7.8 itself
// (Debian's librocksdb-dev), and beside it RocksDB's own answers: the live
// tables (GetLiveFilesMetaData) and, for a few hundred probe keys per column
// family, what DB::Get says and how many tables' filters ruled the key out
// (the ticker BLOOM_FILTER_USEFUL across that Get). These are the golden
// databases of testdata/db/rocksdb-7.8.3/.
//
//   g++ -O2 -std=c++17 gen-rocksdb-db.cc -o gen-rocksdb-db -lrocksdb
//   ./gen-rocksdb-db --seed N OUT_DIR
//   ./gen-rocksdb-db --seed N --big MB OUT_DIR
//
// OUT_DIR/db is the database, left as RocksDB leaves it (CURRENT,
// MANIFEST-*, *.sst, *.log, IDENTITY, LOCK, LOG, LOG.old.*, OPTIONS-*). Two
// column families, "default" and "other", with different keys
// `user:%08d`; level compaction, a full Bloom filter of 10 bits per key
// (format_version 5, the default), 64 KiB write buffers, 32 KiB tables and
// a 64 KiB level 1 growing 4 times a level, so a few thousand keys written
// in rounds (overwrites and deletions among them, part of each family
// compacted with CompactRange) give tables at level 0 and at least two
// deeper levels. The last rounds are written with automatic compactions
// off, to stay at level 0.
//
// OUT_DIR/live.txt: one line per live table, in GetLiveFilesMetaData's
// order: `COLUMN_FAMILY LEVEL NUMBER FILE_SIZE SMALLEST_USER_KEY_HEX
// LARGEST_USER_KEY_HEX SMALLEST_SEQNO LARGEST_SEQNO`.
// OUT_DIR/gets.txt: one line per probe, by column family, then key:
// `COLUMN_FAMILY KEY_HEX found|notfound USEFUL`, USEFUL the change of the
// ticker rocksdb.bloom.filter.useful across the Get (a count of tables).
//
// Every write is flushed to a table before the probes (the WAL holds no
// data), no compaction runs, and live.txt is checked against a copy of the
// closed database, reopened.
//
// With --big MB: one column family, default options but the Bloom filter
// and 2 MiB tables (target_file_size_base), random 16-byte keys (hex digits)
// and random incompressible 100-byte values until the live tables hold
// about MB MiB; no answer files. A benchmark database, not checked in.
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../common/common.h"

using namespace rocksdb;

static void check(const Status& s, const std::string& what) {
  if (!s.ok()) {
    fprintf(stderr, "gen-rocksdb-db: %s: %s\n", what.c_str(), s.ToString().c_str());
    exit(1);
  }
}

[[noreturn]] static void fail(const std::string& what) { fail_as("gen-rocksdb-db", what); }

static uint64_t int_property(DB* db, const std::string& name) {
  uint64_t value = 0;
  if (!db->GetIntProperty(name, &value)) fail("no property " + name);
  return value;
}

// Waits until no flush or compaction runs or is pending (in any family; a
// compaction counts as pending only while automatic compactions are on:
// with them off, the property still says whether one is needed).
static void quiesce(DB* db, const std::vector<ColumnFamilyHandle*>& handles, bool auto_on = true) {
  int quiet = 0;
  while (quiet < 5) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    uint64_t busy = int_property(db, "rocksdb.num-running-compactions") +
                    int_property(db, "rocksdb.num-running-flushes");
    for (ColumnFamilyHandle* h : handles) {
      uint64_t v = 0;
      if (auto_on && db->GetIntProperty(h, "rocksdb.compaction-pending", &v)) busy += v;
      if (db->GetIntProperty(h, "rocksdb.mem-table-flush-pending", &v)) busy += v;
    }
    quiet = busy ? 0 : quiet + 1;
  }
}

// `/000012.sst` -> 12
static uint64_t number_of(const std::string& name) {
  size_t slash = name.rfind('/');
  std::string base = name.substr(slash == std::string::npos ? 0 : slash + 1);
  if (base.size() < 5 || base.compare(base.size() - 4, 4, ".sst") != 0) fail("not a table: " + name);
  return strtoull(base.c_str(), nullptr, 10);
}

static std::string live_text(DB* db) {
  std::vector<LiveFileMetaData> files;
  db->GetLiveFilesMetaData(&files);
  std::ostringstream out;
  for (const LiveFileMetaData& f : files) {
    if (f.being_compacted) fail("a table is being compacted: " + f.name);
    uint64_t number = number_of(f.name);
    if (number != f.file_number) fail("file number differs from the name: " + f.name);
    out << f.column_family_name << " " << f.level << " " << number << " " << f.size << " "
        << hex(f.smallestkey) << " " << hex(f.largestkey) << " " << f.smallest_seqno << " "
        << f.largest_seqno << "\n";
  }
  return out.str();
}

static std::string key_of(int id) {
  char buf[32];
  snprintf(buf, sizeof buf, "user:%08d", id);
  return buf;
}

static std::string value_of(Rng& rng, const std::string& cf, int id, int round) {
  std::string v = cf + "." + std::to_string(id) + "." + std::to_string(round) + ":";
  int n = 40 + int(rng.below(120));
  for (int i = 0; i < n; i++) v.push_back(char(' ' + rng.below(95)));
  return v;
}

static const std::vector<std::string> kFamilies = {"default", "other"};

struct Db {
  DB* db = nullptr;
  std::vector<ColumnFamilyHandle*> handles;

  void open(const DBOptions& options, const ColumnFamilyOptions& cf, const std::string& path) {
    std::vector<ColumnFamilyDescriptor> descriptors;
    for (const std::string& name : kFamilies) descriptors.emplace_back(name, cf);
    check(DB::Open(options, path, descriptors, &handles, &db), "open " + path);
  }
  void close() {
    for (ColumnFamilyHandle* h : handles) check(db->DestroyColumnFamilyHandle(h), "close family");
    handles.clear();
    check(db->Close(), "close");
    delete db;
    db = nullptr;
  }
  void flush() {
    for (ColumnFamilyHandle* h : handles) check(db->Flush(FlushOptions(), h), "flush");
  }
};

// One column family's keys: id -> present (false: deleted).
struct Model {
  std::map<int, bool> ids;
  std::set<int> overwritten;
  std::vector<int> present(int lo = 0, int hi = 1 << 30) const {
    std::vector<int> out;
    for (auto it = ids.lower_bound(lo); it != ids.end() && it->first < hi; ++it)
      if (it->second) out.push_back(it->first);
    return out;
  }
};

static int small(uint64_t seed, const std::string& out) {
  std::string path = out + "/db";
  std::shared_ptr<Statistics> stats = CreateDBStatistics();
  DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.error_if_exists = true;
  options.statistics = stats;
  options.max_background_jobs = 2;
  ColumnFamilyOptions cf;
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  cf.table_factory.reset(NewBlockBasedTableFactory(table));
  cf.compaction_style = kCompactionStyleLevel;
  cf.write_buffer_size = 64 << 10;
  cf.target_file_size_base = 32 << 10;
  cf.max_bytes_for_level_base = 64 << 10;
  cf.max_bytes_for_level_multiplier = 4;
  cf.level0_file_num_compaction_trigger = 4;
  Db db;
  db.open(options, cf, path);
  options.error_if_exists = false;

  Rng rng{seed * 0x9e3779b97f4a7c15ull + 0x7654321};
  rng.next();
  const int kSpace = 10000;  // ids 0..9999; user:00010000 and up never written
  std::vector<Model> models(kFamilies.size());
  WriteOptions write;
  auto put = [&](size_t f, int id, int round) {
    check(db.db->Put(write, db.handles[f], key_of(id), value_of(rng, kFamilies[f], id, round)),
          "put");
    if (models[f].ids.count(id)) models[f].overwritten.insert(id);
    models[f].ids[id] = true;
  };
  auto del = [&](size_t f, int id) {
    check(db.db->Delete(write, db.handles[f], key_of(id)), "delete");
    models[f].ids[id] = false;
  };
  // n writes to family f's ids in [lo, hi): new keys, overwrites, deletions.
  auto mix = [&](size_t f, int lo, int hi, int n, int round, int overwrite, int erase) {
    for (int i = 0; i < n; i++) {
      std::vector<int> ids = models[f].present(lo, hi);
      int r = int(rng.below(100));
      if (!ids.empty() && r < overwrite) {
        put(f, ids[rng.below(ids.size())], round);
      } else if (!ids.empty() && r < overwrite + erase) {
        del(f, ids[rng.below(ids.size())]);
      } else {
        int id;
        do id = lo + int(rng.below(hi - lo)); while (models[f].ids.count(id));
        put(f, id, round);
      }
    }
  };
  // Both families written in turns of a few keys, sharing the WAL.
  auto both = [&](int n0, int n1, int round, int overwrite, int erase) {
    while (n0 > 0 || n1 > 0) {
      int a = std::min(n0, 1 + int(rng.below(20))), b = std::min(n1, 1 + int(rng.below(20)));
      mix(0, 0, kSpace, a, round, overwrite, erase);
      mix(1, 0, kSpace, b, round, overwrite, erase);
      n0 -= a;
      n1 -= b;
    }
  };
  // Rounds 1 and 2: new keys, then overwrites, deletions and new keys.
  both(1800, 1000, 1, 0, 0);
  both(900, 500, 2, 30, 20);
  quiesce(db.db, db.handles);
  // Closed and reopened: a new MANIFEST, LOG.old.*, a new OPTIONS file.
  db.close();
  db.open(options, cf, path);
  // Part of each family compacted down.
  {
    CompactRangeOptions compact;
    std::string lo = key_of(0), hi = key_of(kSpace / 4);
    Slice b(lo), e(hi);
    check(db.db->CompactRange(compact, db.handles[0], &b, &e), "compact default");
    lo = key_of(kSpace / 2), hi = key_of(kSpace * 7 / 10);
    Slice b1(lo), e1(hi);
    check(db.db->CompactRange(compact, db.handles[1], &b1, &e1), "compact other");
  }
  // Round 3: more writes, automatic compactions on.
  both(500, 300, 3, 30, 15);
  db.flush();
  quiesce(db.db, db.handles);
  // Round 4: automatic compactions off, each pass flushed to level 0.
  for (ColumnFamilyHandle* h : db.handles) {
    check(db.db->SetOptions(h, {{"disable_auto_compactions", "true"}}), "set options");
  }
  quiesce(db.db, db.handles, false);
  for (int pass = 0; pass < 3; pass++) {
    mix(0, 0, kSpace, 120 + int(rng.below(40)), 4 + pass, 30, 15);
    if (pass < 2) mix(1, 0, kSpace, 100 + int(rng.below(40)), 4 + pass, 30, 15);
    db.flush();
  }
  quiesce(db.db, db.handles, false);

  // The probes of each family: its present keys (some overwritten), deleted
  // keys, keys of the other family alone, never written inside the space,
  // near misses, and keys outside every table's range.
  std::string answers;
  int found = 0, probed = 0, ruled_out = 0, useful_total = 0;
  for (size_t f = 0; f < kFamilies.size(); f++) {
    const Model& m = models[f];
    const Model& o = models[1 - f];
    std::set<std::string> probes;
    std::vector<int> live = m.present(), dead, over(m.overwritten.begin(), m.overwritten.end());
    std::vector<int> others;
    for (auto& [id, is] : m.ids)
      if (!is) dead.push_back(id);
    for (int id : o.present())
      if (!m.ids.count(id)) others.push_back(id);
    for (int i = 0; i < 70; i++) probes.insert(key_of(live[rng.below(live.size())]));
    for (int i = 0; i < 40; i++) probes.insert(key_of(over[rng.below(over.size())]));
    for (int i = 0; i < 50; i++) probes.insert(key_of(dead[rng.below(dead.size())]));
    for (int i = 0; i < 40; i++) probes.insert(key_of(others[rng.below(others.size())]));
    for (int i = 0; i < 70; i++) {
      int id = int(rng.below(kSpace));
      if (!m.ids.count(id) && !o.ids.count(id)) probes.insert(key_of(id));
    }
    for (int i = 0; i < 12; i++) {
      std::string k = key_of(live[rng.below(live.size())]);
      probes.insert(k + char('0' + rng.below(10)));
      probes.insert(k.substr(0, k.size() - 1));
    }
    for (int i = 0; i < 12; i++) probes.insert(key_of(kSpace + int(rng.below(90000000))));
    for (const char* k : {"a", "user", "user:", "user:0", "user:~", "zzz", "\x01", "\xff\xfe",
                          "USER:00000001", "user:99999999"}) {
      probes.insert(k);
    }
    for (const std::string& key : probes) {
      uint64_t before = stats->getTickerCount(BLOOM_FILTER_USEFUL);
      std::string value;
      Status s = db.db->Get(ReadOptions(), db.handles[f], key, &value);
      if (!s.ok() && !s.IsNotFound()) check(s, "get " + hex(key));
      uint64_t useful = stats->getTickerCount(BLOOM_FILTER_USEFUL) - before;
      bool expect = false;
      if (key.size() == 13 && key.compare(0, 5, "user:") == 0) {
        auto it = m.ids.find(atoi(key.c_str() + 5));
        expect = it != m.ids.end() && it->second && key_of(it->first) == key;
      }
      if (s.ok() != expect) fail("get " + key + " disagrees with the model");
      if (s.ok() && value.compare(0, kFamilies[f].size() + 1, kFamilies[f] + ".") != 0) {
        fail("get " + key + ": a value of another family");
      }
      found += s.ok();
      probed++;
      ruled_out += useful > 0;
      useful_total += int(useful);
      answers += kFamilies[f] + " " + hex(key) + (s.ok() ? " found " : " notfound ") +
                 std::to_string(useful) + "\n";
    }
  }
  quiesce(db.db, db.handles, false);
  std::string live = live_text(db.db);
  db.close();

  // A copy of the closed database, reopened, holds the same tables.
  namespace fs = std::filesystem;
  std::string copy = out + "/.db-copy";
  fs::remove_all(copy);
  fs::copy(path, copy);
  cf.disable_auto_compactions = true;
  Db reopened;
  reopened.open(options, cf, copy);
  if (live_text(reopened.db) != live) fail("the reopened copy holds other tables");
  reopened.close();
  fs::remove_all(copy);

  std::ofstream(out + "/gets.txt") << answers;
  std::ofstream(out + "/live.txt") << live;
  std::map<std::string, int> shape;
  uint64_t total = 0;
  int tables = 0;
  std::istringstream lines(live);
  std::string family;
  int level;
  uint64_t number, size;
  std::string rest;
  while (lines >> family >> level >> number >> size && std::getline(lines, rest)) {
    shape[family + " L" + std::to_string(level)]++;
    total += size;
    tables++;
  }
  printf("%d tables, %llu bytes;", tables, (unsigned long long)total);
  for (auto& [where, n] : shape) printf(" %s: %d", where.c_str(), n);
  printf("; %d probes, %d found, %d ruled out by a filter (%d tables)\n", probed, found,
         ruled_out, useful_total);
  return 0;
}

static int big(uint64_t seed, uint64_t mib, const std::string& out) {
  std::string path = out + "/db";
  Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  options.table_factory.reset(NewBlockBasedTableFactory(table));
  options.target_file_size_base = 2 << 20;
  DB* db = nullptr;
  check(DB::Open(options, path, &db), "open " + path);
  auto start = std::chrono::steady_clock::now();
  Rng rng = big_rng(seed);
  uint64_t target = mib << 20, keys = 0;
  // The live tables and the memtables (flushed at the end).
  while (int_property(db, "rocksdb.live-sst-files-size") +
             int_property(db, "rocksdb.cur-size-all-mem-tables") < target) {
    for (int b = 0; b < 20; b++) {
      WriteBatch batch;
      big_batch(rng, [&](const char* key, const char* value) {
        check(batch.Put(Slice(key, 16), Slice(value, 100)), "batch");
      });
      check(db->Write(WriteOptions(), &batch), "write");
      keys += 1000;
    }
  }
  check(db->Flush(FlushOptions()), "flush");
  quiesce(db, {db->DefaultColumnFamily()});
  std::vector<LiveFileMetaData> files;
  db->GetLiveFilesMetaData(&files);
  check(db->Close(), "close");
  delete db;
  print_summary(keys, files, start);
  return 0;
}

int main(int argc, char** argv) {
  Args args = parse_args("gen-rocksdb-db", argc, argv);
  return args.mib > 0 ? big(args.seed, args.mib, args.out) : small(args.seed, args.out);
}
