// The storage of one link-cache shard (link_cache.h), internal to
// edge_cache: entries in a dense vector, an index of slot numbers that
// hashes and compares through the entries' own key bytes, and a CLOCK hand.
// It keeps the books (entry count, estimated bytes) but decides nothing:
// LinkCache sets lifetimes, enforces bounds and counts.
//
// Layout: an entry is a 40-byte slot plus one heap block holding the key
// then the location; the index costs 4 bytes per bucket plus a control byte.
// Removal moves the last slot into the hole, so the vector stays dense and
// the hand never walks over free slots.
//
// Thread safety: none; LinkCache holds the shard's mutex around every call.
// Not copyable or movable (the index refers to the slot vector).
#ifndef SHORTENER_EDGE_CACHE_ENTRY_TABLE_H_
#define SHORTENER_EDGE_CACHE_ENTRY_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "edge/http_status.h"

namespace shortener::edge::internal {

// A key with its hash, computed once for choosing the shard and the bucket.
struct HashedKey {
  static HashedKey Of(absl::string_view key);
  absl::string_view key;
  uint64_t hash;
};

// One cached answer.
struct Entry {
  std::unique_ptr<char[]> data;  // key bytes, then location bytes
  int64_t fresh_until_ns = 0;    // fresh while now < this
  int64_t dead_at_ns = 0;        // a miss once now >= this
  uint32_t key_size = 0;
  uint32_t location_size = 0;
  uint16_t redirect_status = 302;
  uint8_t outcome = 0;      // a ResolveOutcome (whose enum is int-sized)
  bool referenced = false;  // CLOCK's second chance: set by a hit

  absl::string_view key() const { return {data.get(), key_size}; }
  absl::string_view location() const { return {data.get() + key_size, location_size}; }
  // location views this entry's bytes.
  ResolveResult result() const;
};

class EntryTable {
 public:
  EntryTable();
  EntryTable(const EntryTable&) = delete;
  EntryTable& operator=(const EntryTable&) = delete;

  // The entry for `key`, or nullptr. Valid until the next non-const call.
  Entry* Find(const HashedKey& key);
  const Entry* Find(const HashedKey& key) const;

  // Erases the entry for `key`. Returns whether there was one.
  bool Erase(const HashedKey& key);

  // Adds an entry for `key`, which must not be present. `location` is stored
  // as given (LinkCache passes an empty one for outcomes other than kActive).
  // The entry starts unreferenced, just behind the hand (a full turn before
  // the hand judges it).
  void Insert(const HashedKey& key, const ResolveResult& result, absl::string_view location,
              int64_t fresh_until_ns, int64_t dead_at_ns);

  // Removes one entry: the first the hand meets that is dead at now_ns or
  // unreferenced, clearing reference bits on the way. Amortised O(1).
  // Requires size() > 0. Returns whether the entry removed was dead.
  bool EvictOne(int64_t now_ns);

  // Drops every entry and frees the memory.
  void Clear();

  size_t size() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }  // sum of LinkCache::EstimatedEntryBytes

  // Index and entries agree and bytes() is the sum over entries; OK or
  // kInternal naming the first mismatch. O(size()).
  absl::Status CheckConsistency() const;

  // Calls f(entry) for each entry (for checks).
  template <typename F>
  void ForEach(F f) const {
    for (const Entry& e : entries_) f(e);
  }

 private:
  // The index holds slot numbers only. Mutable: when an entry moves to
  // another slot, its index element is re-pointed in place; the key, and so
  // hash and equality, stay the same.
  struct Ref {
    mutable uint32_t slot;
  };
  struct RefHash {
    using is_transparent = void;
    size_t operator()(const HashedKey& k) const { return k.hash; }
    size_t operator()(const Ref& r) const;
    const std::vector<Entry>* entries;
  };
  struct RefEq {
    using is_transparent = void;
    // Keys are unique in the table, so equal slots mean equal keys.
    bool operator()(const Ref& a, const Ref& b) const { return a.slot == b.slot; }
    bool operator()(const Ref& a, const HashedKey& b) const;
    bool operator()(const HashedKey& a, const Ref& b) const { return (*this)(b, a); }
    const std::vector<Entry>* entries;
  };
  using Index = absl::flat_hash_set<Ref, RefHash, RefEq>;

  Index::iterator FindSlot(size_t slot) { return index_.find(Ref{static_cast<uint32_t>(slot)}); }
  void Remove(Index::iterator it);

  std::vector<Entry> entries_;
  Index index_;
  size_t hand_ = 0;  // the slot the CLOCK hand judges next
  size_t bytes_ = 0;
};

}  // namespace shortener::edge::internal

#endif  // SHORTENER_EDGE_CACHE_ENTRY_TABLE_H_
