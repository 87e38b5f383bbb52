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

#include "../common/common.h"

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

static ColumnFamilyOptions bloom_levels() {
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  return small_levels(table);
}

// One database being written: its options, its families, its statistics
// and its random source (`salt` sets it apart from the others').
struct Run {
  std::string out;
  std::shared_ptr<Statistics> stats = CreateDBStatistics();
  DBOptions options;
  std::vector<ColumnFamilyDescriptor> families;
  Db db;
  Rng rng;

  Run(uint64_t seed, uint64_t salt, const std::string& dir,
      std::vector<ColumnFamilyDescriptor> cfs, void (*tweak)(DBOptions&) = nullptr)
      : out(dir), families(std::move(cfs)), rng{seed * 0x9e3779b97f4a7c15ull + salt} {
    rng.next();
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    options.error_if_exists = true;
    options.statistics = stats;
    options.max_background_jobs = 2;
    if (tweak) tweak(options);
    db.open(options, families, out + "/db");
  }

  // `count` rounds of `n` writes, each round flushed; `write(round, id)`
  // writes to one of the ids below `space`.
  template <typename Write>
  void rounds(int count, int n, int space, Write write) {
    for (int round = 1; round <= count; round++) {
      for (int i = 0; i < n; i++) write(round, int(rng.below(space)));
      db.flush();
      quiesce(db.db, db.handles);
    }
  }

  // Each probe's Get in each family, read with `read`.
  std::string gets(int space, const ReadOptions& read = ReadOptions()) {
    return answers(db, stats.get(), probe_keys(rng, space), [&](size_t f, const std::string& k) {
      std::string value;
      return found(db.db->Get(read, db.handles[f], k, &value), k);
    });
  }

  // Closes the database, reopens a copy, and requires the same files;
  // writes live.txt, gets.txt and (if not empty) blobs.txt.
  void finish(const std::string& gets) {
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
};

// A value of `len` bytes or so to `id`, round `round`, in family `f`.
static void put(Run& run, size_t f, int id, int round, int len) {
  check(run.db.db->Put(WriteOptions(), run.db.handles[f], key_of(id),
                       value_of(run.rng, id, round, len)),
        "put");
}

static void blob(uint64_t seed, const std::string& out) {
  ColumnFamilyOptions cf = bloom_levels();
  cf.target_file_size_base = 4 << 10;
  cf.max_bytes_for_level_base = 8 << 10;
  cf.enable_blob_files = true;
  cf.min_blob_size = 24;
  cf.blob_file_size = 16 << 10;
  cf.enable_blob_garbage_collection = true;
  cf.blob_garbage_collection_age_cutoff = 0.25;
  Run run(seed, 0xb10b, out, {{"default", cf}});
  const int kSpace = 1500;
  // Values of 8 to 80 bytes: those of 24 and more go to blob files.
  auto write = [&](int round, int id) {
    if (round > 1 && run.rng.below(10) == 0) {
      check(run.db.db->Delete(WriteOptions(), key_of(id)), "delete");
    } else {
      put(run, 0, id, round, 8 + int(run.rng.below(73)));
    }
  };
  run.rounds(2, 900, kSpace, write);
  // Part of the keys compacted down: their overwritten blobs are garbage.
  std::string lo = key_of(0), hi = key_of(kSpace / 2);
  Slice b(lo), e(hi);
  check(run.db.db->CompactRange(CompactRangeOptions(), &b, &e), "compact");
  run.rounds(2, 900, kSpace, [&](int round, int id) { write(round + 2, id); });
  run.finish(run.gets(kSpace));
}

static void comparator(uint64_t seed, const std::string& out) {
  static ReverseSuffix order;
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  table.partition_filters = true;
  table.index_type = BlockBasedTableOptions::kTwoLevelIndexSearch;
  table.metadata_block_size = 256;
  table.block_size = 512;
  ColumnFamilyOptions cf = small_levels(table);
  cf.comparator = &order;
  Run run(seed, 0xc0c0, out, {{"default", cf}});
  const int kSpace = 3000;
  run.rounds(4, 1200, kSpace, [&](int round, int id) {
    if (round > 2 && run.rng.below(10) == 0) {
      check(run.db.db->Delete(WriteOptions(), key_of(id)), "delete");
    } else {
      put(run, 0, id, round, 20 + int(run.rng.below(40)));
    }
  });
  run.finish(run.gets(kSpace));
}

static void timestamps(uint64_t seed, const std::string& out) {
  BlockBasedTableOptions partitioned;
  partitioned.filter_policy.reset(NewBloomFilterPolicy(10));
  partitioned.partition_filters = true;
  partitioned.index_type = BlockBasedTableOptions::kTwoLevelIndexSearch;
  partitioned.metadata_block_size = 256;
  partitioned.block_size = 512;
  ColumnFamilyOptions a = bloom_levels(), b = small_levels(partitioned);
  a.comparator = b.comparator = BytewiseComparatorWithU64Ts();
  Run run(seed, 0x7157, out, {{"default", a}, {"partitioned", b}});
  const int kSpace = 1500;
  uint64_t ts = 1000;
  run.rounds(4, 800, kSpace, [&](int round, int id) {
    for (size_t f = 0; f < run.db.handles.size(); f++) {
      // Timestamps rise with each write; some cross a byte (256, 65536).
      ts += 1 + run.rng.below(300);
      std::string t = fixed64(ts);
      if (round > 2 && run.rng.below(10) == 0) {
        check(run.db.db->Delete(WriteOptions(), run.db.handles[f], key_of(id), t), "delete");
      } else {
        check(run.db.db->Put(WriteOptions(), run.db.handles[f], key_of(id), t,
                             value_of(run.rng, id, round, 20 + int(run.rng.below(40)))),
              "put");
      }
    }
  });
  std::string newest = fixed64(~0ull);
  Slice read_ts(newest);
  ReadOptions read;
  read.timestamp = &read_ts;
  run.finish(run.gets(kSpace, read));
}

static void extractor(uint64_t seed, const std::string& out) {
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  table.whole_key_filtering = false;
  ColumnFamilyOptions cf = small_levels(table);
  cf.prefix_extractor = std::make_shared<UpToHundreds>();
  Run run(seed, 0xe7, out, {{"default", cf}});
  // Ids in a few hundreds only: the filters rule out the other hundreds.
  const int kSpace = 3000;
  run.rounds(3, 600, kSpace / 200, [&](int round, int hundred) {
    put(run, 0, hundred * 200 + int(run.rng.below(100)), round, 20 + int(run.rng.below(40)));
  });
  run.finish(run.gets(kSpace));
}

// Writes of every kind over `space` ids, in rounds each flushed: values
// (some wide-column entities), overwrites, deletions, single deletions of
// ids written once, merge operands, range deletions (some rewritten after);
// part of the keys compacted down after round 2, and the last round with
// automatic compactions off, to stay at level 0.
static void every_kind(Run& run, int space, int rounds) {
  WriteOptions write;
  DB* db = run.db.db;
  std::set<int> once;      // ids with one value, never overwritten or deleted
  std::set<int> entities;  // ids once entities: RocksDB 7.8 merges no operand into one
  auto one = [&](int round, int id) {
    std::string k = key_of(id), v = value_of(run.rng, id, round, 10 + int(run.rng.below(40)));
    int r = int(run.rng.below(100));
    if (round == 1 && r < 10) {
      WideColumns columns{{"a", v}, {"b", "column"}};
      check(db->PutEntity(write, db->DefaultColumnFamily(), k, columns), "put entity");
      entities.insert(id);
    } else if (round == 1 || r < 40) {
      check(db->Put(write, k, v), "put");
      if (round == 1) once.insert(id); else once.erase(id);
    } else if (r < 55) {
      check(db->Delete(write, k), "delete");
      once.erase(id);
    } else if (r < 60 && !once.empty()) {
      auto it = once.lower_bound(id);
      if (it == once.end()) it = once.begin();
      check(db->SingleDelete(write, key_of(*it)), "single delete");
      once.erase(it);
    } else if (r < 95 && !entities.count(id)) {
      check(db->Merge(write, k, "m" + std::to_string(round)), "merge");
      once.erase(id);
    } else if (r >= 95) {
      int lo = int(run.rng.below(space)), hi = lo + 5 + int(run.rng.below(30));
      std::string a = key_of(lo), b = key_of(hi);
      check(db->DeleteRange(write, db->DefaultColumnFamily(), a, b), "delete range");
      for (int x = lo; x < hi; x++) once.erase(x);
    }
  };
  run.rounds(2, 700, space, one);
  std::string lo = key_of(0), hi = key_of(space / 3);
  Slice b(lo), e(hi);
  check(db->CompactRange(CompactRangeOptions(), &b, &e), "compact");
  run.rounds(rounds - 3, 700, space, [&](int round, int id) { one(round + 2, id); });
  check(db->SetOptions({{"disable_auto_compactions", "true"}}), "set options");
  run.rounds(1, 700, space, [&](int, int id) { one(rounds, id); });
}

static ColumnFamilyOptions merging(bool hits) {
  ColumnFamilyOptions cf = bloom_levels();
  cf.merge_operator = std::make_shared<Append>();
  cf.target_file_size_base = 8 << 10;
  cf.max_bytes_for_level_base = 16 << 10;
  cf.optimize_filters_for_hits = hits;
  return cf;
}

static void deletions(uint64_t seed, const std::string& out) {
  Run run(seed, 0xde1, out, {{"default", merging(false)}});
  every_kind(run, 1200, 8);
  run.finish(run.gets(1200));
}

static void hits(uint64_t seed, const std::string& out) {
  Run run(seed, 0x417, out, {{"default", merging(true)}});
  every_kind(run, 1500, 6);
  run.finish(run.gets(1500));
}

static void hits_l0(uint64_t seed, const std::string& out) {
  ColumnFamilyOptions cf = bloom_levels();
  cf.optimize_filters_for_hits = true;
  cf.disable_auto_compactions = true;
  cf.write_buffer_size = 1 << 20;
  Run run(seed, 0x4170, out, {{"default", cf}});
  const int kSpace = 1500;
  run.rounds(3, 300, kSpace, [&](int round, int id) { put(run, 0, id, round, 20); });
  run.finish(run.gets(kSpace));
}

static void wal(uint64_t seed, const std::string& out) {
  ColumnFamilyOptions cf = merging(false);
  cf.write_buffer_size = 1 << 20;  // the last writes stay in the memtable
  Run run(seed, 0x3a1, out, {{"default", cf}}, [](DBOptions& options) {
    options.avoid_flush_during_shutdown = true;
    options.avoid_flush_during_recovery = true;
  });
  const int kSpace = 1200;
  run.rounds(3, 700, kSpace, [&](int round, int id) {
    put(run, 0, id, round, 20 + int(run.rng.below(40)));
  });
  // Left in the WAL: values (new ids among them), deletions, merge
  // operands, a range deletion, and values written again inside it.
  DB* db = run.db.db;
  for (int i = 0; i < 300; i++) {
    int id = int(run.rng.below(kSpace + 200));
    int r = int(run.rng.below(100));
    if (r < 50) {
      put(run, 0, id, 9, 30);
    } else if (r < 75) {
      check(db->Delete(WriteOptions(), key_of(id)), "delete");
    } else {
      check(db->Merge(WriteOptions(), key_of(id), "wal"), "merge");
    }
    if (i == 150) {
      std::string a = key_of(400), b = key_of(450);
      check(db->DeleteRange(WriteOptions(), db->DefaultColumnFamily(), a, b), "delete range");
    }
  }
  run.finish(run.gets(kSpace + 200));
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
