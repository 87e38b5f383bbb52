// Writes a whole LevelDB database directory with LevelDB 1.23 itself
// (Debian's libleveldb-dev), and beside it LevelDB's own answers: which
// tables the final MANIFEST holds live (from the property leveldb.sstables)
// and what DB::Get says for a few hundred probe keys. These are the golden
// databases of testdata/db/leveldb-1.23/.
//
//   g++ -O2 -std=c++17 gen-leveldb-db.cc -o gen-leveldb-db -lleveldb
//   ./gen-leveldb-db --seed N OUT_DIR
//   ./gen-leveldb-db --seed N --big MB OUT_DIR
//
// OUT_DIR/db is the database, left exactly as LevelDB leaves it (CURRENT,
// MANIFEST-*, *.ldb, an empty *.log, LOCK, LOG, LOG.old). A Bloom filter
// policy of 10 bits per key, 64 KiB write buffers (max_file_size is asked
// for 32 KiB, but LevelDB clips it to 1 MiB): a few thousand keys
// `user:%08d`, written in rounds with overwrites and deletions, each round
// flushed by hand to its own table (at level 2, 1 or 0 as it overlaps),
// part of the key range compacted with CompactRange, then more writes, so
// tables lie at levels 0, 1 and 2. The run is deterministic.
//
// OUT_DIR/live.txt: one line per live table, in the property's order (by
// level, each level by smallest key, level 0 too):
// `LEVEL NUMBER FILE_SIZE SMALLEST_USER_KEY_HEX LARGEST_USER_KEY_HEX`.
// OUT_DIR/gets.txt: one line per probe key, in key order:
// `KEY_HEX found|notfound`, what DB::Get returned.
//
// Every write is flushed to a table (the log left empty), the database
// settled (no compaction pending) and closed: live.txt is the table set
// then, the final MANIFEST's (checked by reopening a copy). The probes read
// another copy: a Get charges seeks to tables, and a table out of seeks is
// compacted, which would change the database.
//
// With --big MB: default options but the Bloom filter (2 MiB tables, 4 MiB
// write buffers), random 16-byte keys (hex digits) and random incompressible
// 100-byte values until the live tables hold about MB MiB; no answer files.
// A benchmark database, not checked in.
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

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
#include <string>
#include <thread>
#include <vector>

#include "../common/common.h"

static void check(const leveldb::Status& s, const std::string& what) {
  if (!s.ok()) {
    fprintf(stderr, "gen-leveldb-db: %s: %s\n", what.c_str(), s.ToString().c_str());
    exit(1);
  }
}

[[noreturn]] static void fail(const std::string& what) { fail_as("gen-leveldb-db", what); }

// One table of the property leveldb.sstables.
struct Table {
  int level;
  uint64_t number, size;
  std::string smallest, largest;  // user keys
};

// LevelDB's EscapeString undone: bytes outside ' '..'~' are `\xNN`; nothing
// else is escaped (not `'`, not `\`), so a user key holding `\x` or `' @ `
// would be ambiguous. Ours hold neither; the parse re-escapes to be sure.
static std::string escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= ' ' && c <= '~') {
      out.push_back(char(c));
    } else {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

static std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
      out.push_back(char(strtoul(s.substr(i + 2, 2).c_str(), nullptr, 16)));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  if (escape(out) != s) fail("ambiguous escaped key in leveldb.sstables: " + s);
  return out;
}

// `'USER_KEY' @ SEQ : TYPE` at text[pos..]: the user key, pos moved past it.
static std::string parse_internal_key(const std::string& text, size_t& pos) {
  if (text[pos] != '\'') fail("leveldb.sstables: no key at: " + text.substr(pos));
  size_t end = text.find("' @ ", pos + 1);
  if (end == std::string::npos) fail("leveldb.sstables: unterminated key: " + text.substr(pos));
  std::string user = unescape(text.substr(pos + 1, end - pos - 1));
  pos = end + 4;
  size_t digits = pos;
  while (pos < text.size() && isdigit((unsigned char)text[pos])) pos++;
  if (pos == digits || text.compare(pos, 3, " : ") != 0) fail("leveldb.sstables: bad sequence");
  pos += 3;
  digits = pos;
  while (pos < text.size() && isdigit((unsigned char)text[pos])) pos++;
  if (pos == digits) fail("leveldb.sstables: bad type");
  return user;
}

// The property's text, e.g.
//   --- level 0 ---
//    13:6711['user:00000001' @ 1716 : 1 .. 'user:00002995' @ 1715 : 1]
//   --- level 1 ---
static std::vector<Table> parse_sstables(const std::string& text) {
  std::vector<Table> tables;
  int level = -1;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) fail("leveldb.sstables: no final newline");
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.compare(0, 10, "--- level ") == 0) {
      level = atoi(line.c_str() + 10);
      continue;
    }
    if (level < 0 || line.empty() || line[0] != ' ') fail("leveldb.sstables: bad line: " + line);
    Table t;
    t.level = level;
    char* end = nullptr;
    t.number = strtoull(line.c_str() + 1, &end, 10);
    if (*end != ':') fail("leveldb.sstables: bad line: " + line);
    t.size = strtoull(end + 1, &end, 10);
    if (*end != '[') fail("leveldb.sstables: bad line: " + line);
    size_t at = end + 1 - line.c_str();
    t.smallest = parse_internal_key(line, at);
    if (line.compare(at, 4, " .. ") != 0) fail("leveldb.sstables: bad line: " + line);
    at += 4;
    t.largest = parse_internal_key(line, at);
    if (line.compare(at, std::string::npos, "]") != 0) fail("leveldb.sstables: bad line: " + line);
    tables.push_back(t);
  }
  return tables;
}

static std::string property(leveldb::DB* db, const std::string& name) {
  std::string value;
  if (!db->GetProperty(name, &value)) fail("no property " + name);
  return value;
}

// Waits until no compaction is pending: level 0 below its trigger (4) and
// the table set unchanged for a while (levels >= 1 far below their sizes in
// the small databases; in --big ones, settled when nothing moves).
static std::string settle(leveldb::DB* db, int quiet_ms) {
  std::string last = property(db, "leveldb.sstables");
  auto since = std::chrono::steady_clock::now();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::string now = property(db, "leveldb.sstables");
    if (now != last) {
      last = now;
      since = std::chrono::steady_clock::now();
      continue;
    }
    bool l0_low = atoi(property(db, "leveldb.num-files-at-level0").c_str()) < 4;
    if (l0_low && std::chrono::steady_clock::now() - since > std::chrono::milliseconds(quiet_ms)) {
      return now;
    }
  }
}

// The memtable written to a table: CompactRange always flushes it first,
// then compacts nothing when the range (past every key) overlaps no table.
static void flush(leveldb::DB* db) {
  leveldb::Slice past("\xff\xff");
  db->CompactRange(&past, &past);
}

static std::string key_of(int id) {
  char buf[32];
  snprintf(buf, sizeof buf, "user:%08d", id);
  return buf;
}

static std::string value_of(Rng& rng, int id, int round) {
  std::string v = "v" + std::to_string(id) + "." + std::to_string(round) + ":";
  int n = 40 + int(rng.below(120));
  for (int i = 0; i < n; i++) v.push_back(char(' ' + rng.below(95)));
  return v;
}

static void open(const leveldb::Options& options, const std::string& path, leveldb::DB** db) {
  check(leveldb::DB::Open(options, path, db), "open " + path);
}

// Options for a new database whose tables hold `policy`'s filters.
static leveldb::Options new_database(const leveldb::FilterPolicy* policy) {
  leveldb::Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.filter_policy = policy;
  return options;
}

static int small(uint64_t seed, const std::string& out) {
  std::string path = out + "/db";
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  leveldb::Options options = new_database(policy.get());
  options.write_buffer_size = 64 << 10;
  options.max_file_size = 32 << 10;  // clipped to 1 MiB by LevelDB
  leveldb::DB* db = nullptr;
  open(options, path, &db);
  options.error_if_exists = false;

  Rng rng{seed * 0x9e3779b97f4a7c15ull + 0x1234567};
  rng.next();
  const int kSpace = 10000;  // ids 0..9999; user:00010000 and up never written
  std::map<int, bool> model;  // id -> present (false: deleted)
  std::set<int> overwritten;
  leveldb::WriteOptions write;
  auto put = [&](int id, int round) {
    check(db->Put(write, key_of(id), value_of(rng, id, round)), "put");
    if (model.count(id)) overwritten.insert(id);
    model[id] = true;
  };
  auto del = [&](int id) {
    check(db->Delete(write, key_of(id)), "delete");
    model[id] = false;
  };
  auto present = [&]() {
    std::vector<int> ids;
    for (auto& [id, live] : model)
      if (live) ids.push_back(id);
    return ids;
  };
  auto fresh = [&](int lo, int hi) {
    for (;;) {
      int id = lo + int(rng.below(hi - lo));
      if (!model.count(id)) return id;
    }
  };

  // n writes to ids in [lo, hi): new keys, overwrites and deletions.
  auto mix = [&](int lo, int hi, int n, int round, int overwrite, int erase) {
    for (int i = 0; i < n; i++) {
      std::vector<int> ids;
      for (auto it = model.lower_bound(lo); it != model.end() && it->first < hi; ++it)
        if (it->second) ids.push_back(it->first);
      int r = int(rng.below(100));
      if (!ids.empty() && r < overwrite) put(ids[rng.below(ids.size())], round);
      else if (!ids.empty() && r < overwrite + erase) del(ids[rng.below(ids.size())]);
      else put(fresh(lo, hi), round);
    }
  };
  // LevelDB clips max_file_size to at least 1 MiB, so compactions of a few
  // hundred KiB write one table each; the tables here come mostly from
  // flushes, each memtable flushed by hand. A flush lands at level 2 when it
  // overlaps nothing in levels 0..2, at level 1 when it overlaps level 2
  // alone, else at level 0 (PickLevelForMemTableOutput).
  // Round 1: 14 disjoint slices of the space in ascending order, new keys:
  // 14 tables at level 2.
  const int kSlices = 14;
  for (int c = 0; c < kSlices; c++) {
    mix(c * kSpace / kSlices, (c + 1) * kSpace / kSlices, 110 + int(rng.below(60)), 1, 0, 0);
    flush(db);
  }
  // Round 2: overwrites, deletions, new keys in 6 disjoint ranges, each
  // overlapping level 2 alone: 6 tables at level 1.
  for (int c = 0; c < 6; c++) {
    int lo = c * kSpace / 6 + int(rng.below(300)), hi = (c + 1) * kSpace / 6 - int(rng.below(300));
    mix(lo, hi, 100 + int(rng.below(60)), 2, 35, 20);
    flush(db);
  }
  // The lowest fifth of the space compacted: its level 1 tables and the
  // level 2 tables they overlap merged into one table at level 2.
  {
    std::string lo = key_of(0), hi = key_of(kSpace / 5 - 1);
    leveldb::Slice b(lo), e(hi);
    db->CompactRange(&b, &e);
  }
  // Closed and reopened: a new MANIFEST (the old one deleted) and LOG.old.
  delete db;
  open(options, path, &db);
  // Round 3: writes across the whole space, left at level 0 (they overlap
  // level 1): 3 tables, below level 0's compaction trigger (4).
  for (int pass = 0; pass < 3; pass++) {
    mix(0, kSpace, 120 + int(rng.below(40)), 3 + pass, 30, 15);
    flush(db);
  }
  // Settled (nothing pending: level 0 below its trigger, levels >= 1 far
  // below their sizes, no seeks charged yet) and closed: the final state.
  std::string text = settle(db, 1500);
  std::vector<Table> tables = parse_sstables(text);
  delete db;
  // Gets charge seeks to tables, and a table out of seeks is compacted (a
  // seek compaction): the probes read a copy, removed afterwards, so the
  // database stays as closed. Another copy, opened, checks the table set.
  namespace fs = std::filesystem;
  std::string copy = out + "/.db-copy";
  fs::remove_all(copy);
  fs::copy(path, copy);
  open(options, copy, &db);
  if (property(db, "leveldb.sstables") != text) fail("the reopened copy holds other tables");
  delete db;
  fs::remove_all(copy);
  fs::copy(path, copy);
  open(options, copy, &db);

  // The probe keys: present (some overwritten), deleted, never written
  // inside the space, and outside every table's range.
  std::set<std::string> probes;
  std::vector<int> live = present(), dead, over(overwritten.begin(), overwritten.end());
  for (auto& [id, is] : model)
    if (!is) dead.push_back(id);
  for (int i = 0; i < 80; i++) probes.insert(key_of(live[rng.below(live.size())]));
  for (int i = 0; i < 40; i++) probes.insert(key_of(over[rng.below(over.size())]));
  for (int i = 0; i < 70; i++) probes.insert(key_of(dead[rng.below(dead.size())]));
  for (int i = 0; i < 90; i++) {
    int id = int(rng.below(kSpace));
    if (!model.count(id)) probes.insert(key_of(id));
  }
  // Near misses: a written key with a byte added, or cut short.
  for (int i = 0; i < 15; i++) {
    std::string k = key_of(live[rng.below(live.size())]);
    probes.insert(k + char('0' + rng.below(10)));
    probes.insert(k.substr(0, k.size() - 1));
  }
  for (int i = 0; i < 15; i++) probes.insert(key_of(kSpace + int(rng.below(90000000))));
  for (const char* k : {"a", "user", "user:", "user:0", "user:~", "zzz", "\x01", "\xff\xfe",
                        "USER:00000001", "user:99999999"}) {
    probes.insert(k);
  }
  std::string answers;
  int found = 0;
  for (const std::string& key : probes) {
    std::string value;
    leveldb::Status s = db->Get(leveldb::ReadOptions(), key, &value);
    if (!s.ok() && !s.IsNotFound()) check(s, "get " + hex(key));
    // The model's answer, as a check of this program.
    bool expect = false;
    if (key.size() == 13 && key.compare(0, 5, "user:") == 0) {
      auto it = model.find(atoi(key.c_str() + 5));
      expect = it != model.end() && it->second && key_of(it->first) == key;
    }
    if (s.ok() != expect) fail("get " + key + " disagrees with the model");
    found += s.ok();
    answers += hex(key) + (s.ok() ? " found\n" : " notfound\n");
  }
  delete db;
  fs::remove_all(copy);

  std::ofstream(out + "/gets.txt") << answers;
  std::ofstream live_file(out + "/live.txt");
  std::map<int, int> per_level;
  uint64_t total = 0;
  for (const Table& t : tables) {
    live_file << t.level << " " << t.number << " " << t.size << " " << hex(t.smallest) << " "
              << hex(t.largest) << "\n";
    per_level[t.level]++;
    total += t.size;
  }
  printf("%zu tables, %llu bytes;", tables.size(), (unsigned long long)total);
  for (auto& [level, n] : per_level) printf(" L%d: %d", level, n);
  printf("; %zu probes, %d found\n", probes.size(), found);
  return 0;
}

static int big(uint64_t seed, uint64_t mib, const std::string& out) {
  std::string path = out + "/db";
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  leveldb::Options options = new_database(policy.get());
  leveldb::DB* db = nullptr;
  open(options, path, &db);
  auto start = std::chrono::steady_clock::now();
  Rng rng = big_rng(seed);
  uint64_t target = mib << 20, keys = 0, total = 0;
  std::vector<Table> tables;
  while (total < target) {
    for (int b = 0; b < 20; b++) {
      leveldb::WriteBatch batch;
      big_batch(rng, [&](const char* key, const char* value) {
        batch.Put(leveldb::Slice(key, 16), leveldb::Slice(value, 100));
      });
      check(db->Write(leveldb::WriteOptions(), &batch), "write");
      keys += 1000;
    }
    tables = parse_sstables(property(db, "leveldb.sstables"));
    total = 0;
    for (const Table& t : tables) total += t.size;
  }
  flush(db);
  tables = parse_sstables(settle(db, 3000));
  delete db;
  print_summary(keys, tables, start);
  return 0;
}

int main(int argc, char** argv) {
  Args args = parse_args("gen-leveldb-db", argc, argv);
  return args.mib > 0 ? big(args.seed, args.mib, args.out) : small(args.seed, args.out);
}
