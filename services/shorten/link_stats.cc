#include "services/shorten/link_stats.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/clicks/rollups.h"
#include "lib/common/status_macros.h"
#include "services/shorten/label_filter.h"

namespace shortener::service {

LinkStats::LinkStats(Shortener* shortener, clicks::ClickStore* clicks, ThreadPool* blocking_pool,
                     const Clock& clock)
    : shortener_(shortener), clicks_(clicks), blocking_pool_(blocking_pool), clock_(clock) {}

template <typename Result>
void LinkStats::ReadOwnedLink(absl::string_view code, Caller caller,
                              std::function<absl::StatusOr<Result>(LinkView)> read,
                              std::function<void(absl::StatusOr<Result>)> done) {
  const auth::Principal* who = caller.get();
  shortener_->GetLink(code, who,
                      [this, caller = std::move(caller), read = std::move(read),
                       done = std::move(done)](absl::StatusOr<LinkView> view) mutable {
                        if (!view.ok()) {
                          done(view.status());
                          return;
                        }
                        // The click read blocks: on the pool, not on this (read
                        // batcher) thread. `done` is copied in: a refusal still
                        // has it to answer with.
                        absl::Status queued = blocking_pool_->Schedule(
                            [read = std::move(read), done, view = *std::move(view)]() mutable {
                              done(read(std::move(view)));
                            });
                        if (!queued.ok()) done(queued);
                      });
}

void LinkStats::GetLink(absl::string_view code, Caller caller, LinkDone done, bool with_history) {
  ReadOwnedLink<LinkWithClicks>(
      code, std::move(caller),
      [this, with_history](LinkView view) -> absl::StatusOr<LinkWithClicks> {
        SHORTENER_ASSIGN_OR_RETURN(int64_t human_clicks, clicks_->HumanTotal(view.link.id));
        LinkWithClicks link{std::move(view), human_clicks, {}};
        if (with_history) {
          SHORTENER_ASSIGN_OR_RETURN(link.history, shortener_->LinkHistory(link.view.link.id));
        }
        return link;
      },
      std::move(done));
}

void LinkStats::GetQrCode(const QrQuery& query, Caller caller, QrDone done) {
  ReadOwnedLink<LinkQrCode>(
      query.code, std::move(caller),
      [options = query.options](LinkView view) -> absl::StatusOr<LinkQrCode> {
        SHORTENER_ASSIGN_OR_RETURN(qr::QrImage image, qr::RenderQr(view.short_url, options));
        return LinkQrCode{std::move(view.short_url), std::move(image)};
      },
      std::move(done));
}

void LinkStats::GetClickStats(absl::string_view code, Caller caller, const ClickStatsQuery& query,
                              StatsDone done) {
  absl::StatusOr<clicks::StatsRange> range =
      clicks::ResolveStatsRange(query.start, query.end, query.granularity, clock_.Now());
  if (!range.ok()) {
    done(range.status());
    return;
  }
  ReadOwnedLink<clicks::ClickStats>(
      code, std::move(caller),
      [this, range = *range](LinkView view) {
        return clicks_->Stats(view.link.id, range.start, range.end, range.granularity);
      },
      std::move(done));
}

namespace {

// Label ids start at 1 (an identity column; InMemoryLinkStore counts from
// 1): no click ever counts under 0, so its statistics are those of a label
// never clicked, in the very shape the click store gives every range.
constexpr int64_t kNoLabelId = 0;

}  // namespace

absl::StatusOr<LinkStats::LabelRead> LinkStats::PlanLabelRead(absl::string_view filter,
                                                              const auth::Principal* caller,
                                                              const ClickStatsQuery& query) const {
  LabelRead read;
  SHORTENER_ASSIGN_OR_RETURN(
      read.range,
      clicks::ResolveStatsRange(query.start, query.end, query.granularity, clock_.Now()));
  SHORTENER_ASSIGN_OR_RETURN(LabelCondition label, ParseLabelFilter(filter));
  read.key = std::move(label.key);
  read.value = std::move(label.value);
  SHORTENER_ASSIGN_OR_RETURN(read.tenant, shortener_->TenantFor(caller, query.tenant));
  return read;
}

void LinkStats::GetLabelStats(absl::string_view filter, Caller caller, const ClickStatsQuery& query,
                              StatsDone done) {
  absl::StatusOr<LabelRead> read = PlanLabelRead(filter, caller.get(), query);
  if (!read.ok()) {
    done(read.status());
    return;
  }
  // Both reads block: on the pool. `done` is copied in: a refusal still has
  // it to answer with.
  absl::Status queued = blocking_pool_->Schedule([this, done, read = *std::move(read)] {
    absl::StatusOr<int64_t> id = shortener_->FindLabelId(read.tenant, read.key, read.value);
    if (absl::IsNotFound(id.status())) id = kNoLabelId;
    if (!id.ok()) {
      done(id.status());
      return;
    }
    done(clicks_->SubjectStats(clicks::LabelSubject(*id), read.range.start, read.range.end,
                               read.range.granularity));
  });
  if (!queued.ok()) done(queued);
}

}  // namespace shortener::service
