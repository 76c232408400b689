// The web console under /_serac/console: the page and its assets, built from ../console (TypeScript)
// and embedded in the binary at build time, and its API under /_serac/console/api.
//
// Signing in exchanges an access key and its secret for a session: an HttpOnly, SameSite=Strict
// cookie (Secure under TLS), scoped to the API's path, holding a sealed token
// (auth/tokens.h, ConsoleSession) that expires after limits::kConsoleSessionTtl and is refused
// once signed out. Every other API request must also carry the session's anti-forgery value in the
// X-Serac-Csrf header, which only a page of this origin that asked GET session can know; the
// cookie alone is never enough. Failed sign-ins are slowed down per address and key
// (auth/sign_in_throttle.h).
//
// The console calls serac's own APIs with the session's principal, so what a user may do is
// exactly what IAM allows them, checked by the server:
//   /_serac/console/api/s3/...       the S3 API (path style)              -> s3::S3Service::HandleAs
//   /_serac/console/api/iceberg/...  the Iceberg REST catalog (/_iceberg) ->
//   catalog::CatalogService::HandleAs
//   /_serac/console/api/admin/...    the admin API (/_serac/admin)       -> admin::AdminApi::HandleAs
// and a few routes of its own (console_api.cc): session, overview, metrics, presign, engine-config.
//
// Every answer carries a strict Content-Security-Policy (no inline script or style, nothing from
// another origin, no framing) and nosniff. Thread-safe: one instance serves all connections.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/http.h"

namespace serac::auth {
class IdentityService;
}
namespace serac::meta {
class MetaStore;
}
namespace serac::s3 {
class S3Service;
}
namespace serac::catalog {
class CatalogService;
}
namespace serac::admin {
class AdminApi;
}

namespace serac::console {

inline constexpr std::string_view kConsolePath = "/_serac/console";
inline constexpr std::string_view kConsoleApiPath = "/_serac/console/api";
inline constexpr std::string_view kSessionCookie = "serac_console";
inline constexpr std::string_view kCsrfHeader = "x-serac-csrf";

struct ConsoleOptions {
  std::string version;    // shown on the overview
  std::string node_name;  // --node-name, if any
  std::string region;     // what presigned links are signed for
  // The Prometheus text /_serac/metrics serves, for the overview's charts.
  std::function<std::string()> render_metrics;
};

// The services the console's API calls on the session's behalf; every one must outlive it.
struct ConsoleServices {
  meta::MetaStore* meta = nullptr;
  const auth::IdentityService* identity = nullptr;
  s3::S3Service* s3 = nullptr;
  catalog::CatalogService* catalog = nullptr;
  admin::AdminApi* admin = nullptr;
};

class ConsoleService {
 public:
  ConsoleService(ConsoleServices services, ConsoleOptions options);
  ~ConsoleService();
  ConsoleService(const ConsoleService&) = delete;
  ConsoleService& operator=(const ConsoleService&) = delete;

  // Serves a request whose path is kConsolePath or below it.
  void Handle(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
              http::RequestOutcome& outcome);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether this binary holds the console's page (a build with -DSERAC_CONSOLE=OFF does not: the
// console then answers with a page that says so).
bool ConsoleAssetsBuiltIn();

}  // namespace serac::console
