// The HTTP surface handlers see: a parsed request head, a streaming body reader and a response
// writer. Beast and Asio stay inside server.cc; handlers never see them.
//
// Threading: each request is served by one thread; a handler runs on that thread and may block
// (disk, database, a slow body) without stalling other connections. Request/BodyReader/ResponseWriter
// objects are owned by the connection and valid only during the handler call.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace serac::http {

struct Header {
  std::string name;   // as received (case preserved)
  std::string value;  // leading/trailing whitespace trimmed
};

struct Request {
  std::string method;  // "GET", "PUT", ...
  std::string target;  // raw request-target as received: "/bucket/key%20x?uploads"
  std::string path;    // raw (still percent-encoded) path part of target
  std::string query;   // raw query string without '?', may be empty
  std::vector<Header> headers;
  std::string remote_address;  // "127.0.0.1:54321"
  bool tls = false;
  std::string request_id;  // assigned by the server; sent back under ServerOptions::request_id_header

  // Case-insensitive lookup of the first header with this name.
  const std::string* FindHeader(std::string_view name) const;
  std::string_view HeaderOr(std::string_view name, std::string_view fallback = {}) const;
  // Values of every header with this name, in order.
  std::vector<std::string_view> FindHeaders(std::string_view name) const;
};

// Streams the request body, with HTTP chunked framing already removed. Bytes arrive as the client
// sends them; memory stays bounded by the caller's buffer.
class BodyReader {
 public:
  virtual ~BodyReader() = default;
  // Reads up to `capacity` bytes. Returns 0 at end of body. kIncompleteBody if the client
  // disconnects or sends less than announced; kTimeout if the client stalls; kLimitExceeded if the
  // body exceeds the limit set with SetLimit.
  virtual Result<size_t> Read(char* buffer, size_t capacity) = 0;
  // Content-Length if the client sent one; nullopt for Transfer-Encoding: chunked.
  virtual std::optional<uint64_t> content_length() const = 0;
  // Refuses bodies longer than `bytes_max` (checked against Content-Length at once, else while reading).
  virtual void SetLimit(uint64_t bytes_max) = 0;
  // Reads the rest of the body into memory (for XML/JSON requests); kLimitExceeded past bytes_max.
  Result<std::string> ReadAll(uint64_t bytes_max);
  // Reads and discards the rest of the body so the connection can be reused.
  Status Drain();
};

// Writes one response. Either Send() a complete body, or Begin() with a known length and then
// Write()/SendFile() exactly that many bytes. Headers Date, Server, the request id and Connection
// are added by the server.
class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  virtual void SetStatus(int status) = 0;
  virtual void AddHeader(std::string_view name, std::string_view value) = 0;
  // Sends the head and the whole body. Content-Length is set from body.size().
  virtual Status Send(std::string_view body) = 0;
  // Sends the head with Content-Length: content_length; the body follows with Write/SendFile.
  virtual Status Begin(uint64_t content_length) = 0;
  virtual Status Write(const char* data, size_t size) = 0;
  // Writes the pieces in order, as Write on each would, in as few system calls as the transport
  // allows: a body assembled from many stored pieces need not be copied together first.
  virtual Status WriteGathered(std::span<const std::string_view> pieces) {
    for (std::string_view piece : pieces) SERAC_RETURN_IF_ERROR(Write(piece.data(), piece.size()));
    return Status::Ok();
  }
  // Copies `length` bytes from `fd` at `offset` to the client (sendfile(2) on plain TCP).
  virtual Status SendFile(int fd, uint64_t offset, uint64_t length) = 0;
  // Sends "100 Continue" if the client asked for it and it has not been sent yet. Handlers call
  // this once they have decided to read the body; BodyReader::Read calls it on first use too.
  virtual Status SendContinue() = 0;
  // True once any byte of the response head has been sent.
  virtual bool started() const = 0;
  virtual int status() const = 0;
  // After a body-level error the connection is closed instead of reused.
  virtual void CloseAfterResponse() = 0;
};

// Per-request facts the handler reports back for the access log and metrics.
struct RequestOutcome {
  std::string operation = "unknown";  // "PutObject", "GetObject", "Health", ...
  std::string principal;              // access key id, never a secret
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

using Handler = std::function<void(const Request&, BodyReader&, ResponseWriter&, RequestOutcome&)>;

// An error the server answers by itself, before or instead of a handler: a request that is not
// valid HTTP, a head over its limits, too many connections, a handler that answered nothing. The
// protocol served at `path` decides how it reads (ServerOptions::error_renderer).
struct ServerErrorInfo {
  std::string_view path;  // "/" when no request was read
  int status = 500;
  std::string_view code;  // what went wrong, e.g. "RequestHeaderSectionTooLarge", "BadRequest"
  std::string_view message;
  std::string_view request_id;
};
struct ErrorDocument {
  std::string content_type;
  std::string body;
};
using ErrorRenderer = std::function<ErrorDocument(const ServerErrorInfo&)>;
// Without a renderer: text/plain "<code>: <message>\n".
ErrorDocument PlainTextErrorDocument(const ServerErrorInfo& error);

}  // namespace serac::http
