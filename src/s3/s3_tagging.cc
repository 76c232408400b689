// Object tagging: Get/Put/DeleteObjectTagging. Tags live in the object's index row, so a change
// rewrites the row under If-Match on the ETag it read.
#include "common/limits.h"
#include "s3/s3_internal.h"
#include "s3/s3_xml.h"

namespace serac::s3 {

namespace {

constexpr int kTagUpdateAttempts = 3;  // concurrent overwrites make the If-Match fail; retry a little

HandlerResult LoadObject(RequestContext& ctx, meta::ObjectRecord& object) {
  auto found = ctx.meta().GetObject(ctx.bucket, ctx.key);
  if (!found.ok()) {
    if (found.status().code() != ErrorCode::kNotFound) return ErrorFromStatus(found.status());
    if (auto error = RequireBucket(ctx)) return error;
    return NoSuchKey();
  }
  object = std::move(found).value();
  return kHandled;
}

// Rewrites the object's row with new tags. The row must not share blobs with the one it replaces
// (those go to garbage collection), so segmented objects get copied blobs.
HandlerResult ReplaceTags(RequestContext& ctx, const TagSet& tags) {
  for (int attempt = 0; attempt < kTagUpdateAttempts; ++attempt) {
    meta::ObjectRecord current;
    if (auto error = LoadObject(ctx, current)) return error;
    meta::ObjectRecord updated = current;
    updated.headers.tags = tags;
    if (Status copied = CopyObjectBytes(ctx, current, updated); !copied.ok()) return ErrorFromStatus(copied);
    meta::WriteCondition condition;
    condition.if_match = current.etag;
    Status stored = ctx.meta().PutObject(updated, condition);
    if (stored.ok()) return kHandled;
    RemoveBlobsQuietly(ctx, updated.segments);
    if (stored.code() != ErrorCode::kPreconditionFailed) return ErrorFromStatus(stored, Missing::kBucket);
  }
  return ErrorFromStatus(Error(ErrorCode::kConflict, ""));
}

}  // namespace

HandlerResult GetObjectTagging(RequestContext& ctx) {
  meta::ObjectRecord object;
  if (auto error = LoadObject(ctx, object)) return error;
  XmlWriter xml;
  xml.Open("Tagging", kS3Namespace);
  xml.Open("TagSet");
  for (const auto& [key, value] : object.headers.tags) {
    xml.Open("Tag");
    xml.Element("Key", key);
    xml.Element("Value", value);
    xml.Close();
  }
  return SendXml(ctx, xml.Finish());
}

HandlerResult PutObjectTagging(RequestContext& ctx) {
  auto body = ReadXmlBody(ctx);
  if (!body.ok()) return BodyOpenError(ctx, body.status());
  auto tags = ParseTagging(*body);
  if (!tags.ok()) return ErrorFromStatus(tags.status());
  if (Status valid = ValidateTags(*tags); !valid.ok()) return MakeError(400, "InvalidTag", valid.message());
  if (auto error = ReplaceTags(ctx, *tags)) return error;
  ctx.response.SetStatus(200);
  (void)ctx.response.Send("");
  return kHandled;
}

HandlerResult DeleteObjectTagging(RequestContext& ctx) {
  if (auto error = ReplaceTags(ctx, {})) return error;
  ctx.response.SetStatus(204);
  (void)ctx.response.Send("");
  return kHandled;
}

}  // namespace serac::s3
