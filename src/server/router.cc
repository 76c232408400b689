#include "server/router.h"

#include <utility>

#include "admin/admin_api.h"
#include "catalog/catalog_service.h"
#include "common/encoding.h"
#include "common/log.h"
#include "s3/s3_service.h"

namespace serac::server {

namespace {

constexpr std::string_view kSeracPrefix = "/_serac";
constexpr std::string_view kIcebergPrefix = "/_iceberg";
constexpr std::string_view kAdminPrefix = "/_serac/admin";
constexpr std::string_view kConsolePrefix = "/_serac/console";
constexpr std::string_view kJsonContentType = "application/json";
constexpr std::string_view kTextContentType = "text/plain; charset=utf-8";
constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
// Bucket names cannot start with '_', so the lookup is cheap and always answers kNotFound from a
// healthy store; any other error means the store cannot serve requests.
constexpr std::string_view kReadinessProbeBucket = "_serac-readiness-probe";

void SendBody(http::ResponseWriter& response, int status, std::string_view content_type,
              std::string_view body) {
  response.SetStatus(status);
  response.AddHeader("Content-Type", content_type);
  response.AddHeader("Cache-Control", "no-store");
  Status sent = response.Send(body);
  if (!sent.ok()) log::Debug("router: response not sent: " + sent.ToString());
}

// Requests to our own endpoints carry no meaningful body; rather than read an unbounded one,
// close the connection after answering.
void RefuseBody(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response) {
  std::optional<uint64_t> length = body.content_length();
  bool has_body = length ? *length > 0 : request.FindHeader("Transfer-Encoding") != nullptr;
  if (has_body) response.CloseAfterResponse();
}

std::string_view StripPort(std::string_view host) {
  if (!host.empty() && host.front() == '[') {  // [v6]:port
    size_t close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  size_t colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

}  // namespace

bool PathIsUnder(std::string_view path, std::string_view prefix) {
  if (!path.starts_with(prefix)) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '/';
}

Router::Router(meta::MetaStore* meta, const http::Metrics* metrics, http::Handler s3, RouterOptions options)
    : meta_(meta), metrics_(metrics), s3_(std::move(s3)), options_(std::move(options)) {
  options_.domain = AsciiLower(options_.domain);
}

bool Router::IsVirtualHostRequest(const http::Request& request) const {
  if (options_.domain.empty()) return false;
  std::string host = AsciiLower(StripPort(request.HeaderOr("Host")));
  if (!host.empty() && host.back() == '.') host.pop_back();  // fully qualified form
  const std::string suffix = "." + options_.domain;
  return host.size() > suffix.size() && host.ends_with(suffix);
}

void Router::Handle(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
                    http::RequestOutcome& outcome) const {
  if (!options_.node_name.empty()) response.AddHeader("x-serac-node", options_.node_name);
  if (!IsVirtualHostRequest(request)) {
    if (options_.admin && PathIsUnder(request.path, kAdminPrefix)) {
      options_.admin(request, body, response, outcome);  // reads its own (bounded) body
      return;
    }
    if (options_.console && PathIsUnder(request.path, kConsolePrefix)) {
      options_.console(request, body, response, outcome);  // reads its own (bounded) bodies
      return;
    }
    if (PathIsUnder(request.path, kSeracPrefix)) {
      RefuseBody(request, body, response);
      HandleSerac(request, response, outcome);
      return;
    }
    if (PathIsUnder(request.path, kIcebergPrefix)) {
      if (options_.iceberg) {
        options_.iceberg(request, body, response, outcome);
        return;
      }
      RefuseBody(request, body, response);
      outcome.operation = "IcebergNotImplemented";
      SendBody(response, 501, kJsonContentType, kIcebergNotAvailableJson);
      return;
    }
  }
  s3_(request, body, response, outcome);
}

void Router::HandleSerac(const http::Request& request, http::ResponseWriter& response,
                         http::RequestOutcome& outcome) const {
  const std::string& path = request.path;
  bool is_read = request.method == "GET" || request.method == "HEAD";
  if (is_read && path == "/_serac/health/live") {
    outcome.operation = "HealthLive";
    SendBody(response, 200, kTextContentType, "ok\n");
  } else if (is_read && path == "/_serac/health/ready") {
    outcome.operation = "HealthReady";
    Result<meta::BucketRecord> probe = meta_->GetBucket(std::string(kReadinessProbeBucket));
    bool ready = probe.ok() || probe.status().code() == ErrorCode::kNotFound;
    if (!ready) log::Warn("readiness: metadata store unavailable: " + probe.status().ToString());
    if (ready && options_.blobs_reachable) {
      Status blobs = options_.blobs_reachable();
      ready = blobs.ok();
      if (!ready) log::Warn("readiness: blob store unavailable: " + blobs.ToString());
    }
    SendBody(response, ready ? 200 : 503, kTextContentType, ready ? "ready\n" : "not ready\n");
  } else if (is_read && path == "/_serac/metrics") {
    outcome.operation = "Metrics";
    std::string text = metrics_->Render();
    if (options_.more_metrics) text += options_.more_metrics();
    if (!options_.node_name.empty()) {
      text +=
          "# HELP serac_node_info The server that answered (--node-name).\n# TYPE serac_node_info gauge\n"
          "serac_node_info{node=\"" +
          options_.node_name + "\"} 1\n";
    }
    SendBody(response, 200, kMetricsContentType, text);
  } else {
    outcome.operation = "SeracNotFound";
    SendBody(response, 404, kJsonContentType,
             R"({"error":{"message":"no such serac endpoint","type":"NotFoundException","code":404}})");
  }
}

http::ErrorDocument ServerErrorDocument(const http::ServerErrorInfo& error) {
  if (error.path.starts_with(kAdminPrefix)) return admin::ServerErrorDocument(error);
  if (error.path.starts_with(kIcebergPrefix) || error.path.starts_with("/_serac")) {
    return catalog::ServerErrorDocument(error);
  }
  return s3::ServerErrorDocument(error);
}

}  // namespace serac::server
