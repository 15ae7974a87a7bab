#include "edge/cache/entry_table.h"

#include <cstring>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "edge/cache/link_cache.h"

namespace shortener::edge::internal {

static_assert(sizeof(Entry) <= 40, "the slot is most of an entry's fixed cost");

HashedKey HashedKey::Of(absl::string_view key) {
  return HashedKey{key, absl::Hash<absl::string_view>{}(key)};
}

ResolveResult Entry::result() const {
  ResolveResult r;
  r.outcome = static_cast<ResolveOutcome>(outcome);
  r.redirect_status = redirect_status;
  r.location = location();
  return r;
}

size_t EntryTable::RefHash::operator()(const Ref& r) const {
  return HashedKey::Of((*entries)[r.slot].key()).hash;
}

bool EntryTable::RefEq::operator()(const Ref& a, const HashedKey& b) const {
  return (*entries)[a.slot].key() == b.key;
}

EntryTable::EntryTable() : index_(0, RefHash{&entries_}, RefEq{&entries_}) {}

Entry* EntryTable::Find(const HashedKey& key) {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->slot];
}

const Entry* EntryTable::Find(const HashedKey& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->slot];
}

bool EntryTable::Erase(const HashedKey& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  Remove(it);
  return true;
}

void EntryTable::Remove(Index::iterator it) {
  const size_t slot = it->slot;
  index_.erase(it);
  bytes_ -= LinkCache::EstimatedEntryBytes(entries_[slot].key(), entries_[slot].location());
  const size_t last = entries_.size() - 1;
  if (slot != last) {
    auto moved = FindSlot(last);
    entries_[slot] = std::move(entries_[last]);
    moved->slot = static_cast<uint32_t>(slot);
  }
  entries_.pop_back();
}

void EntryTable::Insert(const HashedKey& key, const ResolveResult& result,
                        absl::string_view location, int64_t fresh_until_ns, int64_t dead_at_ns) {
  Entry e;
  e.data = std::make_unique<char[]>(key.key.size() + location.size());
  std::memcpy(e.data.get(), key.key.data(), key.key.size());
  if (!location.empty()) {
    std::memcpy(e.data.get() + key.key.size(), location.data(), location.size());
  }
  e.key_size = static_cast<uint32_t>(key.key.size());
  e.location_size = static_cast<uint32_t>(location.size());
  e.fresh_until_ns = fresh_until_ns;
  e.dead_at_ns = dead_at_ns;
  e.redirect_status = static_cast<uint16_t>(result.redirect_status);
  e.outcome = static_cast<uint8_t>(result.outcome);
  entries_.push_back(std::move(e));
  size_t slot = entries_.size() - 1;
  // As in classic CLOCK, the new entry goes just behind the hand: it swaps
  // places with the entry under the hand (after an eviction, the one that
  // filled the victim's hole), which is judged at the end of this turn.
  if (hand_ < slot) {
    auto displaced = FindSlot(hand_);
    std::swap(entries_[hand_], entries_[slot]);
    displaced->slot = static_cast<uint32_t>(slot);
    slot = hand_;
  }
  hand_ = slot + 1;
  index_.insert(Ref{static_cast<uint32_t>(slot)});
  bytes_ += LinkCache::EstimatedEntryBytes(key.key, location);
}

bool EntryTable::EvictOne(int64_t now_ns) {
  // Terminates within one turn: every set bit is cleared once.
  for (;;) {
    if (hand_ >= entries_.size()) hand_ = 0;
    Entry& e = entries_[hand_];
    const bool dead = now_ns >= e.dead_at_ns;
    if (dead || !e.referenced) {
      // The hand stays on the hole, which the last entry now fills.
      Remove(FindSlot(hand_));
      return dead;
    }
    e.referenced = false;
    ++hand_;
  }
}

void EntryTable::Clear() {
  index_.clear();
  std::vector<Entry>().swap(entries_);  // frees the memory, unlike clear()
  bytes_ = 0;
  hand_ = 0;
}

absl::Status EntryTable::CheckConsistency() const {
  if (index_.size() != entries_.size()) {
    return absl::InternalError(
        absl::StrCat("index has ", index_.size(), " elements, entries ", entries_.size()));
  }
  size_t bytes = 0;
  for (size_t slot = 0; slot < entries_.size(); ++slot) {
    const Entry& e = entries_[slot];
    auto it = index_.find(HashedKey::Of(e.key()));
    if (it == index_.end() || it->slot != slot) {
      return absl::InternalError(absl::StrCat("key \"", e.key(), "\" not indexed at ", slot));
    }
    bytes += LinkCache::EstimatedEntryBytes(e.key(), e.location());
  }
  if (bytes != bytes_) {
    return absl::InternalError(absl::StrCat("bytes ", bytes_, " but entries sum to ", bytes));
  }
  return absl::OkStatus();
}

}  // namespace shortener::edge::internal
