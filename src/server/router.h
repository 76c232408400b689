// The first stop of every request after the HTTP layer: serac's own endpoints under /_serac
// (health, metrics, the admin API under /_serac/admin, the web console under /_serac/console), the Iceberg
// REST catalog under /_iceberg, and S3 for everything else. Bucket names cannot start with '_', so these
// prefixes never hide a bucket; in virtual-host style the path is an object key, so such requests always go
// to S3. Thread-safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "http/http.h"
#include "http/metrics.h"
#include "meta/meta_store.h"

namespace serac::server {

inline constexpr std::string_view kIcebergNotAvailableJson =
    R"({"error":{"message":"the Iceberg REST catalog is not available yet","type":"NotImplementedException","code":501}})";

struct RouterOptions {
  std::string domain;     // --domain: hosts "<bucket>.<domain>" are virtual-host style S3 requests
  http::Handler iceberg;  // serves /_iceberg; when empty, those requests get a 501 error
  http::Handler admin;    // serves /_serac/admin (admin/admin_api.h); when empty, those paths are 404
  http::Handler console;  // serves /_serac/console (console/console_service.h); when empty, 404
  std::function<std::string()> more_metrics;  // appended to /_serac/metrics (table maintenance's)
  // Asked by the readiness probe after the metadata store: whether the blob store answers (an
  // upstream S3 service may not); null: not asked.
  std::function<Status()> blobs_reachable;
  // Which server of several answered: sent as x-serac-node on every response the router hands out
  // and as serac_node_info in the metrics; empty: neither.
  std::string node_name;
};

class Router {
 public:
  // `meta` answers the readiness probe, `metrics` renders /_serac/metrics, `s3` serves the rest.
  Router(meta::MetaStore* meta, const http::Metrics* metrics, http::Handler s3, RouterOptions options);

  void Handle(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
              http::RequestOutcome& outcome) const;

 private:
  void HandleSerac(const http::Request& request, http::ResponseWriter& response,
                   http::RequestOutcome& outcome) const;
  bool IsVirtualHostRequest(const http::Request& request) const;

  meta::MetaStore* meta_;
  const http::Metrics* metrics_;
  http::Handler s3_;
  RouterOptions options_;
};

// The document for an error the HTTP server answers by itself (http::ServerOptions::error_renderer),
// in the dialect of whatever serves `error.path`: the admin API's JSON under /_serac/admin, the
// catalog's under /_iceberg and the rest of /_serac (health, metrics), S3's XML elsewhere.
http::ErrorDocument ServerErrorDocument(const http::ServerErrorInfo& error);

// True when `path` is `prefix` itself or continues below it ("/_iceberg", "/_iceberg/v1/config").
bool PathIsUnder(std::string_view path, std::string_view prefix);

}  // namespace serac::server
