// The seam between the click sender and the shorten-service: one blocking
// RecordClicks call per batch. Blocking is fine here: only the sender's own
// thread calls it, never an event loop or a gRPC reactor.
//
// GrpcClickTransport shares the edge's channel (its connection and API key)
// with the upstream's other users and makes its own stub on it.
//
// Thread safety: GrpcClickTransport::Send is thread-safe (gRPC stubs are).
#ifndef SHORTENER_EDGE_CLICKS_CLICK_TRANSPORT_H_
#define SHORTENER_EDGE_CLICKS_CLICK_TRANSPORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "edge/clicks/click_event.h"
#include "grpcpp/channel.h"
#include "shortener/v1/shortener.grpc.pb.h"

namespace shortener::edge {

// An event of a batch the service refused (RecordClicksResponse.refused).
struct RefusedClick {
  int index = 0;       // in ClickBatch::events, as the service reported it
  std::string reason;  // "user_agent: invalid UTF-8 at byte 3 (0xFF)"
};

// What the service answered to a batch it took.
struct ClickSendResult {
  int64_t accepted = 0;               // events counted by this call
  std::vector<RefusedClick> refused;  // malformed events, never recorded
};

class ClickTransport {
 public:
  virtual ~ClickTransport() = default;
  // Sends `batch` and waits up to `timeout` for the answer: the service's
  // answer once it has recorded the batch (or had already: same batch id);
  // otherwise the call's status (UNAVAILABLE, DEADLINE_EXCEEDED,
  // PERMISSION_DENIED, INVALID_ARGUMENT for a batch refused as a whole, ...).
  virtual absl::StatusOr<ClickSendResult> Send(const ClickBatch& batch, absl::Duration timeout) = 0;
};

class GrpcClickTransport : public ClickTransport {
 public:
  // `channel` carries the edge's API key.
  explicit GrpcClickTransport(std::shared_ptr<grpc::Channel> channel);
  absl::StatusOr<ClickSendResult> Send(const ClickBatch& batch, absl::Duration timeout) override;

 private:
  std::unique_ptr<v1::ShortenService::Stub> stub_;
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_CLICKS_CLICK_TRANSPORT_H_
