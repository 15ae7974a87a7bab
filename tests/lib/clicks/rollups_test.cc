// GroupRollups and VisitorHash (lib/clicks/rollups.h): what one batch adds
// to each subject's hour, and the visitor hash the sketches count.
#include "lib/clicks/rollups.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "tests/lib/clicks/click_store_contract.h"

namespace shortener::clicks {
namespace {

using testing::At;
using testing::Bot;
using testing::Human;

TEST_CASE("a batch becomes one rollup delta per link and UTC hour", "[lib/clicks][rollups]") {
  std::vector<ClickRow> rows = {
      Human(7, "2030-01-01T10:05:00Z", "192.0.2.1", "Chrome", "Android", "mobile", "a.test", "DE"),
      Human(7, "2030-01-01T10:55:00Z", "192.0.2.1", "Chrome", "Android", "mobile", "", "DE"),
      Human(7, "2030-01-01T10:58:00Z", "192.0.2.2", "Firefox", "Linux", "desktop", "a.test", ""),
      Bot(7, "2030-01-01T10:30:00Z"),
      Human(7, "2030-01-01T11:00:00Z", "192.0.2.1", "Chrome", "Android", "mobile", "", ""),
      Human(3, "2030-01-01T10:00:00Z", "192.0.2.3", "Chrome", "Android", "mobile", "", ""),
  };
  rows[1].city = "Berlin";
  rows[1].region = "DE-BE";
  rows[1].network = "AS3320 Deutsche Telekom AG";
  const std::vector<RollupDelta> deltas = GroupRollups(rows);
  REQUIRE(deltas.size() == 3);
  // Sorted by subject, then hour.
  CHECK(deltas[0].subject == LinkSubject(3));
  CHECK(deltas[1].subject == LinkSubject(7));
  CHECK(deltas[1].hour == At("2030-01-01T10:00:00Z"));
  CHECK(deltas[2].hour == At("2030-01-01T11:00:00Z"));
  const RollupDelta& d = deltas[1];
  CHECK(d.human == 3);
  CHECK(d.bot == 1);
  // Two distinct human visitors (the bot is not one), sorted.
  REQUIRE(d.visitors.size() == 2);
  CHECK(d.visitors[0] < d.visitors[1]);
  std::vector<std::string> dims;
  for (const DimensionCount& c : d.dims) {
    dims.push_back(std::to_string(static_cast<int>(c.dim)) + " " + c.value + " " +
                   std::to_string(c.human) + "/" + std::to_string(c.bot));
  }
  // Unknown (empty) values are left out; one entry per dimension and value.
  CHECK(dims == std::vector<std::string>{"1 Chrome 2/0", "1 Firefox 1/0", "1 Googlebot 0/1",
                                         "2 Android 2/0", "2 Linux 1/0", "2 Other 0/1", "3 bot 0/1",
                                         "3 desktop 1/0", "3 mobile 2/0", "4 DE 2/0", "5 DE-BE 1/0",
                                         "6 Berlin 1/0", "7 AS3320 Deutsche Telekom AG 1/0",
                                         "8 a.test 2/0"});
}

// A delta as one line, to compare whole deltas and see the difference.
std::string Describe(const RollupDelta& d) {
  std::string out = std::string(1, static_cast<char>(d.subject.kind)) +
                    std::to_string(d.subject.id) + " " +
                    std::to_string(absl::ToUnixSeconds(d.hour)) + " " + std::to_string(d.human) +
                    "/" + std::to_string(d.bot) + " v";
  for (int64_t v : d.visitors) out += " " + std::to_string(v);
  out += " d";
  for (const DimensionCount& c : d.dims) {
    out += " " + std::to_string(static_cast<int>(c.dim)) + ":" + c.value + "=" +
           std::to_string(c.human) + "/" + std::to_string(c.bot);
  }
  return out;
}

std::vector<std::string> Describe(const std::vector<RollupDelta>& deltas) {
  std::vector<std::string> out;
  for (const RollupDelta& d : deltas) out.push_back(Describe(d));
  return out;
}

// The deltas of `subject` in `deltas`, described with `as` for its subject.
std::vector<std::string> DescribeOf(const std::vector<RollupDelta>& deltas, Subject subject,
                                    Subject as) {
  std::vector<std::string> out;
  for (RollupDelta d : deltas) {
    if (!(d.subject == subject)) continue;
    d.subject = as;
    out.push_back(Describe(d));
  }
  return out;
}

TEST_CASE("merging batches' deltas equals grouping all their clicks, labels included",
          "[lib/clicks][rollups]") {
  std::mt19937 rng(19);
  const char* const browsers[] = {"Chrome", "Firefox", "Safari"};
  const char* const referrers[] = {"", "a.test", "b.test", "c.test"};
  std::vector<ClickRow> rows;
  for (int i = 0; i < 2000; ++i) {
    const std::string minute =
        std::to_string(10 + rng() % 3) + ":" + std::to_string(10 + rng() % 50);
    const std::string time = "2030-01-01T" + minute + ":00Z";
    ClickRow r = rng() % 6 == 0
                     ? Bot(1 + rng() % 4, time.c_str())
                     : Human(1 + rng() % 4, time.c_str(), "192.0.2." + std::to_string(rng() % 40),
                             browsers[rng() % 3], "Android", "mobile", referrers[rng() % 4],
                             rng() % 2 ? "DE" : "FR");
    rows.push_back(std::move(r));
  }
  const absl::Span<const ClickRow> all(rows);
  const std::vector<RollupDelta> a = GroupRollups(all.subspan(0, 700));
  const std::vector<RollupDelta> b = GroupRollups(all.subspan(700, 600));
  const std::vector<RollupDelta> c = GroupRollups(all.subspan(1300));
  const std::vector<RollupDelta>* batches[] = {&a, &b, &c};

  // Without labels: the same deltas as grouping every click at once.
  CHECK(Describe(MergeRollupDeltas(batches, {})) == Describe(GroupRollups(rows)));

  // Links 1 and 2 carry label 100, link 1 also label 101: a label's deltas
  // are those of one link that had all of its links' clicks.
  const LinkLabels labels = {{1, {100, 101}}, {2, {100}}};
  const std::vector<RollupDelta> merged = MergeRollupDeltas(batches, labels);
  std::vector<ClickRow> as_one_link = rows;
  for (ClickRow& r : as_one_link) {
    if (r.link_id == 1 || r.link_id == 2) r.link_id = 1000;
  }
  const std::vector<RollupDelta> both = GroupRollups(as_one_link);
  CHECK(DescribeOf(merged, LabelSubject(100), LinkSubject(1000)) ==
        DescribeOf(both, LinkSubject(1000), LinkSubject(1000)));
  CHECK(DescribeOf(merged, LabelSubject(101), LinkSubject(1)) ==
        DescribeOf(GroupRollups(rows), LinkSubject(1), LinkSubject(1)));
  // The links' own deltas are unchanged by their labels, and the whole is
  // what GroupRollups of all the rows with the labels gives.
  for (int64_t link = 1; link <= 4; ++link) {
    CHECK(DescribeOf(merged, LinkSubject(link), LinkSubject(link)) ==
          DescribeOf(GroupRollups(rows), LinkSubject(link), LinkSubject(link)));
  }
  CHECK(Describe(merged) == Describe(GroupRollups(rows, labels)));
  CHECK(merged.size() == GroupRollups(rows).size() + 3 + 3);  // 3 hours per label
}

TEST_CASE("the visitor hash is the client id's first 64 bits", "[lib/clicks][rollups]") {
  CHECK(VisitorHash("0000000000000001ffffffffffffffff") == 1);
  CHECK(VisitorHash("ffffffffffffffff0000000000000000") == -1);
  CHECK(VisitorHash("8000000000000000aaaaaaaaaaaaaaaa") == INT64_MIN);
  const std::string id = ClientId("192.0.2.7", "Mozilla/5.0");
  CHECK(VisitorHash(id) == VisitorHash(id));
  CHECK(VisitorHash(id) != VisitorHash(ClientId("192.0.2.8", "Mozilla/5.0")));
  // Any other form is hashed (stable, spread): upper case is not ClientId's.
  CHECK(VisitorHash("not a client id") == VisitorHash("not a client id"));
  CHECK(VisitorHash("not a client id") != VisitorHash("not a client id!"));
  CHECK(VisitorHash("0000000000000001FFFFFFFFFFFFFFFF") != 1);
  CHECK(VisitorHash("") != 0);
}

std::string Text(const std::vector<DimensionCount>& counts) {
  std::string out;
  for (const DimensionCount& c : counts) {
    out += "'" + c.value + "'=" + std::to_string(c.human) + "/" + std::to_string(c.bot) + " ";
  }
  return out;
}

TEST_CASE("the per-hour bound keeps held values and the new ones with most clicks",
          "[lib/clicks][rollups]") {
  const Dimension r = Dimension::kReferrer;
  auto held = [](const std::string& v) { return v == "a.test" || v == "b.test"; };
  // Two held, limit 4: two places for the three new values; c.test and
  // d.test tie on clicks, the first by value wins.
  CHECK(Text(BoundToLimit({{r, "a.test", 1, 0},
                           {r, "c.test", 2, 1},
                           {r, "d.test", 3, 0},
                           {r, "e.test", 1, 0},
                           {r, "", 4, 0}},
                          2, held, 4)) == "''=5/0 'a.test'=1/0 'c.test'=2/1 'd.test'=3/0 ");
  // A full bucket: every new value goes to other, held ones stay.
  CHECK(Text(BoundToLimit({{r, "b.test", 1, 1}, {r, "z.test", 5, 0}}, 4, held, 4)) ==
        "''=5/0 'b.test'=1/1 ");
  // Room for all: nothing moves, no other row.
  CHECK(Text(BoundToLimit({{r, "x.test", 1, 0}, {r, "y.test", 0, 2}}, 0, held, 256)) ==
        "'x.test'=1/0 'y.test'=0/2 ");
  CHECK(BoundToLimit({}, 3, held, 4).empty());
}

// A measurement, not a test: hidden from ctest (Catch2 "[.]" tag); run it
// with
//   build/release/bin/clicks_test "[bench]"
// It prints what grouping one ingest-benchmark-like batch (1000 clicks over
// 300 links in one hour, the per-click work PgClickStore::PrepareBatch does
// on the caller's thread) costs per click.
TEST_CASE("cost of GroupRollups per click, 1000 clicks over 300 links (printed)",
          "[lib/clicks][rollups][.][bench]") {
  std::mt19937 rng(1);
  const char* const browsers[] = {"Chrome", "Safari", "Firefox", "Samsung Internet", "Googlebot"};
  const char* const systems[] = {"Android", "iOS", "Windows", "Mac OS X", "Linux"};
  const char* const devices[] = {"mobile", "desktop", "tablet", "bot"};
  const char* const referrers[] = {"", "www.google.com", "t.co", "l.facebook.com", "www.bing.com"};
  std::vector<ClickRow> rows(1000);
  const absl::Time now = absl::FromUnixSeconds(1893456000);
  for (ClickRow& r : rows) {
    r.link_id = static_cast<int64_t>(rng() % 300);
    r.time = now;
    r.bot = rng() % 10 == 0;
    r.client_id = ClientId(std::to_string(rng()), "Mozilla/5.0");
    r.browser = browsers[rng() % 5];
    r.os = systems[rng() % 5];
    r.device = devices[rng() % 4];
    r.referrer_host = referrers[rng() % 5];
    r.country = "US";
  }
  constexpr int kRounds = 2000;
  size_t deltas = 0;
  const absl::Time start = absl::Now();
  for (int i = 0; i < kRounds; ++i) deltas += GroupRollups(rows).size();
  const double us_per_click =
      absl::ToDoubleMicroseconds(absl::Now() - start) / kRounds / static_cast<double>(rows.size());
  std::printf("GroupRollups: %.3f us per click (%zu deltas per batch)\n", us_per_click,
              deltas / kRounds);
  CHECK(deltas > 0);
}

}  // namespace
}  // namespace shortener::clicks
