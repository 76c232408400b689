// CopyObject: server-side copy into fresh blobs, with metadata and tagging directives and the
// x-amz-copy-source-if-* conditions. The copy keeps the source's ETag and checksum.
#include "common/clock.h"
#include "common/encoding.h"
#include "objects/object_io.h"
#include "s3/s3_internal.h"
#include "s3/s3_xml.h"

namespace serac::s3 {

HandlerResult LoadCopySource(RequestContext& ctx, meta::ObjectRecord& source) {
  auto location = ParseCopySource(ctx.header("x-amz-copy-source"));
  if (!location.ok()) return ErrorFromStatus(location.status());
  auto found = ctx.meta().GetObject(location->bucket, location->key);
  if (!found.ok()) {
    if (found.status().code() != ErrorCode::kNotFound) return ErrorFromStatus(found.status());
    auto bucket = ctx.meta().GetBucket(location->bucket);
    return bucket.ok() ? NoSuchKey() : ErrorFromStatus(bucket.status(), Missing::kBucket);
  }
  Conditions conditions =
      ReadConditions(ctx, "x-amz-copy-source-if-match", "x-amz-copy-source-if-none-match",
                     "x-amz-copy-source-if-modified-since", "x-amz-copy-source-if-unmodified-since");
  if (EvaluateConditions(conditions, found->etag, found->mtime_ms) != ConditionOutcome::kProceed) {
    return ErrorFromStatus(Error(ErrorCode::kPreconditionFailed, ""));
  }
  source = std::move(found).value();
  return kHandled;
}

void WriteChecksumElements(XmlWriter& xml, const meta::ChecksumRecord& checksum) {
  auto algorithm = ParseChecksumAlgorithm(checksum.algorithm);
  if (!algorithm) return;
  xml.Element("Checksum" + std::string(ChecksumAlgorithmName(*algorithm)), checksum.value);
  if (!checksum.type.empty()) xml.Element("ChecksumType", checksum.type);
}

namespace {

// Reads a COPY/REPLACE directive header (default COPY).
Result<bool> IsReplace(RequestContext& ctx, std::string_view header) {
  std::string_view value = TrimWhitespace(ctx.header(header));
  if (value.empty() || AsciiEqualsIgnoreCase(value, "COPY")) return false;
  if (AsciiEqualsIgnoreCase(value, "REPLACE")) return true;
  return Error(ErrorCode::kInvalidArgument, "Unknown " + std::string(header) + " value");
}

// The destination's headers per x-amz-metadata-directive and x-amz-tagging-directive.
HandlerResult ChooseHeaders(RequestContext& ctx, const meta::ObjectRecord& source, bool replace_metadata,
                            meta::ObjectHeaders& headers) {
  auto replace_tags = IsReplace(ctx, "x-amz-tagging-directive");
  if (!replace_tags.ok()) return ErrorFromStatus(replace_tags.status());
  meta::ObjectHeaders requested;
  if (auto error = HeadersFromRequest(ctx, requested)) return error;
  headers = replace_metadata ? requested : source.headers;
  headers.tags = *replace_tags ? requested.tags : source.headers.tags;
  return kHandled;
}

}  // namespace

HandlerResult CopyObject(RequestContext& ctx) {
  if (auto problem = KeyProblem(ctx.key)) return problem;
  if (auto error = RequireBucket(ctx)) return error;
  meta::ObjectRecord source;
  if (auto error = LoadCopySource(ctx, source)) return error;
  auto replace_metadata = IsReplace(ctx, "x-amz-metadata-directive");
  if (!replace_metadata.ok()) return ErrorFromStatus(replace_metadata.status());
  if (source.bucket == ctx.bucket && source.key == ctx.key && !*replace_metadata) {
    return InvalidRequest(
        "This copy request is illegal because it is trying to copy an object to itself without changing the "
        "object's metadata, storage class, website redirect location or encryption attributes.");
  }
  meta::WriteCondition condition;
  if (auto error = ReadWriteCondition(ctx, condition)) return error;

  meta::ObjectRecord target;
  if (auto error = ChooseHeaders(ctx, source, *replace_metadata, target.headers)) return error;
  target.bucket = ctx.bucket;
  target.key = ctx.key;
  target.size = source.size;
  target.etag = source.etag;
  target.checksum = source.checksum;
  target.part_count = source.part_count;
  target.mtime_ms = ToUnixMillis(Now());
  // Fresh blobs even for a copy onto itself: the replaced record's blobs are queued for removal.
  if (Status copied = objects::CopyObjectBytes(ctx.blobs(), source, target); !copied.ok())
    return ErrorFromStatus(copied);
  if (Status stored = objects::CommitObject(ctx.meta(), ctx.blobs(), target, condition); !stored.ok()) {
    return WriteError(stored, condition, Missing::kBucket);
  }

  XmlWriter xml;
  xml.Open("CopyObjectResult", kS3Namespace);
  xml.Element("ETag", QuoteEtag(target.etag));
  xml.Element("LastModified", FormatIso8601(FromUnixMillis(target.mtime_ms)));
  if (target.checksum) WriteChecksumElements(xml, *target.checksum);
  return SendXml(ctx, xml.Finish());
}

}  // namespace serac::s3
