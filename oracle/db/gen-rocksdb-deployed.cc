// Writes RocksDB databases with features real deployments turn on, with
// RocksDB 7.8 itself (Debian's librocksdb-dev), and beside each RocksDB's
// own answers. These are the golden databases of
// testdata/deployed/rocksdb-7.8.3/.
//
//   g++ -O1 -std=c++17 gen-rocksdb-deployed.cc -o gen-rocksdb-deployed -lrocksdb
//   ./gen-rocksdb-deployed --seed N OUT_DIR
//
// OUT_DIR/NAME/db, one database per feature:
//   blob         integrated BlobDB (enable_blob_files, min_blob_size 24,
//                16 KiB blob files, garbage collection of the oldest
//                quarter),
//                flushes and compactions that leave blob garbage behind;
//   comparator   the custom comparator `my.ReverseSuffix` (below: keys
//                compared from their last byte to their first), partitioned
//                Bloom filters of small partitions on a two-level index;
//   timestamps   user-defined timestamps (BytewiseComparatorWithU64Ts,
//                `leveldb.BytewiseComparator.u64ts`): the family "default"
//                with a full filter, "partitioned" with partitioned ones,
//                each key written at several timestamps, some deleted;
//   extractor    the custom prefix extractor `my.UpToHundreds` (below) and
//                no whole keys in the full Bloom filters: a filter only the
//                extractor's code can rebuild;
//   deletions    point, single and range deletions, merge operands (the
//                merge operator `my.Append`, below) over values, deletions
//                and nothing, wide-column entities, over several levels;
//   hits         optimize_filters_for_hits: the last level's filters are
//                not consulted (and its compactions write none);
//   hits-l0      the same, with level 0 the only level: the filter of its
//                last (oldest) table is not consulted;
//   wal          the last writes (values, deletions, merge operands, a
//                range deletion) left in the write-ahead log: no flush at
//                close, none at recovery.
// Beside each db/: live.txt and gets.txt, as gen-rocksdb-db.cc writes them
// (`COLUMN_FAMILY LEVEL NUMBER FILE_SIZE SMALLEST_USER_KEY_HEX
// LARGEST_USER_KEY_HEX SMALLEST_SEQNO LARGEST_SEQNO`, and `COLUMN_FAMILY
// KEY_HEX found|notfound USEFUL`, USEFUL the change of the ticker
// rocksdb.bloom.filter.useful across the Get); user keys as stored (with
// their timestamps), Get keys without (read at the newest timestamp). For
// blob, blobs.txt: one line per live blob file, from GetColumnFamilyMetaData:
// `COLUMN_FAMILY NUMBER TOTAL_BLOBS TOTAL_BYTES GARBAGE_BLOBS GARBAGE_BYTES`.
// Every write but the wal database's last ones is flushed before the
// probes; each database is closed, reopened from a copy, and must list the
// same files.
#include <rocksdb/comparator.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/metadata.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "common.h"

using namespace rocksdb;

// In RocksDB 7.8's library, not in its public headers.
namespace rocksdb {
const Comparator* BytewiseComparatorWithU64Ts();
}

[[noreturn]] static void fail(const std::string& what) { fail_as("gen-rocksdb-deployed", what); }

static void check(const Status& s, const std::string& what) {
  if (!s.ok()) fail(what + ": " + s.ToString());
}

// Keys compared from their last byte to their first: `user:00000012`
// sorts by its last digit first. No separator is shortened.
class ReverseSuffix : public Comparator {
 public:
  const char* Name() const override { return "my.ReverseSuffix"; }
  int Compare(const Slice& a, const Slice& b) const override {
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 1; i <= n; i++) {
      unsigned char x = a[a.size() - i], y = b[b.size() - i];
      if (x != y) return x < y ? -1 : 1;
    }
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
  }
  void FindShortestSeparator(std::string*, const Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

// `user:000012` of `user:00001234`: keys by hundreds.
class UpToHundreds : public SliceTransform {
 public:
  const char* Name() const override { return "my.UpToHundreds"; }
  Slice Transform(const Slice& key) const override { return Slice(key.data(), key.size() - 2); }
  bool InDomain(const Slice& key) const override { return key.size() >= 2; }
};

// Merge operands appended to the value, comma separated.
class Append : public AssociativeMergeOperator {
 public:
  const char* Name() const override { return "my.Append"; }
  bool Merge(const Slice&, const Slice* existing, const Slice& value, std::string* out,
             Logger*) const override {
    *out = existing ? existing->ToString() + "," + value.ToString() : value.ToString();
    return true;
  }
};

static std::string key_of(int id) {
  char buf[32];
  snprintf(buf, sizeof buf, "user:%08d", id);
  return buf;
}

static std::string value_of(Rng& rng, int id, int round, int len) {
  std::string v = std::to_string(id) + "." + std::to_string(round) + ":";
  while ((int)v.size() < len) v.push_back(char(' ' + rng.below(95)));
  return v;
}

static std::string fixed64(uint64_t x) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; i++) s[i] = char(x >> (8 * i));
  return s;
}

// Waits until no flush or compaction runs or is pending (a compaction
// counts as pending only while automatic compactions are on: with them off,
// the property still says whether one is needed).
static void quiesce(DB* db, const std::vector<ColumnFamilyHandle*>& handles) {
  bool auto_on = !db->GetOptions().disable_auto_compactions;
  int quiet = 0;
  while (quiet < 5) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    uint64_t busy = 0, v = 0;
    if (db->GetIntProperty("rocksdb.num-running-compactions", &v)) busy += v;
    if (db->GetIntProperty("rocksdb.num-running-flushes", &v)) busy += v;
    for (ColumnFamilyHandle* h : handles) {
      if (auto_on && db->GetIntProperty(h, "rocksdb.compaction-pending", &v)) busy += v;
      if (db->GetIntProperty(h, "rocksdb.mem-table-flush-pending", &v)) busy += v;
    }
    quiet = busy ? 0 : quiet + 1;
  }
}

struct Db {
  DB* db = nullptr;
  std::vector<ColumnFamilyHandle*> handles;
  std::vector<std::string> names;

  void open(const DBOptions& options, const std::vector<ColumnFamilyDescriptor>& families,
            const std::string& path) {
    names.clear();
    for (auto& d : families) names.push_back(d.name);
    check(DB::Open(options, path, families, &handles, &db), "open " + path);
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

static std::string live_text(DB* db) {
  std::vector<LiveFileMetaData> files;
  // A compaction scheduled as automatic ones were turned off may start
  // after a quiet spell: wait for it.
  for (int tries = 0; tries < 500; tries++) {
    files.clear();
    db->GetLiveFilesMetaData(&files);
    bool busy = false;
    for (const LiveFileMetaData& f : files) busy |= f.being_compacted;
    if (!busy) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ostringstream out;
  for (const LiveFileMetaData& f : files) {
    if (f.being_compacted) fail("a table is being compacted: " + f.name);
    out << f.column_family_name << " " << f.level << " " << f.file_number << " " << f.size << " "
        << hex(f.smallestkey) << " " << hex(f.largestkey) << " " << f.smallest_seqno << " "
        << f.largest_seqno << "\n";
  }
  return out.str();
}

static std::string blob_text(Db& db) {
  std::ostringstream out;
  for (size_t f = 0; f < db.handles.size(); f++) {
    ColumnFamilyMetaData meta;
    db.db->GetColumnFamilyMetaData(db.handles[f], &meta);
    for (const BlobMetaData& b : meta.blob_files) {
      out << db.names[f] << " " << b.blob_file_number << " " << b.total_blob_count << " "
          << b.total_blob_bytes << " " << b.garbage_blob_count << " " << b.garbage_blob_bytes
          << "\n";
    }
  }
  return out.str();
}

// The probes: every id written (present or deleted), ids never written,
// near misses and keys outside the range.
static std::vector<std::string> probe_keys(Rng& rng, int space) {
  std::set<std::string> probes;
  for (int id = 0; id < space; id++) probes.insert(key_of(id));
  for (int i = 0; i < 60; i++) {
    std::string k = key_of(int(rng.below(space)));
    probes.insert(k + char('0' + rng.below(10)));
    probes.insert(k.substr(0, k.size() - 1));
    probes.insert(key_of(space + int(rng.below(90000000))));
  }
  for (const char* k : {"a", "user", "user:", "zzz", "\x01", "\xff\xfe"}) probes.insert(k);
  return std::vector<std::string>(probes.begin(), probes.end());
}

// Each probe's Get in each family, with the tables its filters ruled out;
// `get` says whether a key was found (and fails on any other error).
static std::string answers(Db& db, Statistics* stats, const std::vector<std::string>& probes,
                           std::function<bool(size_t, const std::string&)> get) {
  std::string out;
  for (size_t f = 0; f < db.handles.size(); f++) {
    for (const std::string& key : probes) {
      uint64_t before = stats->getTickerCount(BLOOM_FILTER_USEFUL);
      bool found = get(f, key);
      uint64_t useful = stats->getTickerCount(BLOOM_FILTER_USEFUL) - before;
      out += db.names[f] + " " + hex(key) + (found ? " found " : " notfound ") +
             std::to_string(useful) + "\n";
    }
  }
  return out;
}

static bool found(const Status& s, const std::string& key) {
  if (!s.ok() && !s.IsNotFound()) check(s, "get " + hex(key));
  return s.ok();
}

// Closes the database, reopens a copy, and requires the same files; writes
// live.txt, gets.txt and (if not empty) blobs.txt.
static void finish(Db& db, const DBOptions& options,
                   const std::vector<ColumnFamilyDescriptor>& families, const std::string& out,
                   const std::string& gets) {
  quiesce(db.db, db.handles);
  std::string live = live_text(db.db), blobs = blob_text(db);
  db.close();
  namespace fs = std::filesystem;
  std::string copy = out + "/.db-copy";
  fs::remove_all(copy);
  fs::copy(out + "/db", copy);
  DBOptions again = options;
  again.error_if_exists = false;
  std::vector<ColumnFamilyDescriptor> quiet = families;
  for (auto& family : quiet) family.options.disable_auto_compactions = true;
  Db reopened;
  reopened.open(again, quiet, copy);
  if (live_text(reopened.db) != live) fail(out + ": the reopened copy holds other tables");
  if (blob_text(reopened) != blobs) fail(out + ": the reopened copy holds other blob files");
  reopened.close();
  fs::remove_all(copy);
  std::ofstream(out + "/live.txt") << live;
  std::ofstream(out + "/gets.txt") << gets;
  if (!blobs.empty()) std::ofstream(out + "/blobs.txt") << blobs;
  std::map<int, int> levels;
  std::istringstream lines(live);
  std::string family;
  int level;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream(line) >> family >> level;
    levels[level]++;
  }
  printf("%s:", out.c_str());
  for (auto& [l, n] : levels) printf(" L%d %d tables", l, n);
  printf("%s\n", blobs.empty() ? "" : "; blob files");
}

static DBOptions db_options(const std::shared_ptr<Statistics>& stats) {
  DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.error_if_exists = true;
  options.statistics = stats;
  options.max_background_jobs = 2;
  return options;
}

static ColumnFamilyOptions small_levels(const BlockBasedTableOptions& table) {
  ColumnFamilyOptions cf;
  cf.table_factory.reset(NewBlockBasedTableFactory(table));
  cf.write_buffer_size = 32 << 10;
  cf.target_file_size_base = 16 << 10;
  cf.max_bytes_for_level_base = 32 << 10;
  cf.max_bytes_for_level_multiplier = 4;
  cf.level0_file_num_compaction_trigger = 4;
  return cf;
}

static void blob(uint64_t seed, const std::string& out) {
  auto stats = CreateDBStatistics();
  DBOptions options = db_options(stats);
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  ColumnFamilyOptions cf = small_levels(table);
  cf.target_file_size_base = 4 << 10;
  cf.max_bytes_for_level_base = 8 << 10;
  cf.enable_blob_files = true;
  cf.min_blob_size = 24;
  cf.blob_file_size = 16 << 10;
  cf.enable_blob_garbage_collection = true;
  cf.blob_garbage_collection_age_cutoff = 0.25;
  std::vector<ColumnFamilyDescriptor> families = {{"default", cf}};
  Db db;
  db.open(options, families, out + "/db");
  Rng rng{seed * 0x9e3779b97f4a7c15ull + 0xb10b};
  rng.next();
  const int kSpace = 1500;
  WriteOptions write;
  // Values of 8 to 80 bytes: those of 24 and more go to blob files.
  for (int round = 1; round <= 4; round++) {
    for (int i = 0; i < 900; i++) {
      int id = int(rng.below(kSpace));
      if (round > 1 && rng.below(10) == 0) {
        check(db.db->Delete(write, key_of(id)), "delete");
      } else {
        check(db.db->Put(write, key_of(id), value_of(rng, id, round, 8 + int(rng.below(73)))),
              "put");
      }
    }
    db.flush();
    quiesce(db.db, db.handles);
    if (round == 2) {
      // Part of the keys compacted down: their overwritten blobs are garbage.
      std::string lo = key_of(0), hi = key_of(kSpace / 2);
      Slice b(lo), e(hi);
      check(db.db->CompactRange(CompactRangeOptions(), &b, &e), "compact");
    }
  }
  quiesce(db.db, db.handles);
  auto gets = answers(db, stats.get(), probe_keys(rng, kSpace), [&](size_t, const std::string& k) {
    std::string value;
    return found(db.db->Get(ReadOptions(), k, &value), k);
  });
  finish(db, options, families, out, gets);
}

static void comparator(uint64_t seed, const std::string& out) {
  static ReverseSuffix order;
  auto stats = CreateDBStatistics();
  DBOptions options = db_options(stats);
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  table.partition_filters = true;
  table.index_type = BlockBasedTableOptions::kTwoLevelIndexSearch;
  table.metadata_block_size = 256;
  table.block_size = 512;
  ColumnFamilyOptions cf = small_levels(table);
  cf.comparator = &order;
  std::vector<ColumnFamilyDescriptor> families = {{"default", cf}};
  Db db;
  db.open(options, families, out + "/db");
  Rng rng{seed * 0x9e3779b97f4a7c15ull + 0xc0c0};
  rng.next();
  const int kSpace = 3000;
  WriteOptions write;
  for (int round = 1; round <= 4; round++) {
    for (int i = 0; i < 1200; i++) {
      int id = int(rng.below(kSpace));
      if (round > 2 && rng.below(10) == 0) {
        check(db.db->Delete(write, key_of(id)), "delete");
      } else {
        check(db.db->Put(write, key_of(id), value_of(rng, id, round, 20 + int(rng.below(40)))),
              "put");
      }
    }
    db.flush();
    quiesce(db.db, db.handles);
  }
  auto gets = answers(db, stats.get(), probe_keys(rng, kSpace), [&](size_t, const std::string& k) {
    std::string value;
    return found(db.db->Get(ReadOptions(), k, &value), k);
  });
  finish(db, options, families, out, gets);
}

static void timestamps(uint64_t seed, const std::string& out) {
  auto stats = CreateDBStatistics();
  DBOptions options = db_options(stats);
  BlockBasedTableOptions full, partitioned;
  full.filter_policy.reset(NewBloomFilterPolicy(10));
  partitioned.filter_policy.reset(NewBloomFilterPolicy(10));
  partitioned.partition_filters = true;
  partitioned.index_type = BlockBasedTableOptions::kTwoLevelIndexSearch;
  partitioned.metadata_block_size = 256;
  partitioned.block_size = 512;
  ColumnFamilyOptions a = small_levels(full), b = small_levels(partitioned);
  a.comparator = b.comparator = BytewiseComparatorWithU64Ts();
  std::vector<ColumnFamilyDescriptor> families = {{"default", a}, {"partitioned", b}};
  Db db;
  db.open(options, families, out + "/db");
  Rng rng{seed * 0x9e3779b97f4a7c15ull + 0x7157};
  rng.next();
  const int kSpace = 1500;
  WriteOptions write;
  uint64_t ts = 1000;
  for (int round = 1; round <= 4; round++) {
    for (int i = 0; i < 800; i++) {
      for (size_t f = 0; f < db.handles.size(); f++) {
        int id = int(rng.below(kSpace));
        // Timestamps rise with each write; some cross a byte (256, 65536).
        ts += 1 + rng.below(300);
        std::string t = fixed64(ts);
        if (round > 2 && rng.below(10) == 0) {
          check(db.db->Delete(write, db.handles[f], key_of(id), t), "delete");
        } else {
          check(db.db->Put(write, db.handles[f], key_of(id), t,
                           value_of(rng, id, round, 20 + int(rng.below(40)))),
                "put");
        }
      }
    }
    db.flush();
    quiesce(db.db, db.handles);
  }
  std::string newest = fixed64(~0ull);
  Slice read_ts(newest);
  ReadOptions read;
  read.timestamp = &read_ts;
  auto gets = answers(db, stats.get(), probe_keys(rng, kSpace), [&](size_t f, const std::string& k) {
    std::string value;
    return found(db.db->Get(read, db.handles[f], k, &value), k);
  });
  finish(db, options, families, out, gets);
}

static void extractor(uint64_t seed, const std::string& out) {
  auto stats = CreateDBStatistics();
  DBOptions options = db_options(stats);
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  table.whole_key_filtering = false;
  ColumnFamilyOptions cf = small_levels(table);
  cf.prefix_extractor = std::make_shared<UpToHundreds>();
  std::vector<ColumnFamilyDescriptor> families = {{"default", cf}};
  Db db;
  db.open(options, families, out + "/db");
  Rng rng{seed * 0x9e3779b97f4a7c15ull + 0xe7};
  rng.next();
  // Ids in a few hundreds only: the filters rule out the other hundreds.
  const int kSpace = 3000;
  WriteOptions write;
  for (int round = 1; round <= 3; round++) {
    for (int i = 0; i < 600; i++) {
      int id = int(rng.below(kSpace / 200)) * 200 + int(rng.below(100));
      check(db.db->Put(write, key_of(id), value_of(rng, id, round, 20 + int(rng.below(40)))),
            "put");
    }
    db.flush();
    quiesce(db.db, db.handles);
  }
  auto gets = answers(db, stats.get(), probe_keys(rng, kSpace), [&](size_t, const std::string& k) {
    std::string value;
    return found(db.db->Get(ReadOptions(), k, &value), k);
  });
  finish(db, options, families, out, gets);
}

// Writes of every kind over `space` ids, in rounds each flushed: values
// (some wide-column entities), overwrites, deletions, single deletions of
// ids written once, merge operands, range deletions (some rewritten after).
static void every_kind(Db& db, Rng& rng, int space, int rounds) {
  WriteOptions write;
  std::set<int> once;      // ids with one value, never overwritten or deleted
  std::set<int> entities;  // ids once entities: RocksDB 7.8 merges no operand into one
  for (int round = 1; round <= rounds; round++) {
    for (int i = 0; i < 700; i++) {
      int id = int(rng.below(space));
      std::string k = key_of(id), v = value_of(rng, id, round, 10 + int(rng.below(40)));
      int r = int(rng.below(100));
      if (round == 1 && r < 10) {
        WideColumns columns{{"a", v}, {"b", "column"}};
        check(db.db->PutEntity(write, db.db->DefaultColumnFamily(), k, columns), "put entity");
        entities.insert(id);
      } else if (round == 1 || r < 40) {
        check(db.db->Put(write, k, v), "put");
        if (round == 1) once.insert(id); else once.erase(id);
      } else if (r < 55) {
        check(db.db->Delete(write, k), "delete");
        once.erase(id);
      } else if (r < 60 && !once.empty()) {
        auto it = once.lower_bound(id);
        if (it == once.end()) it = once.begin();
        check(db.db->SingleDelete(write, key_of(*it)), "single delete");
        once.erase(it);
      } else if (r < 95 && !entities.count(id)) {
        check(db.db->Merge(write, k, "m" + std::to_string(round)), "merge");
        once.erase(id);
      } else if (r >= 95) {
        int lo = int(rng.below(space)), hi = lo + 5 + int(rng.below(30));
        std::string a = key_of(lo), b = key_of(hi);
        check(db.db->DeleteRange(write, db.db->DefaultColumnFamily(), a, b), "delete range");
        for (int x = lo; x < hi; x++) once.erase(x);
      }
    }
    db.flush();
    quiesce(db.db, db.handles);
    if (round == 2) {
      std::string lo = key_of(0), hi = key_of(space / 3);
      Slice b(lo), e(hi);
      check(db.db->CompactRange(CompactRangeOptions(), &b, &e), "compact");
    }
    if (round == rounds - 1) {
      check(db.db->SetOptions({{"disable_auto_compactions", "true"}}), "set options");
    }
  }
}

static std::string default_gets(Db& db, Statistics* stats, Rng& rng, int space) {
  return answers(db, stats, probe_keys(rng, space), [&](size_t, const std::string& k) {
    std::string value;
    return found(db.db->Get(ReadOptions(), k, &value), k);
  });
}

static void deletions(uint64_t seed, const std::string& out) {
  auto stats = CreateDBStatistics();
  DBOptions options = db_options(stats);
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  ColumnFamilyOptions cf = small_levels(table);
  cf.merge_operator = std::make_shared<Append>();
  cf.target_file_size_base = 8 << 10;
  cf.max_bytes_for_level_base = 16 << 10;
  std::vector<ColumnFamilyDescriptor> families = {{"default", cf}};
  Db db;
  db.open(options, families, out + "/db");
  Rng rng{seed * 0x9e3779b97f4a7c15ull + 0xde1};
  rng.next();
  every_kind(db, rng, 1200, 8);
  finish(db, options, families, out, default_gets(db, stats.get(), rng, 1200));
}

static void hits(uint64_t seed, const std::string& out) {
  auto stats = CreateDBStatistics();
  DBOptions options = db_options(stats);
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  ColumnFamilyOptions cf = small_levels(table);
  cf.merge_operator = std::make_shared<Append>();
  cf.optimize_filters_for_hits = true;
  cf.target_file_size_base = 8 << 10;
  cf.max_bytes_for_level_base = 16 << 10;
  std::vector<ColumnFamilyDescriptor> families = {{"default", cf}};
  Db db;
  db.open(options, families, out + "/db");
  Rng rng{seed * 0x9e3779b97f4a7c15ull + 0x417};
  rng.next();
  every_kind(db, rng, 1500, 6);
  finish(db, options, families, out, default_gets(db, stats.get(), rng, 1500));
}

static void hits_l0(uint64_t seed, const std::string& out) {
  auto stats = CreateDBStatistics();
  DBOptions options = db_options(stats);
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  ColumnFamilyOptions cf = small_levels(table);
  cf.optimize_filters_for_hits = true;
  cf.disable_auto_compactions = true;
  cf.write_buffer_size = 1 << 20;
  std::vector<ColumnFamilyDescriptor> families = {{"default", cf}};
  Db db;
  db.open(options, families, out + "/db");
  Rng rng{seed * 0x9e3779b97f4a7c15ull + 0x4170};
  rng.next();
  const int kSpace = 1500;
  WriteOptions write;
  for (int round = 1; round <= 3; round++) {
    for (int i = 0; i < 300; i++) {
      int id = int(rng.below(kSpace));
      check(db.db->Put(write, key_of(id), value_of(rng, id, round, 20)), "put");
    }
    db.flush();
  }
  finish(db, options, families, out, default_gets(db, stats.get(), rng, kSpace));
}

static void wal(uint64_t seed, const std::string& out) {
  auto stats = CreateDBStatistics();
  DBOptions options = db_options(stats);
  options.avoid_flush_during_shutdown = true;
  options.avoid_flush_during_recovery = true;
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  ColumnFamilyOptions cf = small_levels(table);
  cf.merge_operator = std::make_shared<Append>();
  cf.write_buffer_size = 1 << 20;  // the last writes stay in the memtable
  std::vector<ColumnFamilyDescriptor> families = {{"default", cf}};
  Db db;
  db.open(options, families, out + "/db");
  Rng rng{seed * 0x9e3779b97f4a7c15ull + 0x3a1};
  rng.next();
  const int kSpace = 1200;
  WriteOptions write;
  for (int round = 1; round <= 3; round++) {
    for (int i = 0; i < 700; i++) {
      int id = int(rng.below(kSpace));
      check(db.db->Put(write, key_of(id), value_of(rng, id, round, 20 + int(rng.below(40)))),
            "put");
    }
    db.flush();
    quiesce(db.db, db.handles);
  }
  // Left in the WAL: values (new ids among them), deletions, merge
  // operands, a range deletion, and values written again inside it.
  for (int i = 0; i < 300; i++) {
    int id = int(rng.below(kSpace + 200));
    int r = int(rng.below(100));
    if (r < 50) {
      check(db.db->Put(write, key_of(id), value_of(rng, id, 9, 30)), "put");
    } else if (r < 75) {
      check(db.db->Delete(write, key_of(id)), "delete");
    } else {
      check(db.db->Merge(write, key_of(id), "wal"), "merge");
    }
    if (i == 150) {
      std::string a = key_of(400), b = key_of(450);
      check(db.db->DeleteRange(write, db.db->DefaultColumnFamily(), a, b), "delete range");
    }
  }
  finish(db, options, families, out, default_gets(db, stats.get(), rng, kSpace + 200));
}

int main(int argc, char** argv) {
  Args args = parse_args("gen-rocksdb-deployed", argc, argv);
  if (args.mib) fail("--big is not taken here");
  namespace fs = std::filesystem;
  for (auto& [name, make] :
       std::vector<std::pair<std::string, void (*)(uint64_t, const std::string&)>>{
           {"blob", blob},
           {"comparator", comparator},
           {"timestamps", timestamps},
           {"extractor", extractor},
           {"deletions", deletions},
           {"hits", hits},
           {"hits-l0", hits_l0},
           {"wal", wal}}) {
    std::string dir = args.out + "/" + name;
    fs::create_directories(dir);
    make(args.seed, dir);
  }
  return 0;
}
