#include "lib/store/pg/pg_batch.h"

#include <algorithm>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "lib/pg/arrays.h"
#include "lib/pg/copy_binary.h"
#include "lib/store/pg/queries.h"

namespace shortener::store {
namespace {

using pg::ArrayLiteral;
using pg::CopyBinary;

using pg_queries::kCopyAliases;
using pg_queries::kCopyLinks;
using pg_queries::kCopyRequests;
using pg_queries::kEnsureLabels;
using pg_queries::kReadAliases;
using pg_queries::kReadDedupe;
using pg_queries::kReadRequests;
using pg_queries::kReleaseDedupeKeys;
using pg_queries::kWriteBatchCareful;
using pg_queries::kWriteBatchFast;
using pg_queries::kWriteLinksFast;

// The ORDINALITY column of a read: 1-based index into the key list.
size_t KeyIndex(const pqxx::row& row, size_t key_count) {
  int64_t i = row[0].as<int64_t>();
  if (i < 1 || static_cast<size_t>(i) > key_count) {
    throw std::out_of_range("key index out of range in a read-phase row");
  }
  return static_cast<size_t>(i - 1);
}

void ReadRequests(pqxx::transaction_base& tx, const std::vector<OwnerKey>& keys, KeyState& state) {
  ArrayLiteral owners, request_ids;
  for (const OwnerKey& k : keys) {
    owners.Add(k.first);
    request_ids.Add(k.second);
  }
  pqxx::result rows = tx.exec_prepared(kReadRequests.name, owners.Build(), request_ids.Build());
  for (const pqxx::row& row : rows) {
    state.requests[keys[KeyIndex(row, keys.size())]] =
        StoredRequest{pqxx::binarystring(row[1]).str(), ParseLink(row, 2)};
  }
}

void ReadDedupe(pqxx::transaction_base& tx, const std::vector<int64_t>& keys, KeyState& state) {
  ArrayLiteral list;
  for (int64_t k : keys) list.Add(k);
  pqxx::result rows = tx.exec_prepared(kReadDedupe.name, list.Build());
  for (const pqxx::row& row : rows) {
    state.dedupe[keys[KeyIndex(row, keys.size())]] =
        StoredDedupe{row[1].as<int64_t>(), ParseLink(row, 3), pqxx::binarystring(row[2]).str()};
  }
}

void ReadAliases(pqxx::transaction_base& tx, const std::vector<std::string>& aliases,
                 KeyState& state) {
  ArrayLiteral list;
  for (const std::string& a : aliases) list.Add(a);
  for (const pqxx::row& row : tx.exec_prepared(kReadAliases.name, list.Build())) {
    state.aliases.insert(row[0].as<std::string>());
  }
}

// The dedupe key each new link of `plan` takes (links.url_key); links
// absent from the map get none.
absl::flat_hash_map<int64_t, int64_t> DedupeKeysByLink(const CreatePlan& plan) {
  absl::flat_hash_map<int64_t, int64_t> keys;
  keys.reserve(plan.dedupe.size());
  for (const DedupeWrite& w : plan.dedupe) keys.emplace(w.link_id, w.key);
  return keys;
}

// Clears url_key on the dead targets `plan` takes keys over from. False when
// a concurrent transaction took one of them over first.
bool ReleaseDedupeKeys(pqxx::transaction_base& tx, const CreatePlan& plan) {
  ArrayLiteral keys, holders;
  size_t released = 0;
  for (const DedupeWrite& w : plan.dedupe) {
    if (!w.replaces.has_value()) continue;
    keys.Add(w.key);
    holders.Add(*w.replaces);
    ++released;
  }
  if (released == 0) return true;
  pqxx::result r = tx.exec_prepared(kReleaseDedupeKeys.name, keys.Build(), holders.Build());
  return static_cast<size_t>(r.affected_rows()) == released;
}

// A link's label ids in key order (links.label_ids).
std::vector<int64_t> LabelIdsOf(const Link& link, const LabelIds& label_ids) {
  std::vector<int64_t> ids;
  ids.reserve(link.labels.size());
  for (const auto& [key, value] : link.labels) {
    auto it = label_ids.find(std::make_tuple(link.owner, key, value));
    if (it == label_ids.end()) {
      throw std::logic_error(absl::StrCat("create links: no id for label ", key, "=", value));
    }
    ids.push_back(it->second);
  }
  return ids;
}

// The same as a bigint[] literal, e.g. "{4,1}".
std::string LabelIdArray(const Link& link, const LabelIds& label_ids) {
  ArrayLiteral ids;
  for (int64_t id : LabelIdsOf(link, label_ids)) ids.Add(id);
  return ids.Build();
}

// The 17 array parameters of kWriteBatch, grouped by table.
struct WriteArrays {
  ArrayLiteral req_owner, req_id, req_sha, req_link;
  ArrayLiteral alias, alias_link;
  ArrayLiteral id, link_alias, url, sha, owner, status, create, expire, max_clicks, url_key, labels;

  void AddRequest(const RequestWrite& w) {
    req_owner.Add(w.key.first);
    req_id.Add(w.key.second);
    req_sha.AddBytes(w.long_url_sha256);
    req_link.Add(w.link_id);
  }
  void AddLink(const NewLink& in, const Link& link, const int64_t* dedupe_key,
               const LabelIds& label_ids) {
    id.Add(link.id);
    link_alias.Add(link.alias);
    url.Add(link.long_url);
    sha.AddBytes(in.long_url_sha256);
    owner.Add(link.owner);
    status.Add(int64_t{link.redirect_status});
    create.AddTime(link.create_time);
    expire.AddTime(link.expire_time);
    link.max_clicks.has_value() ? max_clicks.Add(*link.max_clicks) : max_clicks.AddNull();
    dedupe_key != nullptr ? url_key.Add(*dedupe_key) : url_key.AddNull();
    link.labels.empty() ? labels.AddNull() : labels.Add(LabelIdArray(link, label_ids));
  }
};

}  // namespace

void PrepareLinkQueries(pqxx::connection& conn) {
  // Every statement here is a primary-key probe or an insert from arrays:
  // a custom plan per execution can be no better than the generic one, and
  // planning the 5-insert write statement each time cost ~4.5 µs per link
  // of a Shorten group commit (docs/benchmarks.md).
  conn.set_variable("plan_cache_mode", "force_generic_plan");
  // No parallel workers: starting them costs ~10 ms, more than any of these
  // statements takes. With generic plans (LIMIT unknown) PostgreSQL chose a
  // parallel Gather Merge for ListLinks' walk by clicks: 16 ms in the
  // database for a page it reads in 1 ms without (docs/benchmarks.md,
  // ListLinks).
  conn.set_variable("max_parallel_workers_per_gather", "0");
  for (const pg_queries::Query& q : pg_queries::kAllQueries) {
    conn.prepare(q.name, q.sql);
    conn.prepare_now(q.name);  // a schema problem shows at connect time
  }
}

std::optional<Link> ParseLink(const pqxx::row& row, int first) {
  auto col = [&](int i) { return row[first + i]; };
  if (col(0).is_null()) return std::nullopt;
  Link link;
  link.id = col(0).as<int64_t>();
  if (!col(1).is_null()) link.alias = col(1).as<std::string>();
  link.long_url = col(2).as<std::string>();
  link.owner = col(3).as<std::string>();
  link.redirect_status = col(4).as<int>();
  link.create_time = absl::FromUnixMicros(col(5).as<int64_t>());
  if (!col(6).is_null()) link.expire_time = absl::FromUnixMicros(col(6).as<int64_t>());
  if (!col(7).is_null()) link.revoke_time = absl::FromUnixMicros(col(7).as<int64_t>());
  if (!col(8).is_null()) link.max_clicks = col(8).as<int64_t>();
  if (!col(9).is_null()) {
    link.clicks_exhausted_time = absl::FromUnixMicros(col(9).as<int64_t>());
  }
  if (!col(10).is_null()) {
    for (absl::string_view label : absl::StrSplit(col(10).c_str(), ',')) {
      std::pair<std::string, std::string> kv = absl::StrSplit(label, absl::MaxSplits('=', 1));
      link.labels.insert(std::move(kv));
    }
  }
  return link;
}

bool HasLabels(absl::Span<const NewLink> links) {
  for (const NewLink& link : links) {
    if (!link.labels.empty() && ValidateNewLink(link).ok()) return true;
  }
  return false;
}

LabelIds EnsureLabels(pqxx::connection& conn, absl::Span<const NewLink> links) {
  std::vector<std::tuple<std::string, std::string, std::string>> wanted;
  for (const NewLink& link : links) {
    if (link.labels.empty() || !ValidateNewLink(link).ok()) continue;
    for (const auto& [key, value] : link.labels) wanted.emplace_back(link.owner, key, value);
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  LabelIds ids;
  // Each attempt sees what was committed before it: a label missing after
  // one was committed by a concurrent creator meanwhile.
  for (int attempt = 0; attempt < 3 && ids.size() < wanted.size(); ++attempt) {
    ArrayLiteral tenants, keys, values;
    for (const auto& label : wanted) {
      if (ids.contains(label)) continue;
      tenants.Add(std::get<0>(label));
      keys.Add(std::get<1>(label));
      values.Add(std::get<2>(label));
    }
    pqxx::nontransaction tx(conn);
    for (const pqxx::row& row :
         tx.exec_prepared(kEnsureLabels.name, tenants.Build(), keys.Build(), values.Build())) {
      ids.emplace(std::make_tuple(row[0].as<std::string>(), row[1].as<std::string>(),
                                  row[2].as<std::string>()),
                  row[3].as<int64_t>());
    }
  }
  if (ids.size() < wanted.size()) {
    throw std::runtime_error("create links: label ids still missing after 3 attempts");
  }
  return ids;
}

KeyState ReadKeyState(pqxx::transaction_base& tx, const BatchKeys& keys) {
  KeyState state;
  if (!keys.requests.empty()) ReadRequests(tx, keys.requests, state);
  if (!keys.dedupe.empty()) ReadDedupe(tx, keys.dedupe, state);
  if (!keys.aliases.empty()) ReadAliases(tx, keys.aliases, state);
  return state;
}

bool WritePlan(pqxx::transaction_base& tx, absl::Span<const NewLink> links, const CreatePlan& plan,
               WriteMode mode, const LabelIds& label_ids) {
  if (!ReleaseDedupeKeys(tx, plan)) return false;
  const absl::flat_hash_map<int64_t, int64_t> dedupe_keys = DedupeKeysByLink(plan);
  WriteArrays a;
  for (const RequestWrite& w : plan.requests) a.AddRequest(w);
  std::vector<std::pair<std::string, int64_t>> aliases;  // sorted: one lock order
  for (size_t i : plan.new_links) {
    const Link& link = plan.results[i]->link;
    auto key = dedupe_keys.find(link.id);
    a.AddLink(links[i], link, key == dedupe_keys.end() ? nullptr : &key->second, label_ids);
    if (link.alias.has_value()) aliases.emplace_back(*link.alias, link.id);
  }
  std::sort(aliases.begin(), aliases.end());
  for (const auto& [alias, id] : aliases) {
    a.alias.Add(alias);
    a.alias_link.Add(id);
  }
  if (mode == WriteMode::kFast && plan.requests.empty() && aliases.empty()) {
    pqxx::result r = tx.exec_prepared(kWriteLinksFast.name, a.id.Build(), a.link_alias.Build(),
                                      a.url.Build(), a.sha.Build(), a.owner.Build(),
                                      a.status.Build(), a.create.Build(), a.expire.Build(),
                                      a.max_clicks.Build(), a.url_key.Build(), a.labels.Build());
    return static_cast<size_t>(r.affected_rows()) == plan.new_links.size();
  }
  pqxx::row n = tx.exec_prepared1(
      mode == WriteMode::kFast ? kWriteBatchFast.name : kWriteBatchCareful.name,
      a.req_owner.Build(), a.req_id.Build(), a.req_sha.Build(), a.req_link.Build(), a.alias.Build(),
      a.alias_link.Build(), a.id.Build(), a.link_alias.Build(), a.url.Build(), a.sha.Build(),
      a.owner.Build(), a.status.Build(), a.create.Build(), a.expire.Build(), a.max_clicks.Build(),
      a.url_key.Build(), a.labels.Build());
  return n[0].as<size_t>() == plan.requests.size() && n[1].as<size_t>() == aliases.size() &&
         n[2].as<size_t>() == plan.new_links.size();
}

bool CopyPlan(pqxx::dbtransaction& tx, absl::Span<const NewLink> links, const CreatePlan& plan,
              const LabelIds& label_ids) {
  for (const DedupeWrite& w : plan.dedupe) {
    if (w.replaces.has_value()) return false;
  }
  // The tables in the order of kWriteBatchFast's inserts: one lock order.
  // Columns in kCopy*'s order.
  if (!plan.requests.empty()) {
    CopyBinary rows;
    for (const RequestWrite& w : plan.requests) {
      rows.Text(w.key.first).Text(w.key.second).Bytes(w.long_url_sha256).Int64(w.link_id);
      rows.EndRow();
    }
    rows.CopyTo(tx, kCopyRequests.table, kCopyRequests.columns);
  }
  std::vector<std::pair<std::string, int64_t>> aliases;  // sorted: one lock order
  for (size_t i : plan.new_links) {
    const Link& link = plan.results[i]->link;
    if (link.alias.has_value()) aliases.emplace_back(*link.alias, link.id);
  }
  if (!aliases.empty()) {
    std::sort(aliases.begin(), aliases.end());
    CopyBinary rows;
    for (const auto& [alias, id] : aliases) {
      rows.Text(alias).Int64(id);
      rows.EndRow();
    }
    rows.CopyTo(tx, kCopyAliases.table, kCopyAliases.columns);
  }
  if (!plan.new_links.empty()) {
    const absl::flat_hash_map<int64_t, int64_t> dedupe_keys = DedupeKeysByLink(plan);
    CopyBinary rows;
    for (size_t i : plan.new_links) {
      const Link& link = plan.results[i]->link;
      rows.Int64(link.id).Text(link.alias).Text(link.long_url).Bytes(links[i].long_url_sha256);
      // redirect_status is a smallint: ValidateNewLink allows 301..308 only.
      rows.Text(link.owner).Int16(static_cast<int16_t>(link.redirect_status));
      rows.Time(link.create_time).Time(link.expire_time).Int64(link.max_clicks);
      auto key = dedupe_keys.find(link.id);
      key == dedupe_keys.end() ? rows.Null() : rows.Int64(key->second);
      link.labels.empty() ? rows.Null() : rows.Int64Array(LabelIdsOf(link, label_ids));
      rows.EndRow();
    }
    rows.CopyTo(tx, kCopyLinks.table, kCopyLinks.columns);
  }
  return true;
}

}  // namespace shortener::store
