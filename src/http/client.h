// A small synchronous HTTP/1.1 client for serac's own outgoing calls (the command line, the sync
// catalog client): one request per connection, whole bodies in memory, every wait bounded by a
// deadline. https verifies the server certificate against the system store (or a given CA file)
// unless explicitly told not to. Beast and OpenSSL stay inside client.cc.
// Thread-safe: Send keeps no state between calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/limits.h"
#include "common/status.h"
#include "http/http.h"

namespace serac::http {

// The pieces of an http(s) URL that a request needs.
struct Url {
  bool tls = false;
  std::string host;   // without brackets for IPv6 literals
  uint16_t port = 0;  // defaulted from the scheme when the URL has none
  std::string path;   // raw, still percent-encoded; "/" when the URL has none
  std::string query;  // raw, without '?'

  // The Host header value: "host", "host:port" or "[v6]:port"; the port is left out when default.
  std::string HostHeader() const;
  // path plus "?query" when there is one.
  std::string Target() const;
};

// Parses "http://host[:port][/path][?query]" (and https). kInvalidArgument on anything else
// (other schemes, user-info, fragments, a bad port).
Result<Url> ParseUrl(std::string_view url);

struct ClientRequest {
  std::string method = "GET";
  std::string url;
  // Sent as given; Host is added when absent (sign with the same Host), Content-Length always.
  std::vector<Header> headers;
  std::string body;
  std::chrono::milliseconds connect_timeout = limits::kHttpClientConnectTimeout;
  std::chrono::milliseconds timeout = limits::kHttpClientRequestTimeout;  // the whole exchange
  uint64_t response_body_bytes_max = limits::kHttpClientResponseBodyBytesMax;
  // TLS: a PEM file of trusted CAs instead of the system store; or no verification at all
  // (self-signed test servers only: anyone in the path can then read and change the traffic).
  std::string tls_ca_file;
  bool tls_insecure = false;
};

struct ClientResponse {
  int status = 0;
  std::vector<Header> headers;
  std::string body;

  const std::string* FindHeader(std::string_view name) const;  // case-insensitive, first match
};

// Sends one request and reads the whole response. Any HTTP status is a successful Result; errors
// are transport failures: kInvalidArgument (bad URL), kUnavailable (cannot resolve or connect, TLS
// handshake or certificate failure, connection dropped), kTimeout, kLimitExceeded (response head or
// body over its limit). Messages name the endpoint.
// `request_sent`, when given, is set to whether any byte of the request went out before a failure:
// if so the server may have acted on it (a write's outcome is then unknown), else it cannot have.
Result<ClientResponse> Send(const ClientRequest& request, bool* request_sent = nullptr);

}  // namespace serac::http
