// Object writes and deletes: PutObject (streamed, verified, committed before the index), DeleteObject,
// DeleteObjects.
#include <vector>

#include "common/clock.h"
#include "common/encoding.h"
#include "common/limits.h"
#include "objects/object_io.h"
#include "s3/s3_internal.h"
#include "s3/s3_xml.h"

namespace serac::s3 {

namespace {

// Errors while streaming a body leave the connection in an unknown state.
S3Error BodyReadError(RequestContext& ctx, const Status& status) {
  if (status.code() == ErrorCode::kIncompleteBody || status.code() == ErrorCode::kTimeout ||
      status.code() == ErrorCode::kLimitExceeded) {
    ctx.response.CloseAfterResponse();
  }
  return ErrorFromStatus(status);
}

}  // namespace

HandlerResult ReceiveBody(RequestContext& ctx, const auth::PayloadOptions& options, bool allow_inline,
                          ReceivedBody& body) {
  auto reader_or = OpenVerifiedBody(ctx, options);
  if (!reader_or.ok()) return BodyOpenError(ctx, reader_or.status());
  auth::VerifyingBodyReader& reader = **reader_or;
  reader.SetLimit(limits::kSinglePutBytesMax);
  std::optional<uint64_t> announced = reader.content_length();
  if (announced && *announced > limits::kSinglePutBytesMax) {
    ctx.response.CloseAfterResponse();
    return MakeError(
        400, "EntityTooLarge",
        "Your proposed upload exceeds the maximum allowed size (limits::kSinglePutBytesMax = 5 GiB)");
  }
  objects::ObjectBodyWriter writer(ctx.blobs(), allow_inline ? limits::kInlineObjectBytesMax : 0);
  if (!allow_inline || (announced && *announced > limits::kInlineObjectBytesMax)) {
    if (Status opened = writer.StartBlob(); !opened.ok()) return ErrorFromStatus(opened);
  }
  // The buffer is filled before it is appended: whole buffers of the blob writer's size go
  // straight to write(2) instead of through the writer's own buffer.
  std::string buffer(limits::kBlobWriteBufferBytes, '\0');
  bool ended = false;
  while (!ended) {
    size_t filled = 0;
    while (filled < buffer.size()) {
      auto count = reader.Read(buffer.data() + filled, buffer.size() - filled);
      if (!count.ok()) return BodyReadError(ctx, count.status());  // the writer aborts on destruction
      if (*count == 0) {
        ended = true;
        break;
      }
      filled += *count;
      ctx.outcome.bytes_in += *count;
    }
    if (Status appended = writer.Append(std::string_view(buffer.data(), filled)); !appended.ok()) {
      return ErrorFromStatus(appended);
    }
  }
  meta::ObjectRecord staged;
  if (Status finished = writer.Finish(staged); !finished.ok()) return ErrorFromStatus(finished);
  body.size = reader.bytes_read();
  body.md5_hex = reader.md5_hex();
  body.checksum = reader.checksum();
  body.inline_data = std::move(staged.inline_data);
  body.segments = std::move(staged.segments);
  return kHandled;
}

void AddChecksumHeaders(RequestContext& ctx, const meta::ChecksumRecord& checksum) {
  auto algorithm = ParseChecksumAlgorithm(checksum.algorithm);
  if (!algorithm) return;
  ctx.response.AddHeader(auth::ChecksumHeaderName(*algorithm), checksum.value);
  if (!checksum.type.empty()) ctx.response.AddHeader("x-amz-checksum-type", checksum.type);
}

// If-None-Match (only "*") and If-Match of a write; and no S3 write replaces a table's current
// metadata file.
HandlerResult ReadWriteCondition(RequestContext& ctx, meta::WriteCondition& condition) {
  condition.keep_catalog_metadata = true;
  if (const std::string* none_match = ctx.request.FindHeader("if-none-match")) {
    if (TrimWhitespace(*none_match) != "*") {
      return MakeError(501, "NotImplemented", "If-None-Match accepts only '*' on writes");
    }
    condition.if_none_match_any = true;
  }
  if (const std::string* match = ctx.request.FindHeader("if-match")) {
    condition.if_match = UnquoteEtag(*match);
  }
  return kHandled;
}

S3Error WriteError(const Status& status, const meta::WriteCondition& condition, Missing missing) {
  S3Error error = ErrorFromStatus(status, missing);
  if (status.code() != ErrorCode::kPreconditionFailed) return error;
  // With both headers the MetaStore's message says which one failed.
  bool none_match_failed =
      condition.if_none_match_any && (!condition.if_match || status.message().rfind("If-None-Match", 0) == 0);
  if (none_match_failed) {
    error.details.emplace_back("Condition", "If-None-Match");
  } else if (condition.if_match) {
    error.details.emplace_back("Condition", "If-Match");
  }
  return error;
}

HandlerResult PutObject(RequestContext& ctx) {
  if (auto problem = KeyProblem(ctx.key)) return problem;
  if (auto error = RequireBucket(ctx)) return error;
  meta::WriteCondition condition;
  if (auto error = ReadWriteCondition(ctx, condition)) return error;
  meta::ObjectRecord record;
  if (auto error = HeadersFromRequest(ctx, record.headers)) return error;

  auth::PayloadOptions options;
  // Like AWS, store a full-object CRC64NVME when the client names no checksum of its own.
  options.default_checksum = ParseOptionalAlgorithm(ctx.header("x-amz-sdk-checksum-algorithm"))
                                 .value_or(ChecksumAlgorithm::kCrc64Nvme);
  ReceivedBody body;
  if (auto error = ReceiveBody(ctx, options, true, body)) return error;

  record.bucket = ctx.bucket;
  record.key = ctx.key;
  record.size = body.size;
  record.etag = body.md5_hex;
  record.mtime_ms = ToUnixMillis(Now());
  if (body.checksum) {
    record.checksum = meta::ChecksumRecord{std::string(ChecksumAlgorithmName(body.checksum->first)),
                                           body.checksum->second, "FULL_OBJECT"};
  }
  record.inline_data = std::move(body.inline_data);
  record.segments = body.segments;
  Status stored = objects::CommitObject(ctx.meta(), ctx.blobs(), record, condition);
  if (!stored.ok()) return WriteError(stored, condition, Missing::kBucket);
  ctx.response.SetStatus(200);
  ctx.response.AddHeader("ETag", QuoteEtag(record.etag));
  if (record.checksum) AddChecksumHeaders(ctx, *record.checksum);
  (void)ctx.response.Send("");
  return kHandled;
}

HandlerResult DeleteObject(RequestContext& ctx) {
  if (auto error = RequireBucket(ctx)) return error;
  meta::WriteCondition condition;
  condition.keep_catalog_metadata = true;
  if (const std::string* match = ctx.request.FindHeader("if-match")) condition.if_match = UnquoteEtag(*match);
  Status deleted = ctx.meta().DeleteObject(ctx.bucket, ctx.key, condition);
  if (!deleted.ok()) return WriteError(deleted, condition, Missing::kBucket);
  ctx.response.SetStatus(204);
  (void)ctx.response.Send("");
  return kHandled;
}

namespace {

// One key of a DeleteObjects request. Each key is its own s3:DeleteObject: a denied key is reported
// and the others still go. A version other than "null" does not exist (buckets are unversioned)
// and must not take the live object with it.
Status DeleteListedObject(RequestContext& ctx, const std::string& key, std::string_view version_id) {
  if (!IsAllowed(ctx, "s3:DeleteObject", auth::S3ObjectArn(ctx.bucket, key))) {
    return Error(ErrorCode::kAccessDenied, "Access Denied");
  }
  if (!IsUnversionedId(version_id)) {
    return Error(ErrorCode::kInvalidArgument, std::string(kInvalidVersionIdMessage));
  }
  meta::WriteCondition condition;
  condition.keep_catalog_metadata = true;
  return ctx.meta().DeleteObject(ctx.bucket, key, condition);
}

}  // namespace

HandlerResult DeleteObjects(RequestContext& ctx) {
  if (auto error = RequireBucket(ctx)) return error;
  auto body = ReadXmlBody(ctx);
  if (!body.ok()) return BodyOpenError(ctx, body.status());
  auto request = ParseDeleteObjects(*body);
  if (!request.ok()) return ErrorFromStatus(request.status());

  XmlWriter xml;
  xml.Open("DeleteResult", kS3Namespace);
  for (const DeleteTarget& target : request->objects) {
    const std::string& key = target.key;
    Status deleted = DeleteListedObject(ctx, key, target.version_id);
    if (deleted.ok()) {
      if (request->quiet) continue;
      xml.Open("Deleted");
      xml.Element("Key", key);
      xml.Close();
      continue;
    }
    S3Error error = ErrorFromStatus(deleted, Missing::kBucket);
    xml.Open("Error");
    xml.Element("Key", key);
    xml.Element("Code", error.code);
    xml.Element("Message", error.message);
    xml.Close();
  }
  return SendXml(ctx, xml.Finish());
}

}  // namespace serac::s3
