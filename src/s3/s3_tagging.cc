// Object tagging: Get/Put/DeleteObjectTagging. Tags live in the object's index row; a change
// replaces just them in one MetaStore transaction, leaving the object's bytes where they are.
#include "common/limits.h"
#include "s3/s3_internal.h"
#include "s3/s3_xml.h"

namespace serac::s3 {

namespace {

HandlerResult MissingObject(RequestContext& ctx, const Status& status) {
  if (status.code() != ErrorCode::kNotFound) return ErrorFromStatus(status);
  if (auto error = RequireBucket(ctx)) return error;
  return NoSuchKey();
}

HandlerResult LoadObject(RequestContext& ctx, meta::ObjectRecord& object) {
  auto found = ctx.meta().GetObject(ctx.bucket, ctx.key);
  if (!found.ok()) return MissingObject(ctx, found.status());
  object = std::move(found).value();
  return kHandled;
}

HandlerResult ReplaceTags(RequestContext& ctx, const TagSet& tags) {
  Status stored = ctx.meta().SetObjectTags(ctx.bucket, ctx.key, tags, {});
  if (!stored.ok()) return MissingObject(ctx, stored);
  return kHandled;
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
