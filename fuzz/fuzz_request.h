// Turns a fuzzer's bytes into an HTTP request for the in-process fuzz targets, and signs it.
//
// The input's text form, as in the seed corpora:
//   METHOD SP TARGET LF
//   Name: value LF        (any number of header lines)
//   LF
//   body bytes ...
// Requests are signed after parsing (SigV4, root's key), so that mutated bodies and paths reach
// the parsers behind authentication, as a client that holds a key would send them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "auth/sigv4.h"
#include "common/clock.h"
#include "common/hash.h"
#include "http/http.h"

namespace serac::fuzz {

inline constexpr std::string_view kRootAccessKey = "FUZZROOTKEY";
inline constexpr std::string_view kRootSecretKey = "fuzz-root-secret-0123456789abcdefghijkl";

struct ParsedInput {
  http::Request request;
  std::string body;
};

inline std::string_view NextLine(std::string_view& rest) {
  const size_t end = rest.find('\n');
  std::string_view line = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// False when the first line is not "METHOD TARGET" (the input is then skipped: the HTTP parser,
// not these targets, is what fuzzes request lines).
inline bool ParseInput(const uint8_t* data, size_t size, ParsedInput& out) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::string_view first = NextLine(rest);
  const size_t space = first.find(' ');
  if (space == std::string_view::npos || space == 0 || space + 1 >= first.size()) return false;
  out.request.method = std::string(first.substr(0, space));
  out.request.target = std::string(first.substr(space + 1));
  const size_t question = out.request.target.find('?');
  out.request.path = out.request.target.substr(0, question);
  if (out.request.path.empty() || out.request.path[0] != '/') return false;
  out.request.query = question == std::string::npos ? "" : out.request.target.substr(question + 1);
  while (!rest.empty()) {
    std::string_view line = NextLine(rest);
    if (line.empty()) break;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    out.request.headers.push_back({std::string(line.substr(0, colon)), std::string(value)});
  }
  out.body = std::string(rest);
  out.request.request_id = "FUZZ";
  out.request.remote_address = "127.0.0.1:1";
  return true;
}

// Signs the request with root's key for `service` unless it already carries an Authorization
// header (a seed that tests bearer tokens, or a signature of its own).
inline void SignAsRoot(ParsedInput& input, std::string_view service, auth::UriEncoding encoding) {
  http::Request& request = input.request;
  if (request.FindHeader("Authorization") != nullptr) return;
  if (request.FindHeader("Host") == nullptr) request.headers.push_back({"Host", "127.0.0.1:9000"});
  if (!input.body.empty() && request.FindHeader("Content-Length") == nullptr) {
    request.headers.push_back({"Content-Length", std::to_string(input.body.size())});
  }
  auth::SignOptions sign;
  sign.service = std::string(service);
  sign.uri_encoding = encoding;
  sign.now = Now();
  // A payload mode the input names (UNSIGNED-PAYLOAD, aws-chunked) is signed as it is.
  const std::string* payload = request.FindHeader("x-amz-content-sha256");
  sign.payload_sha256_hex = payload != nullptr ? *payload : Sha256Hex(input.body);
  auth::SignRequest(request.method, request.path, request.query, request.headers,
                    {std::string(kRootAccessKey), std::string(kRootSecretKey), ""}, sign);
}

}  // namespace serac::fuzz
