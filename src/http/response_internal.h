// Pieces of the HTTP wire format that need no socket: response heads, the server's own error
// documents, request-target splitting and the access log line. Kept apart from server.cc so they
// are testable without Beast.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"

namespace serac::http::internal {

// Splits a raw request-target at the first '?'; nothing is decoded.
void SplitTarget(std::string_view target, std::string& path, std::string& query);

std::string_view ReasonPhrase(int status);

// "HTTP/1.1 <status> <reason>" plus the handler's headers (CR/LF stripped, framing headers the
// server owns dropped), Server, Date, the request id under `request_id_header` (when that is not
// empty and the handler did not set it), Content-Length when given, and "Connection: close" when
// `close`. Ends with the blank line.
std::string BuildResponseHead(int status, const std::vector<Header>& handler_headers,
                              std::optional<uint64_t> content_length, bool close,
                              std::string_view request_id_header, std::string_view request_id);

struct AccessLogEntry {
  std::string_view remote_address;
  std::string_view method;
  std::string_view path;  // never the query: presigned URLs carry signatures there
  int status = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  double duration_ms = 0;
  std::string_view request_id;
  std::string_view operation;
  std::string_view principal;
};
std::string FormatAccessLog(const AccessLogEntry& entry);

}  // namespace serac::http::internal
