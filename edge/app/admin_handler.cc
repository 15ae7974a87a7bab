#include "edge/app/admin_handler.h"

#include <string>

#include "edge/http_status.h"
#include "edge/request_target.h"
#include "edge/response_builder.h"

namespace shortener::edge {
void AdminHandler::Handle(http::Exchange& exchange) {
  const http::Request& request = exchange.request();
  const Method method = ParseMethod(request.method);
  ResponseOptions options;
  options.keep_alive = request.keep_alive;
  options.head = method == Method::kHead;
  options.date = exchange.http_date();
  if (method == Method::kOther) {
    AppendResponse(exchange.out(), PlanForTarget(TargetKind::kMethodNotAllowed), options);
    return;
  }
  absl::string_view path = request.target;
  path = path.substr(0, path.find('?'));
  if (path == "/metrics") {
    // The text must outlive the plan that views it: both live until AppendResponse
    // has copied the bytes.
    const std::string text = sources_.metrics_text();
    ResponsePlan plan;
    plan.status = 200;
    plan.reason = "OK";
    plan.headers = "Cache-Control: no-store\r\n";
    plan.body = text;
    AppendResponse(exchange.out(), plan, options);
  } else if (path == "/healthz") {
    AppendResponse(exchange.out(), PlanForTarget(TargetKind::kHealthz), options);
  } else if (path == "/readyz") {
    AppendResponse(exchange.out(), PlanForReadiness(sources_.ready()), options);
  } else {
    ResolveResult unknown;
    unknown.outcome = ResolveOutcome::kNotFound;
    AppendResponse(exchange.out(), PlanForOutcome(unknown), options);
  }
}

}  // namespace shortener::edge
