// A C interface to the real LevelDB (Debian's libleveldb-dev, LevelDB 1.23):
// its Bloom FilterPolicy and its filter-block classes, for differential tests
// and for writing golden vectors. Nothing here computes a filter itself.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "leveldb/filter_policy.h"
#include "leveldb/slice.h"

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
}
