// RocksDB 7.8's own answers for tables it did not write as they are: for
// each NAME.sst in DIR with NAME.keys (testkit/src/bin/craft-rocksdb.rs), the file
// is ingested into a DB and each key read with Get; the BLOOM_FILTER_USEFUL
// ticker says whether the filter ruled the key out.
//
//   g++ -std=c++17 -O1 answer-rocksdb.cc -lrocksdb -o answer-rocksdb
//   ./answer-rocksdb DIR
//
// Writes NAME.answers: `<key hex> written|unwritten may-match|absent|error`
// per key (`error`: Get failed, as for a table whose properties are out of
// order), or one line `ingest-error <message>` where RocksDB does not take
// the file at all.
#include <dirent.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace rocksdb;

static std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(char(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

static void answer(const std::string& dir, const std::string& name) {
  std::ifstream keys(dir + "/" + name + ".keys");
  std::string options_line;
  std::getline(keys, options_line);
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10));
  Options options;
  options.table_factory.reset(NewBlockBasedTableFactory(table));
  if (options_line.find("prefix=11") != std::string::npos) {
    options.prefix_extractor.reset(NewFixedPrefixTransform(11));
  }
  options.create_if_missing = true;
  options.statistics = CreateDBStatistics();
  std::string db_dir = dir + "/.db-" + name;
  DestroyDB(db_dir, options);
  DB* raw = nullptr;
  Status s = DB::Open(options, db_dir, &raw);
  if (!s.ok()) {
    fprintf(stderr, "answer-rocksdb: open db: %s\n", s.ToString().c_str());
    exit(1);
  }
  std::unique_ptr<DB> db(raw);
  std::ofstream out(dir + "/" + name + ".answers");
  IngestExternalFileOptions ingest;
  ingest.move_files = false;
  s = db->IngestExternalFile({dir + "/" + name + ".sst"}, ingest);
  if (!s.ok()) {
    std::string message = s.ToString();
    std::replace(message.begin(), message.end(), '\n', ' ');
    // The file named without its directory: the answers do not depend on
    // where they were made.
    for (size_t at; (at = message.find(dir + "/")) != std::string::npos;) {
      message.erase(at, dir.size() + 1);
    }
    out << "ingest-error " << message << "\n";
  } else {
    std::string line;
    while (std::getline(keys, line)) {
      std::istringstream words(line);
      std::string hex, written;
      words >> hex >> written;
      uint64_t before = options.statistics->getTickerCount(BLOOM_FILTER_USEFUL);
      std::string value;
      Status got = db->Get(ReadOptions(), unhex(hex), &value);
      bool ruled_out = options.statistics->getTickerCount(BLOOM_FILTER_USEFUL) > before;
      const char* answer = !got.ok() && !got.IsNotFound() ? "error" : ruled_out ? "absent" : "may-match";
      out << hex << " " << written << " " << answer << "\n";
    }
  }
  db.reset();
  DestroyDB(db_dir, options);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: answer-rocksdb DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    fprintf(stderr, "answer-rocksdb: cannot read %s\n", dir.c_str());
    return 1;
  }
  while (dirent* e = readdir(d)) {
    std::string file = e->d_name;
    if (file.size() > 4 && file.substr(file.size() - 4) == ".sst") names.push_back(file.substr(0, file.size() - 4));
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) answer(dir, name);
  return 0;
}
