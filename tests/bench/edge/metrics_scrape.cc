#include "tests/bench/edge/metrics_scrape.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tests/support/http_client.h"

namespace shortener::bench::edge {

Scrape ScrapeMetrics(int port) {
  Scrape out;
  absl::StatusOr<testing::HttpResponse> r = testing::HttpGet(port, "/metrics");
  if (!r.ok() || r->status != 200) return out;
  for (absl::string_view line : absl::StrSplit(r->body, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == absl::string_view::npos) continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(space + 1), &v)) out[std::string(line.substr(0, space))] = v;
  }
  return out;
}

double Value(const Scrape& s, const std::string& name) {
  auto it = s.find(name);
  return it == s.end() ? 0 : it->second;
}

int64_t Delta(const Scrape& before, const Scrape& after, const std::string& name) {
  return static_cast<int64_t>(Value(after, name) - Value(before, name));
}

void ResponseDeltas(const Scrape& before, const Scrape& after, int64_t own_200s, int64_t* ok302,
                    int64_t* other, std::string* other_statuses) {
  const std::string prefix = "edge_http_responses_total{code=\"";
  *ok302 = 0;
  *other = 0;
  std::vector<std::string> parts;
  for (const auto& [name, value] : after) {
    if (!absl::StartsWith(name, prefix)) continue;
    const std::string code = name.substr(prefix.size(), name.size() - prefix.size() - 2);
    int64_t d = static_cast<int64_t>(value - Value(before, name));
    if (code == "200") d -= own_200s;
    if (d <= 0) continue;
    if (code == "302") {
      *ok302 += d;
    } else {
      *other += d;
      parts.push_back(absl::StrCat(code, ": ", d));
    }
  }
  *other_statuses = absl::StrJoin(parts, ", ");
}

double HistogramQuantileMs(const Scrape& before, const Scrape& after, const std::string& name,
                           double q) {
  const std::string prefix = name + "_bucket{le=\"";
  std::vector<std::pair<double, double>> buckets;  // (bound, cumulative delta)
  for (const auto& [key, value] : after) {
    if (!absl::StartsWith(key, prefix)) continue;
    const std::string bound = key.substr(prefix.size(), key.size() - prefix.size() - 2);
    double b = 0;
    if (bound == "+Inf") {
      b = std::numeric_limits<double>::infinity();
    } else if (!absl::SimpleAtod(bound, &b)) {
      continue;
    }
    buckets.emplace_back(b, value - Value(before, key));
  }
  std::sort(buckets.begin(), buckets.end());
  if (buckets.empty() || buckets.back().second <= 0) return 0;
  const double target = q * buckets.back().second;
  for (const auto& [bound, cumulative] : buckets) {
    if (cumulative >= target) return std::isinf(bound) ? -1 : bound * 1e3;
  }
  return -1;
}

}  // namespace shortener::bench::edge
