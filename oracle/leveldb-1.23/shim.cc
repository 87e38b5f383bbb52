// A C interface to the real LevelDB (Debian's libleveldb-dev, LevelDB 1.23):
// its Bloom FilterPolicy and its filter-block classes, for differential tests
// and for writing golden vectors. Nothing here computes a filter itself.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "leveldb/comparator.h"
#include "leveldb/db.h"
#include "leveldb/env.h"
#include "leveldb/filter_policy.h"
#include "leveldb/options.h"
#include "leveldb/slice.h"
#include "leveldb/table.h"
#include "leveldb/table_builder.h"

namespace leveldb {
// table/filter_block.h is not installed; libleveldb.a exports the classes.
// These declarations repeat LevelDB 1.23's, members and all, so that objects
// made here have the layout the library's code expects.
class FilterBlockBuilder {
 public:
  explicit FilterBlockBuilder(const FilterPolicy*);
  FilterBlockBuilder(const FilterBlockBuilder&) = delete;
  FilterBlockBuilder& operator=(const FilterBlockBuilder&) = delete;
  void StartBlock(uint64_t block_offset);
  void AddKey(const Slice& key);
  Slice Finish();

 private:
  void GenerateFilter();
  const FilterPolicy* policy_;
  std::string keys_;
  std::vector<size_t> start_;
  std::string result_;
  std::vector<Slice> tmp_keys_;
  std::vector<uint32_t> filter_offsets_;
};

class FilterBlockReader {
 public:
  FilterBlockReader(const FilterPolicy* policy, const Slice& contents);
  bool KeyMayMatch(uint64_t block_offset, const Slice& key);

 private:
  const FilterPolicy* policy_;
  const char* data_;
  const char* offset_;
  size_t num_;
  size_t base_lg_;
};
}  // namespace leveldb

namespace leveldb {
// Table::InternalGet (the lookup that consults the filter before reading a data
// block) is private to Table and its friend TableCache. This class takes the
// friend's name to call it; it adds a function LevelDB's TableCache does not
// have and is never linked against LevelDB's own.
class TableCache {
 public:
  static Status Get(Table* table, const Slice& key, void* arg,
                    void (*handle_result)(void*, const Slice&, const Slice&)) {
    return table->InternalGet(ReadOptions(), key, arg, handle_result);
  }
};
}  // namespace leveldb

using leveldb::FilterPolicy;
using leveldb::Slice;

namespace {
struct Reader {
  std::string contents;
  leveldb::FilterBlockReader reader;
  Reader(const FilterPolicy* p, const char* data, size_t len)
      : contents(data, len), reader(p, Slice(contents)) {}
};

// Copies a std::string into memory the caller frees with ldb_free.
void export_bytes(const std::string& s, uint8_t** out, size_t* out_len) {
  *out_len = s.size();
  *out = static_cast<uint8_t*>(std::malloc(s.size() == 0 ? 1 : s.size()));
  std::memcpy(*out, s.data(), s.size());
}

std::vector<Slice> slices(const uint8_t* const* keys, const size_t* lens, size_t n) {
  std::vector<Slice> v;
  v.reserve(n);
  for (size_t i = 0; i < n; i++) v.emplace_back(reinterpret_cast<const char*>(keys[i]), lens[i]);
  return v;
}
}  // namespace

namespace {
// The Bloom policy as LevelDB <= 1.17 wrote it: util/bloom.cc of 1.23 with the
// hash of util/hash.cc before 1.18, whose tail bytes were plain (signed on x86)
// chars. Written here, not taken from leveldb-filter, so that tables made with
// it test that crate rather than repeat it. Names: "leveldb.BuiltinBloomFilter"
// or "rocksdb.BuiltinBloomFilter".
class LegacyBloom : public FilterPolicy {
 public:
  LegacyBloom(int bits_per_key, const char* name) : bits_per_key_(bits_per_key), name_(name) {
    k_ = static_cast<size_t>(bits_per_key * 0.69);
    if (k_ < 1) k_ = 1;
    if (k_ > 30) k_ = 30;
  }
  const char* Name() const override { return name_; }

  static uint32_t Hash(const char* data, size_t n, uint32_t seed) {
    const uint32_t m = 0xc6a4a793;
    const uint32_t r = 24;
    const char* limit = data + n;
    uint32_t h = seed ^ (n * m);
    while (data + 4 <= limit) {
      uint32_t w;
      std::memcpy(&w, data, 4);  // little-endian hosts only, as the generator runs
      data += 4;
      h += w;
      h *= m;
      h ^= (h >> 16);
    }
    const signed char* tail = reinterpret_cast<const signed char*>(data);
    switch (limit - data) {
      case 3:
        h += static_cast<uint32_t>(static_cast<int32_t>(tail[2])) << 16;
        [[fallthrough]];
      case 2:
        h += static_cast<uint32_t>(static_cast<int32_t>(tail[1])) << 8;
        [[fallthrough]];
      case 1:
        h += static_cast<uint32_t>(static_cast<int32_t>(tail[0]));
        h *= m;
        h ^= (h >> r);
        break;
    }
    return h;
  }

  void CreateFilter(const Slice* keys, int n, std::string* dst) const override {
    size_t bits = n * bits_per_key_;
    if (bits < 64) bits = 64;
    size_t bytes = (bits + 7) / 8;
    bits = bytes * 8;
    const size_t init_size = dst->size();
    dst->resize(init_size + bytes, 0);
    dst->push_back(static_cast<char>(k_));
    char* array = &(*dst)[init_size];
    for (int i = 0; i < n; i++) {
      uint32_t h = Hash(keys[i].data(), keys[i].size(), 0xbc9f1d34);
      const uint32_t delta = (h >> 17) | (h << 15);
      for (size_t j = 0; j < k_; j++) {
        const uint32_t bitpos = h % bits;
        array[bitpos / 8] |= (1 << (bitpos % 8));
        h += delta;
      }
    }
  }

  bool KeyMayMatch(const Slice& key, const Slice& bloom_filter) const override {
    const size_t len = bloom_filter.size();
    if (len < 2) return false;
    const char* array = bloom_filter.data();
    const size_t bits = (len - 1) * 8;
    const size_t k = array[len - 1];
    if (k > 30) return true;
    uint32_t h = Hash(key.data(), key.size(), 0xbc9f1d34);
    const uint32_t delta = (h >> 17) | (h << 15);
    for (size_t j = 0; j < k; j++) {
      const uint32_t bitpos = h % bits;
      if ((array[bitpos / 8] & (1 << (bitpos % 8))) == 0) return false;
      h += delta;
    }
    return true;
  }

 private:
  int bits_per_key_;
  size_t k_;
  const char* name_;
};

// LevelDB 1.23's own Bloom policy under another name: goleveldb writes the
// unsigned hash under the old name "leveldb.BuiltinBloomFilter".
class RenamedPolicy : public FilterPolicy {
 public:
  RenamedPolicy(const FilterPolicy* inner, const char* name) : inner_(inner), name_(name) {}
  ~RenamedPolicy() override { delete inner_; }
  const char* Name() const override { return name_; }
  void CreateFilter(const Slice* keys, int n, std::string* dst) const override { inner_->CreateFilter(keys, n, dst); }
  bool KeyMayMatch(const Slice& key, const Slice& filter) const override { return inner_->KeyMayMatch(key, filter); }

 private:
  const FilterPolicy* inner_;
  const char* name_;
};

// Policy kinds across the C interface.
enum { kNoFilter = 0, kBloom2 = 1, kLegacyLevelDB = 2, kLegacyRocksDB = 3, kGoLevelDB = 4 };

const FilterPolicy* make_policy(int kind, int bits_per_key) {
  switch (kind) {
    case kBloom2: return leveldb::NewBloomFilterPolicy(bits_per_key);
    case kLegacyLevelDB: return new LegacyBloom(bits_per_key, "leveldb.BuiltinBloomFilter");
    case kLegacyRocksDB: return new LegacyBloom(bits_per_key, "rocksdb.BuiltinBloomFilter");
    case kGoLevelDB: return new RenamedPolicy(leveldb::NewBloomFilterPolicy(bits_per_key), "leveldb.BuiltinBloomFilter");
    default: return nullptr;
  }
}

// The comparator of a database's tables: db/dbformat.h's InternalKeyComparator
// over the bytewise comparator (user keys ascending, then the 8-byte tag
// descending). Only Compare is used when reading.
class InternalComparator : public leveldb::Comparator {
 public:
  const char* Name() const override { return "leveldb.InternalKeyComparator"; }
  int Compare(const Slice& a, const Slice& b) const override {
    int r = Slice(a.data(), a.size() - 8).compare(Slice(b.data(), b.size() - 8));
    if (r != 0) return r;
    uint64_t ta, tb;
    std::memcpy(&ta, a.data() + a.size() - 8, 8);
    std::memcpy(&tb, b.data() + b.size() - 8, 8);
    return ta > tb ? -1 : ta < tb ? +1 : 0;
  }
  void FindShortestSeparator(std::string*, const Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

// Wraps a policy to see what the table lookup asks it: whether the filter was
// consulted and what it answered. `always_true` answers true (so the lookup
// goes on to read the data block, which shows the block's offset). With
// `strip_tag`, it is db/dbformat.cc's InternalFilterPolicy.
class RecordingPolicy : public FilterPolicy {
 public:
  RecordingPolicy(const FilterPolicy* inner, bool strip_tag, bool always_true)
      : inner_(inner), strip_tag_(strip_tag), always_true_(always_true) {}
  const char* Name() const override { return inner_->Name(); }
  void CreateFilter(const Slice*, int, std::string*) const override { std::abort(); }
  bool KeyMayMatch(const Slice& key, const Slice& filter) const override {
    Slice k = strip_tag_ ? Slice(key.data(), key.size() - 8) : key;
    called = true;
    answer = always_true_ || inner_->KeyMayMatch(k, filter);
    return answer;
  }
  mutable bool called = false;
  mutable bool answer = false;

 private:
  const FilterPolicy* inner_;
  bool strip_tag_;
  bool always_true_;
};

// Records the offsets the table reads from its file.
class RecordingFile : public leveldb::RandomAccessFile {
 public:
  explicit RecordingFile(leveldb::RandomAccessFile* base) : base_(base) {}
  ~RecordingFile() override { delete base_; }
  leveldb::Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    reads.push_back(offset);
    return base_->Read(offset, n, result, scratch);
  }
  mutable std::vector<uint64_t> reads;

 private:
  leveldb::RandomAccessFile* base_;
};

void ignore_result(void*, const Slice&, const Slice&) {}

// Keys prepared once for timing loops, and a reused output buffer.
struct KeySet {
  std::vector<Slice> keys;
  std::string out;
};

// One Table::InternalGet of `key` through a recording policy; fills what the
// lookup did. Returns 0, or -1 if the table did not open.
int lookup(const char* path, int kind, bool internal, const Slice& key, bool always_true, bool* filter_called,
           bool* filter_answer, std::vector<uint64_t>* reads, bool* failed) {
  leveldb::Env* env = leveldb::Env::Default();
  uint64_t size = 0;
  leveldb::RandomAccessFile* raw = nullptr;
  if (!env->GetFileSize(path, &size).ok() || !env->NewRandomAccessFile(path, &raw).ok()) return -1;
  RecordingFile file(raw);
  const FilterPolicy* inner = make_policy(kind, 10);
  RecordingPolicy* policy = inner ? new RecordingPolicy(inner, internal, always_true) : nullptr;
  InternalComparator icmp;
  leveldb::Options options;
  options.filter_policy = policy;
  if (internal) options.comparator = &icmp;
  leveldb::Table* table = nullptr;
  int rc = -1;
  if (leveldb::Table::Open(options, &file, size, &table).ok()) {
    file.reads.clear();
    *failed = !leveldb::TableCache::Get(table, key, nullptr, ignore_result).ok();
    *filter_called = policy && policy->called;
    *filter_answer = policy && policy->answer;
    *reads = file.reads;
    rc = 0;
  }
  delete table;
  delete policy;
  delete inner;
  return rc;
}
}  // namespace

extern "C" {
void ldb_free(void* p) { std::free(p); }

const FilterPolicy* ldb_bloom_new(int bits_per_key) { return leveldb::NewBloomFilterPolicy(bits_per_key); }
void ldb_policy_free(const FilterPolicy* p) { delete p; }
const char* ldb_policy_name(const FilterPolicy* p) { return p->Name(); }

void ldb_create_filter(const FilterPolicy* p, const uint8_t* const* keys, const size_t* lens, size_t n,
                       uint8_t** out, size_t* out_len) {
  std::vector<Slice> v = slices(keys, lens, n);
  std::string dst;
  p->CreateFilter(v.empty() ? nullptr : v.data(), static_cast<int>(n), &dst);
  export_bytes(dst, out, out_len);
}

bool ldb_key_may_match(const FilterPolicy* p, const uint8_t* key, size_t key_len, const uint8_t* filter,
                       size_t filter_len) {
  return p->KeyMayMatch(Slice(reinterpret_cast<const char*>(key), key_len),
                        Slice(reinterpret_cast<const char*>(filter), filter_len));
}

leveldb::FilterBlockBuilder* ldb_block_builder_new(const FilterPolicy* p) { return new leveldb::FilterBlockBuilder(p); }
void ldb_block_builder_start(leveldb::FilterBlockBuilder* b, uint64_t offset) { b->StartBlock(offset); }
void ldb_block_builder_add(leveldb::FilterBlockBuilder* b, const uint8_t* key, size_t len) {
  b->AddKey(Slice(reinterpret_cast<const char*>(key), len));
}
void ldb_block_builder_finish(leveldb::FilterBlockBuilder* b, uint8_t** out, size_t* out_len) {
  export_bytes(b->Finish().ToString(), out, out_len);
}
void ldb_block_builder_free(leveldb::FilterBlockBuilder* b) { delete b; }

Reader* ldb_block_reader_new(const FilterPolicy* p, const uint8_t* contents, size_t len) {
  return new Reader(p, reinterpret_cast<const char*>(contents), len);
}
bool ldb_block_reader_may_match(Reader* r, uint64_t offset, const uint8_t* key, size_t len) {
  return r->reader.KeyMayMatch(offset, Slice(reinterpret_cast<const char*>(key), len));
}
void ldb_block_reader_free(Reader* r) { delete r; }

// Writes a table with LevelDB's own TableBuilder; keys must be sorted and
// distinct. Returns 0, or -1 with a message on stderr.
int ldb_write_table(const char* path, int kind, int bits_per_key, int block_size, int restart_interval,
                    int snappy, const uint8_t* const* keys, const size_t* key_lens, const uint8_t* const* values,
                    const size_t* value_lens, size_t n) {
  const FilterPolicy* policy = make_policy(kind, bits_per_key);
  leveldb::Options options;
  options.filter_policy = policy;
  options.block_size = block_size;
  options.block_restart_interval = restart_interval;
  options.compression = snappy ? leveldb::kSnappyCompression : leveldb::kNoCompression;
  leveldb::WritableFile* file = nullptr;
  leveldb::Status s = leveldb::Env::Default()->NewWritableFile(path, &file);
  if (s.ok()) {
    leveldb::TableBuilder builder(options, file);
    for (size_t i = 0; i < n; i++) {
      builder.Add(Slice(reinterpret_cast<const char*>(keys[i]), key_lens[i]),
                  Slice(reinterpret_cast<const char*>(values[i]), value_lens[i]));
    }
    s = builder.Finish();
    if (s.ok()) s = file->Close();
  }
  delete file;
  delete policy;
  if (!s.ok()) std::fprintf(stderr, "ldb_write_table: %s\n", s.ToString().c_str());
  return s.ok() ? 0 : -1;
}

// Writes a database in `dir` (Put each key, Delete every `delete_every`th,
// then compacts everything): its .ldb files hold internal keys and a filter
// made through InternalFilterPolicy. Returns 0, or -1 with a message on stderr.
int ldb_write_db(const char* dir, int kind, int bits_per_key, int block_size, int snappy,
                 const uint8_t* const* keys, const size_t* key_lens, const uint8_t* const* values,
                 const size_t* value_lens, size_t n, size_t delete_every) {
  const FilterPolicy* policy = make_policy(kind, bits_per_key);
  leveldb::Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  options.filter_policy = policy;
  options.block_size = block_size;
  options.compression = snappy ? leveldb::kSnappyCompression : leveldb::kNoCompression;
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(options, dir, &db);
  for (size_t i = 0; s.ok() && i < n; i++) {
    Slice key(reinterpret_cast<const char*>(keys[i]), key_lens[i]);
    s = db->Put(leveldb::WriteOptions(), key, Slice(reinterpret_cast<const char*>(values[i]), value_lens[i]));
    if (s.ok() && delete_every && i % delete_every == 0) s = db->Delete(leveldb::WriteOptions(), key);
  }
  if (s.ok()) db->CompactRange(nullptr, nullptr);
  delete db;
  delete policy;
  if (!s.ok()) std::fprintf(stderr, "ldb_write_db: %s\n", s.ToString().c_str());
  return s.ok() ? 0 : -1;
}

// Opens the database in `dir` (a Bloom policy of `bits_per_key`, as its
// writer used) and Gets each key: how many it finds with the value given,
// or -1 if it does not open.
long ldb_db_count_found(const char* dir, int bits_per_key, const uint8_t* const* keys,
                        const size_t* key_lens, const uint8_t* const* values,
                        const size_t* value_lens, size_t n) {
  const FilterPolicy* policy = leveldb::NewBloomFilterPolicy(bits_per_key);
  leveldb::Options options;
  options.filter_policy = policy;
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(options, dir, &db);
  if (!s.ok()) {
    std::fprintf(stderr, "ldb_db_count_found: %s\n", s.ToString().c_str());
    delete policy;
    return -1;
  }
  long found = 0;
  for (size_t i = 0; i < n; i++) {
    std::string value;
    Slice key(reinterpret_cast<const char*>(keys[i]), key_lens[i]);
    if (db->Get(leveldb::ReadOptions(), key, &value).ok() &&
        value == std::string(reinterpret_cast<const char*>(values[i]), value_lens[i])) {
      found++;
    }
  }
  delete db;
  delete policy;
  return found;
}

// What LevelDB's Table::InternalGet does for `key` before reading a data
// block: *offset gets the data block the index picks (*has_offset = 0 when the
// key sorts after the last one, or the lookup failed before reading a block),
// *may_match the filter's answer, *corrupt whether the lookup failed (its
// status not ok) without reading a data block: a corrupt index block or a
// value that is not a block handle. For a database's table (internal != 0)
// the key is a user key, looked up with the largest sequence number as
// DB::Get does. Returns 0, or -1 if the table did not open.
int ldb_table_probe(const char* path, int kind, int internal, const uint8_t* key, size_t key_len, uint64_t* offset,
                    int* has_offset, int* may_match, int* corrupt) {
  std::string k(reinterpret_cast<const char*>(key), key_len);
  if (internal) {
    uint64_t tag = (((uint64_t{1} << 56) - 1) << 8) | 1;  // kMaxSequenceNumber, kValueTypeForSeek
    k.append(reinterpret_cast<const char*>(&tag), 8);
  }
  bool called = false, answer = false, failed = false;
  std::vector<uint64_t> reads;
  // First pass: a filter that always answers true, so the data block is read
  // and its offset seen (no block cache is configured).
  if (lookup(path, kind, internal, Slice(k), true, &called, &answer, &reads, &failed) != 0) return -1;
  *has_offset = !reads.empty();
  *offset = reads.empty() ? 0 : reads[0];
  *corrupt = reads.empty() && failed;
  if (lookup(path, kind, internal, Slice(k), false, &called, &answer, &reads, &failed) != 0) return -1;
  *may_match = *has_offset && (!called || answer);
  return 0;
}

// Timing loops for the comparison bench: the per-key loops run here, in C++,
// as an engine built on LevelDB runs them.
KeySet* ldb_keyset_new(const uint8_t* const* keys, const size_t* lens, size_t n) {
  KeySet* ks = new KeySet;
  ks->keys = slices(keys, lens, n);
  return ks;
}
void ldb_keyset_free(KeySet* ks) { delete ks; }
void ldb_keyset_output(const KeySet* ks, const uint8_t** out, size_t* out_len) {
  *out = reinterpret_cast<const uint8_t*>(ks->out.data());
  *out_len = ks->out.size();
}

// CreateFilter over all the keys, into the key set's buffer; returns its length.
size_t ldb_bench_create(const FilterPolicy* p, KeySet* ks) {
  ks->out.clear();
  p->CreateFilter(ks->keys.data(), static_cast<int>(ks->keys.size()), &ks->out);
  return ks->out.size();
}

// KeyMayMatch for each key; returns how many may match.
size_t ldb_bench_query(const FilterPolicy* p, const KeySet* ks, const uint8_t* filter, size_t len) {
  Slice f(reinterpret_cast<const char*>(filter), len);
  size_t matches = 0;
  for (const Slice& key : ks->keys) matches += p->KeyMayMatch(key, f);
  return matches;
}

// An engine's Get through its levels: each key probed against each of `n`
// filters (one table per level), KeyMayMatch every time. Returns how many
// (key, filter) pairs may match.
size_t ldb_bench_levels(const FilterPolicy* p, const KeySet* ks, const uint8_t* const* filters,
                        const size_t* lens, size_t n) {
  std::vector<Slice> fs;
  for (size_t i = 0; i < n; i++) fs.emplace_back(reinterpret_cast<const char*>(filters[i]), lens[i]);
  size_t matches = 0;
  for (const Slice& key : ks->keys) {
    for (const Slice& f : fs) matches += p->KeyMayMatch(key, f);
  }
  return matches;
}

// A filter block for the keys cut into data blocks of `keys_per_block`, block
// i at offset i * stride; into the key set's buffer. Returns its length.
size_t ldb_bench_block(const FilterPolicy* p, KeySet* ks, size_t keys_per_block, uint64_t stride) {
  leveldb::FilterBlockBuilder builder(p);
  // Block by block, as the Rust drivers of benches/compare.rs walk the keys.
  const size_t n = ks->keys.size();
  for (size_t first = 0, block = 0; first < n; first += keys_per_block, block++) {
    builder.StartBlock(block * stride);
    const size_t end = std::min(n, first + keys_per_block);
    for (size_t i = first; i < end; i++) builder.AddKey(ks->keys[i]);
  }
  ks->out = builder.Finish().ToString();
  return ks->out.size();
}
}
