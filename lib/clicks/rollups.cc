#include "lib/clicks/rollups.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "lib/common/sha256.h"

namespace shortener::clicks {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// GroupRollups of one batch under link subjects only (labels are added by
// MergeRollupDeltas): the per-click work. One hash table per batch for the
// dimensions and one for the visitors, keyed by the (link, hour) group's
// index, rather than tables per group: a batch over 300 links has about
// three clicks per link, and small tables cost more to make than to use.
std::vector<RollupDelta> GroupLinkRollups(absl::Span<const ClickRow> rows) {
  absl::flat_hash_map<std::pair<int64_t, absl::Time>, size_t> index;
  std::vector<RollupDelta> deltas;
  absl::flat_hash_set<std::pair<size_t, int64_t>> visitors;
  absl::flat_hash_map<std::tuple<size_t, Dimension, absl::string_view>, std::pair<int64_t, int64_t>>
      dims;
  visitors.reserve(rows.size());
  dims.reserve(rows.size() * 4);
  for (const ClickRow& row : rows) {
    const absl::Time hour = TruncateToHour(row.time);
    auto [it, fresh] = index.try_emplace(std::make_pair(row.link_id, hour), deltas.size());
    if (fresh) {
      RollupDelta& d = deltas.emplace_back();
      d.subject = LinkSubject(row.link_id);
      d.hour = hour;
    }
    const size_t group = it->second;
    RollupDelta& d = deltas[group];
    (row.bot ? d.bot : d.human) += 1;
    if (!row.bot) visitors.insert({group, VisitorHash(row.client_id)});
    for (Dimension dim : kDimensions) {
      const absl::string_view value = DimensionValue(row, dim);
      if (value.empty()) continue;
      std::pair<int64_t, int64_t>& counts = dims[{group, dim, value}];
      (row.bot ? counts.second : counts.first) += 1;
    }
  }
  for (const auto& [group, visitor] : visitors) deltas[group].visitors.push_back(visitor);
  for (const auto& [key, counts] : dims) {
    deltas[std::get<0>(key)].dims.push_back(DimensionCount{
        std::get<1>(key), std::string(std::get<2>(key)), counts.first, counts.second});
  }
  for (RollupDelta& d : deltas) {
    std::sort(d.visitors.begin(), d.visitors.end());
    std::sort(d.dims.begin(), d.dims.end(), [](const DimensionCount& x, const DimensionCount& y) {
      return x.dim != y.dim ? x.dim < y.dim : x.value < y.value;
    });
  }
  std::sort(deltas.begin(), deltas.end(), [](const RollupDelta& x, const RollupDelta& y) {
    if (!(x.subject == y.subject)) return x.subject < y.subject;
    return x.hour < y.hour;
  });
  return deltas;
}

}  // namespace

absl::string_view DimensionValue(const ClickRow& row, Dimension dim) {
  switch (dim) {
    case Dimension::kBrowser:
      return row.browser;
    case Dimension::kOs:
      return row.os;
    case Dimension::kDevice:
      return row.device;
    case Dimension::kCountry:
      return row.country;
    case Dimension::kRegion:
      return row.region;
    case Dimension::kCity:
      return row.city;
    case Dimension::kNetwork:
      return row.network;
    case Dimension::kReferrer:
      return row.referrer_host;
  }
  return {};
}

int64_t VisitorHash(absl::string_view client_id) {
  uint64_t value = 0;
  bool hex = client_id.size() == 32;
  for (size_t i = 0; hex && i < client_id.size(); ++i) {
    const int d = HexDigit(client_id[i]);
    if (d < 0) hex = false;
    if (i < 16) value = value << 4 | static_cast<uint64_t>(d < 0 ? 0 : d);
  }
  if (!hex) {
    const Sha256Bytes digest = Sha256(client_id);
    value = 0;
    for (int i = 0; i < 8; ++i) value = value << 8 | digest[i];
  }
  return static_cast<int64_t>(value);
}

std::vector<Subject> SubjectsOf(const ClickRow& row, const LinkLabels& labels) {
  std::vector<Subject> subjects = {LinkSubject(row.link_id)};
  auto it = labels.find(row.link_id);
  if (it != labels.end()) {
    for (int64_t label : it->second) subjects.push_back(LabelSubject(label));
  }
  return subjects;
}

std::vector<RollupDelta> GroupRollups(absl::Span<const ClickRow> rows, const LinkLabels& labels) {
  if (labels.empty()) return GroupLinkRollups(rows);
  const absl::Span<const ClickRow> batches[] = {rows};
  return GroupRollupsOfBatches(batches, labels);
}

std::vector<RollupDelta> GroupRollupsOfBatches(absl::Span<const absl::Span<const ClickRow>> batches,
                                               const LinkLabels& labels) {
  std::vector<std::vector<RollupDelta>> grouped;
  grouped.reserve(batches.size());
  for (absl::Span<const ClickRow> rows : batches) grouped.push_back(GroupLinkRollups(rows));
  std::vector<const std::vector<RollupDelta>*> pointers;
  for (const std::vector<RollupDelta>& g : grouped) pointers.push_back(&g);
  return MergeRollupDeltas(pointers, labels);
}

void ForEachMergedDelta(absl::Span<const std::vector<RollupDelta>* const> batches,
                        const LinkLabels& labels,
                        const std::function<void(const Subject&, const RollupDelta&)>& fn) {
  // Every delta under its own subject and under each of its link's labels,
  // sorted by (subject, hour), then each run of one key summed.
  struct Part {
    Subject subject;
    const RollupDelta* delta;
  };
  std::vector<Part> parts;
  for (const std::vector<RollupDelta>* deltas : batches) {
    for (const RollupDelta& d : *deltas) {
      parts.push_back({d.subject, &d});
      if (d.subject.kind != SubjectKind::kLink) continue;
      auto it = labels.find(d.subject.id);
      if (it == labels.end()) continue;
      for (int64_t label : it->second) parts.push_back({LabelSubject(label), &d});
    }
  }
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    if (!(a.subject == b.subject)) return a.subject < b.subject;
    return a.delta->hour < b.delta->hour;
  });
  for (size_t i = 0; i < parts.size();) {
    size_t end = i + 1;
    while (end < parts.size() && parts[end].subject == parts[i].subject &&
           parts[end].delta->hour == parts[i].delta->hour) {
      ++end;
    }
    if (end == i + 1) {
      fn(parts[i].subject, *parts[i].delta);
    } else {
      RollupDelta out;
      out.subject = parts[i].subject;
      out.hour = parts[i].delta->hour;
      std::vector<const DimensionCount*> dims;
      for (size_t k = i; k < end; ++k) {
        const RollupDelta& d = *parts[k].delta;
        out.human += d.human;
        out.bot += d.bot;
        out.visitors.insert(out.visitors.end(), d.visitors.begin(), d.visitors.end());
        for (const DimensionCount& c : d.dims) dims.push_back(&c);
      }
      std::sort(out.visitors.begin(), out.visitors.end());
      out.visitors.erase(std::unique(out.visitors.begin(), out.visitors.end()), out.visitors.end());
      std::sort(dims.begin(), dims.end(), [](const DimensionCount* x, const DimensionCount* y) {
        return x->dim != y->dim ? x->dim < y->dim : x->value < y->value;
      });
      for (const DimensionCount* c : dims) {
        DimensionCount* last = out.dims.empty() ? nullptr : &out.dims.back();
        if (last != nullptr && last->dim == c->dim && last->value == c->value) {
          last->human += c->human;
          last->bot += c->bot;
        } else {
          out.dims.push_back(*c);
        }
      }
      fn(out.subject, out);
    }
    i = end;
  }
}

std::vector<RollupDelta> MergeRollupDeltas(
    absl::Span<const std::vector<RollupDelta>* const> batches, const LinkLabels& labels) {
  std::vector<RollupDelta> merged;
  ForEachMergedDelta(batches, labels, [&merged](const Subject& subject, const RollupDelta& sums) {
    merged.push_back(sums);
    merged.back().subject = subject;
  });
  return merged;
}

std::vector<DimensionCount> BoundToLimit(std::vector<DimensionCount> adds, size_t stored,
                                         const std::function<bool(const std::string&)>& held,
                                         int limit) {
  std::vector<DimensionCount> out;
  std::vector<DimensionCount> fresh;
  DimensionCount other;
  bool any_other = false;
  for (DimensionCount& c : adds) {
    if (c.value.empty()) {
      other.dim = c.dim;
      other.human += c.human;
      other.bot += c.bot;
      any_other = true;
    } else if (held(c.value)) {
      out.push_back(std::move(c));
    } else {
      fresh.push_back(std::move(c));
    }
  }
  std::sort(fresh.begin(), fresh.end(), [](const DimensionCount& a, const DimensionCount& b) {
    if (a.human + a.bot != b.human + b.bot) return a.human + a.bot > b.human + b.bot;
    return a.value < b.value;
  });
  const size_t room = stored < static_cast<size_t>(limit) ? limit - stored : 0;
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (i < room) {
      out.push_back(std::move(fresh[i]));
      continue;
    }
    other.dim = fresh[i].dim;
    other.human += fresh[i].human;
    other.bot += fresh[i].bot;
    any_other = true;
  }
  if (any_other) out.push_back(std::move(other));
  std::sort(out.begin(), out.end(),
            [](const DimensionCount& a, const DimensionCount& b) { return a.value < b.value; });
  return out;
}

}  // namespace shortener::clicks
