#include "http/response_internal.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "common/clock.h"
#include "common/encoding.h"

namespace serac::http::internal {
namespace {

bool IsTokenChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsValidHeaderName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

// The server frames every response itself; a handler's copy of these would contradict it.
bool IsFramingHeader(std::string_view name) {
  return AsciiEqualsIgnoreCase(name, "Content-Length") || AsciiEqualsIgnoreCase(name, "Transfer-Encoding") ||
         AsciiEqualsIgnoreCase(name, "Connection");
}

bool HasHeader(const std::vector<Header>& headers, std::string_view name) {
  for (const Header& header : headers) {
    if (AsciiEqualsIgnoreCase(header.name, name)) return true;
  }
  return false;
}

// A CR or LF in a value would let a handler's data split the response; replace them.
void AppendSanitizedValue(std::string& out, std::string_view value) {
  for (char c : value) {
    out += (c == '\r' || c == '\n' || c == '\0') ? ' ' : c;
  }
}

void AppendHeader(std::string& out, std::string_view name, std::string_view value) {
  out.append(name);
  out += ": ";
  AppendSanitizedValue(out, value);
  out += "\r\n";
}

// Keeps a log line one line with space-separated fields whatever the client sent.
// Appends `value` with spaces, control bytes, non-ASCII and quotes as %XX, or "-" when empty.
void AppendLogField(std::string& out, std::string_view value) {
  if (value.empty()) {
    out += '-';
    return;
  }
  static constexpr char kHex[] = "0123456789ABCDEF";
  size_t clean_from = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    auto byte = static_cast<unsigned char>(value[i]);
    if (byte > 0x20 && byte < 0x7f && byte != '"') continue;
    out.append(value.data() + clean_from, i - clean_from);
    out += '%';
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
    clean_from = i + 1;
  }
  out.append(value.data() + clean_from, value.size() - clean_from);
}

}  // namespace

void SplitTarget(std::string_view target, std::string& path, std::string& query) {
  size_t question = target.find('?');
  if (question == std::string_view::npos) {
    path.assign(target);
    query.clear();
    return;
  }
  path.assign(target.substr(0, question));
  query.assign(target.substr(question + 1));
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 206:
      return "Partial Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 416:
      return "Range Not Satisfiable";
    case 419:
      return "Authentication Timeout";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Unknown";
  }
}

std::string BuildResponseHead(int status, const std::vector<Header>& handler_headers,
                              std::optional<uint64_t> content_length, bool close,
                              std::string_view request_id_header, std::string_view request_id) {
  std::string head = "HTTP/1.1 " + std::to_string(status) + " ";
  head.append(ReasonPhrase(status));
  head += "\r\n";
  for (const Header& header : handler_headers) {
    if (!IsValidHeaderName(header.name) || IsFramingHeader(header.name)) continue;
    AppendHeader(head, header.name, header.value);
  }
  if (!HasHeader(handler_headers, "Server")) AppendHeader(head, "Server", "serac");
  if (!HasHeader(handler_headers, "Date")) AppendHeader(head, "Date", FormatHttpDate(Now()));
  if (!request_id_header.empty() && !HasHeader(handler_headers, request_id_header)) {
    AppendHeader(head, request_id_header, request_id);
  }
  if (content_length) AppendHeader(head, "Content-Length", std::to_string(*content_length));
  if (close) AppendHeader(head, "Connection", "close");
  head += "\r\n";
  return head;
}

std::string FormatAccessLog(const AccessLogEntry& entry) {
  // Tenths of a millisecond, rounded, without printf's locale-aware float formatting.
  const auto tenths = static_cast<uint64_t>(std::max(0.0, entry.duration_ms) * 10 + 0.5);
  std::string line;
  line.reserve(160 + entry.path.size());
  line += "access";
  auto name = [&](std::string_view key) {
    line += ' ';
    line += key;
    line += '=';
  };
  auto field = [&](std::string_view key, std::string_view value) {
    name(key);
    AppendLogField(line, value);
  };
  auto number = [&](std::string_view key, uint64_t value) {
    name(key);
    line += std::to_string(value);
  };
  field("remote", entry.remote_address);
  field("method", entry.method);
  field("path", entry.path);
  number("status", static_cast<uint64_t>(entry.status));
  number("in", entry.bytes_in);
  number("out", entry.bytes_out);
  number("ms", tenths / 10);
  line += '.';
  line += static_cast<char>('0' + tenths % 10);
  field("id", entry.request_id);
  field("op", entry.operation);
  field("principal", entry.principal);
  return line;
}

}  // namespace serac::http::internal
