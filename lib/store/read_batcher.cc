#include "lib/store/read_batcher.h"

#include <algorithm>
#include <exception>
#include <future>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace shortener::store {
namespace {

using Links = absl::StatusOr<std::vector<absl::StatusOr<Link>>>;

// get() (a store call), with an exception that escapes it failing the whole
// batch: on a reader thread it would otherwise end the process, and its
// callers would never be answered. A result of the wrong length is INTERNAL.
template <typename Get>
Links GetNoThrow(Get get, size_t keys) {
  std::string what;
  try {
    Links links = get();
    if (links.ok() && links->size() != keys) {
      return absl::InternalError(absl::StrCat("get links: the store returned ", links->size(),
                                              " results for ", keys, " keys"));
    }
    return links;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "not a std::exception";
  }
  return absl::InternalError(absl::StrCat("get links: unexpected exception: ", what));
}

batching::AdaptiveBatcherOptions BatcherOptions(const ReadBatchOptions& options) {
  batching::AdaptiveBatcherOptions batcher;
  batcher.max_batch = options.max_batch;
  batcher.max_in_flight = options.reader_threads;
  batcher.max_queued = options.max_queued;
  return batcher;
}

}  // namespace

ReadBatcher::ReadBatcher(LinkStore* store, ReadBatchOptions options)
    : reader_(store), batcher_(BatcherOptions(options), &reader_) {}

void ReadBatcher::GetById(int64_t id, Done done) {
  batcher_.Submit(Pending{LinkKey::Id(id), std::move(done)});
}

void ReadBatcher::GetByAlias(std::string alias, Done done) {
  batcher_.Submit(Pending{LinkKey::Alias(std::move(alias)), std::move(done)});
}

void ReadBatcher::GetMany(std::vector<LinkKey> keys, ManyDone done) {
  if (keys.empty()) {
    done({});
    return;
  }
  // Every slot exists before any look-up is queued: answers on different
  // reader threads each fill their own element; the last one calls done.
  struct Group {
    Group(size_t n, ManyDone done) : links(n), remaining(n), done(std::move(done)) {}
    std::vector<absl::StatusOr<Link>> links;
    std::atomic<size_t> remaining;
    ManyDone done;
  };
  auto group = std::make_shared<Group>(keys.size(), std::move(done));
  std::vector<Pending> pending;
  pending.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    pending.push_back(Pending{std::move(keys[i]), [group, i](absl::StatusOr<Link> link) {
                                group->links[i] = std::move(link);
                                if (group->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                                  group->done(std::move(group->links));
                                }
                              }});
  }
  batcher_.SubmitGroup(std::move(pending));
}

void ReadBatcher::Reader::Refuse(absl::Span<Pending> lookups, const batching::Refusal& why) {
  absl::Status status;
  switch (why.reason) {
    case batching::Refusal::Reason::kQueueFull:
      status = absl::ResourceExhaustedError(absl::StrCat("read batcher is full: ", why.max_queued,
                                                         " look-ups are waiting; retry later"));
      break;
    case batching::Refusal::Reason::kShuttingDown:
      status = absl::UnavailableError("read batcher is shutting down");
      break;
    case batching::Refusal::Reason::kExpired:  // look-ups carry no deadline
      status = absl::DeadlineExceededError("look-up deadline passed before it was sent");
      break;
  }
  for (Pending& p : lookups) p.done(status);
}

absl::StatusOr<Link> ReadBatcher::GetByIdAndWait(int64_t id) {
  std::promise<absl::StatusOr<Link>> result;
  GetById(id, [&](absl::StatusOr<Link> r) { result.set_value(std::move(r)); });
  return result.get_future().get();
}

absl::StatusOr<Link> ReadBatcher::GetByAliasAndWait(std::string alias) {
  std::promise<absl::StatusOr<Link>> result;
  GetByAlias(std::move(alias), [&](absl::StatusOr<Link> r) { result.set_value(std::move(r)); });
  return result.get_future().get();
}

ReadBatcher::Stats ReadBatcher::GetStats() const {
  const auto batches = batcher_.GetStats();
  Stats stats;
  stats.batches = static_cast<int64_t>(batches.batches);
  stats.lookups = static_cast<int64_t>(batches.items);
  stats.queries = reader_.queries.load(std::memory_order_relaxed);
  stats.refused = static_cast<int64_t>(batches.refused_queue_full);
  stats.queued = static_cast<int64_t>(batches.queued);
  stats.batch_sizes = batches.batch_sizes;
  stats.queue_wait_seconds = batches.queue_wait_seconds;
  return stats;
}

void ReadBatcher::Reader::Run(std::vector<Pending> batch) {
  // The same key asked twice (two edges missing one code) is looked up once.
  std::vector<int64_t> ids;
  std::vector<std::string> aliases;
  absl::flat_hash_map<int64_t, size_t> id_slot;
  absl::flat_hash_map<std::string, size_t> alias_slot;
  for (const Pending& p : batch) {
    if (!p.key.by_alias) {
      if (id_slot.emplace(p.key.id, ids.size()).second) ids.push_back(p.key.id);
    } else if (alias_slot.emplace(p.key.alias, aliases.size()).second) {
      aliases.push_back(p.key.alias);
    }
  }
  Links by_id, by_alias;
  if (!ids.empty()) by_id = GetNoThrow([&] { return store_->GetByIds(ids); }, ids.size());
  if (!aliases.empty()) {
    by_alias = GetNoThrow([&] { return store_->GetByAliases(aliases); }, aliases.size());
  }
  queries.fetch_add((ids.empty() ? 0 : 1) + (aliases.empty() ? 0 : 1), std::memory_order_relaxed);
  for (Pending& p : batch) {
    const Links& links = p.key.by_alias ? by_alias : by_id;
    if (!links.ok()) {
      p.done(links.status());
    } else {
      p.done((*links)[p.key.by_alias ? alias_slot[p.key.alias] : id_slot[p.key.id]]);
    }
  }
}

}  // namespace shortener::store
