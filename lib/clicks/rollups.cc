#include "lib/clicks/rollups.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/btree_map.h"
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

// One (subject, hour) of a batch while it is grouped.
struct Builder {
  int64_t human = 0;
  int64_t bot = 0;
  absl::flat_hash_set<int64_t> visitors;
  // (dimension, value) -> human, bot. Hashed, not ordered: a batch looks
  // it up once per click and dimension; sorted once at the end.
  absl::flat_hash_map<std::pair<Dimension, absl::string_view>, std::pair<int64_t, int64_t>> dims;
};

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
  const absl::Span<const ClickRow> batches[] = {rows};
  return GroupRollupsOfBatches(batches, labels);
}

std::vector<RollupDelta> GroupRollupsOfBatches(absl::Span<const absl::Span<const ClickRow>> batches,
                                               const LinkLabels& labels) {
  absl::btree_map<std::pair<Subject, absl::Time>, Builder> groups;
  for (absl::Span<const ClickRow> rows : batches) {
    for (const ClickRow& row : rows) {
      const absl::Time hour = TruncateToHour(row.time);
      for (const Subject& subject : SubjectsOf(row, labels)) {
        Builder& b = groups[{subject, hour}];
        (row.bot ? b.bot : b.human) += 1;
        if (!row.bot) b.visitors.insert(VisitorHash(row.client_id));
        for (Dimension dim : kDimensions) {
          const absl::string_view value = DimensionValue(row, dim);
          if (value.empty()) continue;
          std::pair<int64_t, int64_t>& counts = b.dims[{dim, value}];
          (row.bot ? counts.second : counts.first) += 1;
        }
      }
    }
  }
  std::vector<RollupDelta> deltas;
  deltas.reserve(groups.size());
  for (auto& [key, b] : groups) {
    RollupDelta d;
    d.subject = key.first;
    d.hour = key.second;
    d.human = b.human;
    d.bot = b.bot;
    d.visitors.assign(b.visitors.begin(), b.visitors.end());
    std::sort(d.visitors.begin(), d.visitors.end());
    d.dims.reserve(b.dims.size());
    for (const auto& [dim_value, counts] : b.dims) {
      d.dims.push_back(DimensionCount{dim_value.first, std::string(dim_value.second), counts.first,
                                      counts.second});
    }
    std::sort(d.dims.begin(), d.dims.end(), [](const DimensionCount& x, const DimensionCount& y) {
      return x.dim != y.dim ? x.dim < y.dim : x.value < y.value;
    });
    deltas.push_back(std::move(d));
  }
  return deltas;
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
