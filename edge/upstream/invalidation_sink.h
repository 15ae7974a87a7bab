// InvalidationSink: where the invalidation stream's messages go (the edge's
// cache, through the redirect handler), apart from the gRPC stream itself
// (invalidation_watcher.h) so the layers above need no gRPC header.
//
// What the calls mean: DropAll() comes first on every (re)subscription, and
// whenever the service says so: nothing cached before it may be trusted
// (revocations made while the stream was down were not seen). Invalidate()
// names one code whose link changed. StreamState() says whether a stream is
// acknowledged (true) or has ended (false).
//
// Thread safety: called from the watcher's gRPC threads, one message at a
// time; implementations must not block.
#ifndef SHORTENER_EDGE_UPSTREAM_INVALIDATION_SINK_H_
#define SHORTENER_EDGE_UPSTREAM_INVALIDATION_SINK_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace shortener::edge {

class InvalidationSink {
 public:
  virtual ~InvalidationSink() = default;
  virtual void DropAll() = 0;
  virtual void Invalidate(absl::string_view code) = 0;
  // Stream acknowledged (true) or ended (false).
  virtual void StreamState(bool subscribed) = 0;
  // For metrics: a subscription is being attempted; a message arrived
  // (called before its DropAll/Invalidate calls).
  virtual void StreamStarting() {}
  virtual void MessageReceived(size_t codes, bool drop_all) {
    (void)codes;
    (void)drop_all;
  }
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_UPSTREAM_INVALIDATION_SINK_H_
