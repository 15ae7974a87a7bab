#include "lib/grpcutil/api_key_channel.h"

#include <grpcpp/support/client_interceptor.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lib/common/private_file.h"

namespace shortener::grpcutil {
namespace {

class BearerInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BearerInterceptor(const std::string* header_value) : header_value_(header_value) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace("authorization", *header_value_);
    }
    methods->Proceed();
  }

 private:
  const std::string* header_value_;  // owned by the factory, which the channel keeps
};

class BearerInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerInterceptorFactory(const std::string& api_key)
      : header_value_(absl::StrCat("Bearer ", api_key)) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new BearerInterceptor(&header_value_);
  }

 private:
  const std::string header_value_;
};

}  // namespace

std::shared_ptr<grpc::Channel> CreateChannelWithApiKey(
    const std::string& target, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const grpc::ChannelArguments& args, const std::string& api_key) {
  if (api_key.empty()) return grpc::CreateCustomChannel(target, credentials, args);
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> factories;
  factories.push_back(std::make_unique<BearerInterceptorFactory>(api_key));
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, credentials, args,
                                                                 std::move(factories));
}

absl::StatusOr<std::string> ReadApiKeyFile(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": cannot read ", path, ": ", std::strerror(errno)));
  }
  if (absl::Status mode = CheckSecretFile(path, absl::StrCat("--", flag)); !mode.ok()) {
    return mode;
  }
  std::stringstream content;
  content << in.rdbuf();
  std::string key(absl::StripAsciiWhitespace(content.str()));
  if (key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", path, " is empty"));
  }
  for (char c : key) {
    if (c < '!' || c > '~') {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, ": ", path,
          " holds characters an API key cannot have (printable ASCII without spaces only)"));
    }
  }
  return key;
}

}  // namespace shortener::grpcutil
