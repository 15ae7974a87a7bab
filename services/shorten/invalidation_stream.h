// InvalidationStream: the WatchInvalidations server stream (gRPC callback
// API) over one InvalidationHub subscription. Writes one message at a time:
// the next is taken from the subscription only when the previous write is
// done, so codes that arrive meanwhile go out together in the next message.
//
// The stream ends
//  - with UNAVAILABLE "shorten-service is shutting down; subscribe again"
//    when the hub is closed (SIGTERM): at once when no write is in flight;
//    a write in flight is cancelled (TryCancel: the client may then see
//    CANCELLED), so that a client that stopped reading cannot hold up the
//    server's shutdown;
//  - when the client cancels or the connection breaks (OnCancel, a failed
//    write).
// The subscription is removed in OnDone.
//
// Thread-safe: reactions, hub wake-ups and Close may run on any threads at
// once; the object lives until OnDone and every wake-up in progress are over
// (it owns itself through a shared_ptr released in OnDone; the hub's wake
// callback holds only a weak_ptr).
#ifndef SHORTENER_SERVICES_SHORTEN_INVALIDATION_STREAM_H_
#define SHORTENER_SERVICES_SHORTEN_INVALIDATION_STREAM_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <string>

#include "services/shorten/invalidation_hub.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::service {

class InvalidationStream final : public grpc::ServerWriteReactor<v1::Invalidation>,
                                 public std::enable_shared_from_this<InvalidationStream> {
 public:
  // The stream of one call, not subscribed yet: return it from the handler
  // at once, then call Subscribe (the caller is authorized) or Reject, once,
  // from any thread. `hub` must outlive the call; `subscriber` names the
  // client in logs.
  static std::shared_ptr<InvalidationStream> Create(grpc::CallbackServerContext* ctx,
                                                    InvalidationHub* hub, std::string subscriber);

  // Subscribes to the hub and starts writing (the first message is
  // drop_all); when the hub has max_subscribers already, ends the call with
  // its RESOURCE_EXHAUSTED instead.
  void Subscribe();
  // Ends the call with `status` without subscribing.
  void Reject(const grpc::Status& status);

  InvalidationStream(grpc::CallbackServerContext* ctx, InvalidationHub* hub,
                     std::string subscriber);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // Starts the next write, finishes the stream, or does nothing, as the
  // state allows. Called after every event.
  void Pump();

  grpc::CallbackServerContext* const ctx_;
  InvalidationHub* const hub_;
  const std::string subscriber_;

  std::mutex mu_;
  // Guarded by mu_:
  std::shared_ptr<InvalidationHub::Subscription> subscription_;
  std::shared_ptr<InvalidationStream> self_;  // keeps this alive until OnDone
  v1::Invalidation message_;                  // the message being written
  bool writing_ = false;                      // a StartWrite awaits its OnWriteDone
  bool broken_ = false;                       // cancelled, or a write failed
  bool cancel_sent_ = false;                  // TryCancel called
  // TryCancel is running outside the lock: no Finish until it returns, or
  // OnDone could free the context under it.
  bool cancelling_ = false;
  bool finished_ = false;  // Finish called
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_INVALIDATION_STREAM_H_
