// Client side of API-key authentication: a channel that adds
// `authorization: Bearer <key>` to every call it carries, and reading a key
// from a file.
//
// Why an interceptor and not call credentials: gRPC refuses to send call
// credentials over a plaintext channel, and plaintext on loopback or inside
// a private network is a supported set-up (TLS is optional). The key is
// still only ever sent to the one target of the channel.
//
// Thread safety: the channel is thread-safe like any gRPC channel; the
// functions are stateless.
#ifndef SHORTENER_LIB_GRPCUTIL_API_KEY_CHANNEL_H_
#define SHORTENER_LIB_GRPCUTIL_API_KEY_CHANNEL_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace shortener::grpcutil {

// A channel to `target` over `credentials` whose every call carries the
// key. An empty `api_key` gives a plain channel (no header).
std::shared_ptr<grpc::Channel> CreateChannelWithApiKey(
    const std::string& target, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const grpc::ChannelArguments& args, const std::string& api_key);

// The key in `path`: the file's content without surrounding whitespace
// (a trailing newline is normal). INVALID_ARGUMENT naming `flag` and the
// path when the file cannot be read, is empty, or holds characters a header
// cannot carry (anything but printable ASCII without spaces); the key is
// never echoed. The file's mode is checked as every secret file's
// (CheckSecretFile, lib/common/private_file.h): FAILED_PRECONDITION when
// other users may write it or it is not a regular file, a warning when they
// may read it.
absl::StatusOr<std::string> ReadApiKeyFile(const std::string& flag, const std::string& path);

}  // namespace shortener::grpcutil

#endif  // SHORTENER_LIB_GRPCUTIL_API_KEY_CHANNEL_H_
