// GetObject and HeadObject: conditions, ranges, part numbers, stored headers, and streaming of
// inline bytes or blob segments (sendfile when the back end has file descriptors).
#include <algorithm>
#include <functional>

#include "common/clock.h"
#include "common/encoding.h"
#include "common/limits.h"
#include "objects/object_io.h"
#include "s3/s3_internal.h"

namespace serac::s3 {

namespace {

struct StoredHeaderOverride {
  const char* response_name;   // header sent
  const char* query_override;  // response-* query parameter that replaces it
  std::string meta::ObjectHeaders::*field;
};
constexpr StoredHeaderOverride kStoredHeaders[] = {
    {"Content-Encoding", "response-content-encoding", &meta::ObjectHeaders::content_encoding},
    {"Content-Language", "response-content-language", &meta::ObjectHeaders::content_language},
    {"Content-Disposition", "response-content-disposition", &meta::ObjectHeaders::content_disposition},
    {"Cache-Control", "response-cache-control", &meta::ObjectHeaders::cache_control},
    {"Expires", "response-expires", &meta::ObjectHeaders::expires},
};

// The stretch of the object to send and how to label it.
struct Selection {
  ByteRange range;
  bool partial = false;
};

// A part of a multipart object, or the whole of a simple object as part 1.
HandlerResult SelectPart(const meta::ObjectRecord& object, std::string_view part_text, Selection& selection) {
  auto part = ParseUint64(part_text);
  if (!part || *part < 1 || *part > limits::kPartNumberMax)
    return InvalidArgument("Part number must be an integer between 1 and 10000, inclusive");
  uint64_t parts = object.part_count == 0 ? 1 : object.part_count;
  if (*part > parts)
    return MakeError(416, "InvalidPartNumber", "The requested partnumber is not satisfiable");
  if (object.part_count == 0 || object.segments.size() != object.part_count) {
    // A simple object is its own single part; objects without per-part segments serve whole.
    selection.range = {0, object.size};
    selection.partial = object.part_count != 0;
    return kHandled;
  }
  uint64_t offset = 0;
  for (uint64_t i = 0; i + 1 < *part; ++i) offset += object.segments[i].size;
  selection.range = {offset, object.segments[*part - 1].size};
  selection.partial = true;
  return kHandled;
}

HandlerResult SelectBytes(RequestContext& ctx, const meta::ObjectRecord& object, Selection& selection) {
  const std::string* range_header = ctx.request.FindHeader("range");
  if (const std::string* part = ctx.query.Find("partNumber")) {
    if (range_header)
      return InvalidRequest("Cannot specify both Range header and partNumber query parameter");
    return SelectPart(object, *part, selection);
  }
  selection.range = {0, object.size};
  if (!range_header) return kHandled;
  RangeRequest resolved = ResolveRange(*range_header, object.size);
  if (resolved.kind == RangeKind::kUnsatisfiable) {
    ctx.response.AddHeader("Content-Range", "bytes */" + std::to_string(object.size));
    S3Error error = MakeError(416, "InvalidRange", "The requested range is not satisfiable");
    error.details = {{"RangeRequested", *range_header}, {"ActualObjectSize", std::to_string(object.size)}};
    return error;
  }
  if (resolved.kind == RangeKind::kPartial) {
    selection.range = resolved.range;
    selection.partial = true;
  }
  return kHandled;
}

void AddValidators(RequestContext& ctx, const meta::ObjectRecord& object) {
  ctx.response.AddHeader("ETag", QuoteEtag(object.etag));
  ctx.response.AddHeader("Last-Modified", FormatHttpDate(FromUnixMillis(object.mtime_ms)));
}

// Types a browser renders as a document that may run script (HTML, XHTML, SVG, XML with
// stylesheets), and any type it would have to guess.
// Decided on every GET, so without allocating.
bool IsActiveContentType(std::string_view content_type) {
  const std::string_view type = TrimWhitespace(content_type.substr(0, content_type.find(';')));
  if (type.empty()) return true;
  if (type.size() >= 4 && AsciiEqualsIgnoreCase(type.substr(type.size() - 4), "+xml")) return true;
  for (std::string_view active : {"text/html", "text/xml", "application/xml", "text/xsl"}) {
    if (AsciiEqualsIgnoreCase(type, active)) return true;
  }
  return false;
}

void AddStoredHeaders(RequestContext& ctx, const meta::ObjectRecord& object) {
  const meta::ObjectHeaders& headers = object.headers;
  // Both branches must be views: a ?: mixing a literal with a std::string yields a temporary
  // std::string copy, and a view of that dangles once the declaration ends.
  std::string_view content_type = headers.content_type.empty() ? std::string_view("binary/octet-stream")
                                                               : std::string_view(headers.content_type);
  const std::string_view served_type = ctx.query.Get("response-content-type", content_type);
  ctx.response.AddHeader("Content-Type", served_type);
  // An object opened in a browser is the uploader's document on serac's own origin, where the web
  // console lives: never sniffed into something else, and a document that can run script runs in a
  // sandbox of its own origin, so it cannot reach the console's API as the person viewing it.
  ctx.response.AddHeader("X-Content-Type-Options", "nosniff");
  if (IsActiveContentType(served_type)) ctx.response.AddHeader("Content-Security-Policy", "sandbox");
  for (const StoredHeaderOverride& stored : kStoredHeaders) {
    std::string_view value = ctx.query.Get(stored.query_override, headers.*stored.field);
    if (!value.empty()) ctx.response.AddHeader(stored.response_name, value);
  }
  for (const auto& [name, value] : headers.user_metadata) ctx.response.AddHeader("x-amz-meta-" + name, value);
  if (!headers.tags.empty())
    ctx.response.AddHeader("x-amz-tagging-count", std::to_string(headers.tags.size()));
  if (object.part_count > 0)
    ctx.response.AddHeader("x-amz-mp-parts-count", std::to_string(object.part_count));
}

// The response body: sendfile when the blob has a file descriptor, an inline object's head and
// bytes in one write. Remembers whether sending the head failed: then the client is gone and there
// is nobody left to answer.
class ResponseBodySink final : public objects::ObjectByteSink {
 public:
  // `head` sets the status and the object's headers: called once the first blob is open, so that
  // an error before that (a blob store that cannot be reached) is answered without them.
  ResponseBodySink(RequestContext& ctx, std::function<void()> head) : ctx_(ctx), head_(std::move(head)) {}

  Status Begin(uint64_t length) override {
    head_();
    return Promised(ctx_.response.Begin(length));
  }
  Status Write(std::string_view bytes) override {
    SERAC_RETURN_IF_ERROR(ctx_.response.Write(bytes.data(), bytes.size()));
    ctx_.outcome.bytes_out += bytes.size();
    return Status::Ok();
  }
  Status WriteBlobRange(blob::BlobReader& blob, uint64_t offset, uint64_t length) override {
    if (blob.native_fd() < 0) return ObjectByteSink::WriteBlobRange(blob, offset, length);
    SERAC_RETURN_IF_ERROR(ctx_.response.SendFile(blob.native_fd(), offset, length));
    ctx_.outcome.bytes_out += length;
    return Status::Ok();
  }
  Status BeginWithBytes(std::string_view bytes) override {
    head_();
    ctx_.outcome.bytes_out += bytes.size();
    return Promised(ctx_.response.Send(bytes));
  }

  // True when the client's connection failed as the head was sent: nothing more can reach it.
  bool head_failed() const { return head_failed_; }

 private:
  Status Promised(Status sent) {
    head_failed_ = !sent.ok();
    return sent;
  }

  RequestContext& ctx_;
  std::function<void()> head_;
  bool head_failed_ = false;
};

// Sends the selected bytes. The first blob is opened before the head goes out, so a missing blob
// still yields a proper error response; a failure once the head is out closes the connection.
HandlerResult SendBody(RequestContext& ctx, const meta::ObjectRecord& object, ByteRange range,
                       std::function<void()> head) {
  ResponseBodySink sink(ctx, std::move(head));
  Status sent = objects::ReadObjectRange(ctx.blobs(), object, range.first, range.length, sink);
  if (sent.ok() || sink.head_failed()) return kHandled;
  return ErrorFromStatus(sent);
}

HandlerResult MissingObject(RequestContext& ctx, const Status& status) {
  if (status.code() != ErrorCode::kNotFound) return ErrorFromStatus(status);
  if (auto error = RequireBucket(ctx)) return error;
  return NoSuchKey();
}

}  // namespace

HandlerResult GetObject(RequestContext& ctx, bool head) {
  auto found = ctx.meta().GetObject(ctx.bucket, ctx.key);
  if (!found.ok()) return MissingObject(ctx, found.status());
  const meta::ObjectRecord& object = *found;

  Conditions conditions =
      ReadConditions(ctx, "if-match", "if-none-match", "if-modified-since", "if-unmodified-since");
  switch (EvaluateConditions(conditions, object.etag, object.mtime_ms)) {
    case ConditionOutcome::kPreconditionFailed:
      return ErrorFromStatus(Error(ErrorCode::kPreconditionFailed, ""));
    case ConditionOutcome::kNotModified:
      AddValidators(ctx, object);
      ctx.response.SetStatus(304);
      (void)ctx.response.Send("");
      return kHandled;
    case ConditionOutcome::kProceed:
      break;
  }

  Selection selection;
  if (auto error = SelectBytes(ctx, object, selection)) return error;
  auto add_head = [&ctx, &object, &selection] {
    ctx.response.SetStatus(selection.partial ? 206 : 200);
    AddValidators(ctx, object);
    AddStoredHeaders(ctx, object);
    ctx.response.AddHeader("Accept-Ranges", "bytes");
    if (selection.partial) {
      uint64_t last = selection.range.first + selection.range.length - 1;
      ctx.response.AddHeader("Content-Range", "bytes " + std::to_string(selection.range.first) + "-" +
                                                  std::to_string(last) + "/" + std::to_string(object.size));
    }
    // A whole-object checksum describes the whole object only: never on partial responses.
    if (object.checksum && !selection.partial &&
        AsciiEqualsIgnoreCase(ctx.header("x-amz-checksum-mode"), "ENABLED")) {
      AddChecksumHeaders(ctx, *object.checksum);
    }
  };
  if (head) {
    add_head();
    (void)ctx.response.Begin(selection.range.length);
    return kHandled;
  }
  return SendBody(ctx, object, selection.range, add_head);
}

}  // namespace serac::s3
