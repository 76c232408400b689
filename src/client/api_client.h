// The client side of the catalog API for the command line: where the server is, which keys sign
// the requests (SigV4, service s3tables, the generic URI encoding the catalog verifies), and how an
// Iceberg error response becomes a message for the user.
// Thread-safe: ApiClient is immutable after construction.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "client/catalog_requests.h"
#include "common/clock.h"
#include "common/status.h"
#include "http/client.h"

namespace serac::client {

inline constexpr std::string_view kDefaultEndpoint = "http://127.0.0.1:9000";
inline constexpr std::string_view kCatalogSigningName = "s3tables";

struct Connection {
  std::string endpoint = std::string(kDefaultEndpoint);  // scheme://host[:port], maybe a path prefix
  std::string access_key;
  std::string secret_key;  // never printed
  std::string region = "us-east-1";
  std::string ca_file;    // trusted CAs for https (PEM); empty = system store
  bool insecure = false;  // skip certificate verification (self-signed test servers)
};

// What the command line said; empty strings mean "not given".
struct ConnectionFlags {
  std::string endpoint;
  std::string access_key;
  std::string secret_key;
  std::string region;
  std::string ca_file;
  bool insecure = false;
};

// Flags first, then SERAC_ENDPOINT / SERAC_ACCESS_KEY / SERAC_SECRET_KEY / SERAC_REGION from
// `environment` (a getenv-like lookup returning nullptr when unset), then the defaults.
Connection ResolveConnection(const ConnectionFlags& flags,
                             const std::function<const char*(const char* name)>& environment);

// The signed HTTP request for `api` at `now`. kInvalidArgument when the endpoint is not a URL.
Result<http::ClientRequest> BuildSignedRequest(const Connection& connection, const ApiRequest& api,
                                               WallTime now);

// The user-facing message for a failed response: the IcebergErrorResponse's message and type when
// the body is one, else the status and the start of the body.
std::string ErrorMessageFromResponse(int status, std::string_view body);

class ApiClient {
 public:
  explicit ApiClient(Connection connection) : connection_(std::move(connection)) {}

  // Sends `api` and returns the body of a 2xx response. Errors: the server's error message
  // (kInvalidArgument, kNotFound, kAlreadyExists, kConflict, kAccessDenied, ... by HTTP status),
  // or a transport failure that names the endpoint.
  Result<std::string> Call(const ApiRequest& api) const;

  const Connection& connection() const { return connection_; }

 private:
  Connection connection_;
};

}  // namespace serac::client
