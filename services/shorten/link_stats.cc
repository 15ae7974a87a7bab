#include "services/shorten/link_stats.h"

#include <utility>

#include "lib/common/status_macros.h"

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

void LinkStats::GetLink(absl::string_view code, Caller caller, LinkDone done) {
  ReadOwnedLink<LinkWithClicks>(
      code, std::move(caller),
      [this](LinkView view) -> absl::StatusOr<LinkWithClicks> {
        SHORTENER_ASSIGN_OR_RETURN(int64_t human_clicks, clicks_->HumanTotal(view.link.id));
        return LinkWithClicks{std::move(view), human_clicks};
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

}  // namespace shortener::service
