#include "services/shorten/invalidation_stream.h"

#include <optional>
#include <utility>

#include "absl/strings/escaping.h"
#include "lib/common/log.h"

namespace shortener::service {

std::shared_ptr<InvalidationStream> InvalidationStream::Create(grpc::CallbackServerContext* ctx,
                                                               InvalidationHub* hub,
                                                               std::string subscriber) {
  auto stream = std::make_shared<InvalidationStream>(ctx, hub, std::move(subscriber));
  std::lock_guard<std::mutex> lock(stream->mu_);
  stream->self_ = stream;
  return stream;
}

void InvalidationStream::Subscribe() {
  std::weak_ptr<InvalidationStream> weak = weak_from_this();
  absl::StatusOr<std::shared_ptr<InvalidationHub::Subscription>> subscribed =
      hub_->Subscribe([weak] {
        if (std::shared_ptr<InvalidationStream> s = weak.lock()) s->Pump();
      });
  if (!subscribed.ok()) {
    LogWarning("invalidation subscriber \"%s\" (%s) refused: %s", subscriber_, ctx_->peer(),
               subscribed.status().message());
    Reject(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        std::string(subscribed.status().message())));
    return;
  }
  std::shared_ptr<InvalidationHub::Subscription> subscription = *std::move(subscribed);
  {
    // A wake-up that comes before this finds no subscription and does
    // nothing; the Pump below catches up.
    std::lock_guard<std::mutex> lock(mu_);
    subscription_ = std::move(subscription);
  }
  LogInfo("invalidation subscriber \"%s\" (%s) subscribed; %d subscribed", subscriber_,
          ctx_->peer(), hub_->subscriber_count());
  Pump();
}

void InvalidationStream::Reject(const grpc::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    finished_ = true;
  }
  Finish(status);
}

InvalidationStream::InvalidationStream(grpc::CallbackServerContext* ctx, InvalidationHub* hub,
                                       std::string subscriber)
    : ctx_(ctx),
      hub_(hub),
      // The name is the client's: bounded and escaped before it reaches a log.
      subscriber_(absl::CHexEscape(subscriber.substr(0, 64))) {}

void InvalidationStream::Pump() {
  enum class Action { kNone, kWrite, kFinish, kCancel };
  Action action = Action::kNone;
  grpc::Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_ || cancelling_ || subscription_ == nullptr) return;
    const bool closed = subscription_->closed();
    if (writing_) {
      // A write in flight when the hub closes may never complete (a client
      // that stopped reading): cancel it rather than hold up the shutdown.
      if (closed && !broken_ && !cancel_sent_) {
        cancel_sent_ = true;
        cancelling_ = true;
        action = Action::kCancel;
      }
    } else if (broken_) {
      finished_ = true;
      status = grpc::Status(grpc::StatusCode::CANCELLED, "invalidation stream cancelled");
      action = Action::kFinish;
    } else if (closed) {
      finished_ = true;
      status = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            "shorten-service is shutting down; subscribe again");
      action = Action::kFinish;
    } else if (std::optional<InvalidationBatch> batch = subscription_->Take()) {
      message_.Clear();
      message_.set_drop_all(batch->drop_all);
      for (std::string& code : batch->codes) message_.add_codes(std::move(code));
      writing_ = true;
      action = Action::kWrite;
    }
  }
  // gRPC calls outside the lock: a reaction may run inline and Pump again.
  switch (action) {
    case Action::kWrite:
      StartWrite(&message_);
      break;
    case Action::kFinish:
      Finish(status);
      break;
    case Action::kCancel:
      ctx_->TryCancel();
      {
        std::lock_guard<std::mutex> lock(mu_);
        cancelling_ = false;
      }
      Pump();  // whatever was held back meanwhile (a Finish)
      break;
    case Action::kNone:
      break;
  }
}

void InvalidationStream::OnWriteDone(bool ok) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    if (!ok) broken_ = true;
  }
  Pump();
}

void InvalidationStream::OnCancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    broken_ = true;
  }
  Pump();
}

void InvalidationStream::OnDone() {
  std::shared_ptr<InvalidationStream> keep;
  std::shared_ptr<InvalidationHub::Subscription> subscription;
  {
    std::lock_guard<std::mutex> lock(mu_);
    keep = std::move(self_);
    subscription = subscription_;
  }
  if (subscription != nullptr) hub_->Unsubscribe(subscription);
  LogInfo("invalidation subscriber \"%s\" gone; %d subscribed", subscriber_,
          hub_->subscriber_count());
  // `keep` may be the last reference: this object ends with the function.
}

}  // namespace shortener::service
