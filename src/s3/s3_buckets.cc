// Bucket operations: ListBuckets, CreateBucket, HeadBucket, DeleteBucket, GetBucketLocation,
// GetBucketVersioning, and the canned ACL answer clients probe for.
#include "common/clock.h"
#include "common/encoding.h"
#include "s3/s3_internal.h"
#include "s3/s3_xml.h"

namespace serac::s3 {

namespace {

void WriteOwner(XmlWriter& xml, std::string_view owner) {
  xml.Open("Owner");
  xml.Element("ID", owner);
  xml.Element("DisplayName", owner);
  xml.Close();
}

}  // namespace

HandlerResult ListBuckets(RequestContext& ctx) {
  // Decided here (ResourceScope::kFilteredService): without an Allow the list is filtered.
  const BucketListing access = BucketListingAccess(ctx);
  if (access == BucketListing::kDenied) return MakeError(403, "AccessDenied", "Access Denied");
  const bool all_visible = access == BucketListing::kAll;
  auto buckets = ctx.meta().ListBuckets();
  if (!buckets.ok()) return ErrorFromStatus(buckets.status());
  XmlWriter xml;
  xml.Open("ListAllMyBucketsResult", kS3Namespace);
  WriteOwner(xml, ctx.verified.access_key);
  xml.Open("Buckets");
  for (const meta::BucketRecord& bucket : *buckets) {
    if (!all_visible && !MaySeeBucket(ctx, bucket.name)) continue;
    xml.Open("Bucket");
    xml.Element("Name", bucket.name);
    xml.Element("CreationDate", FormatIso8601(FromUnixMillis(bucket.created_ms)));
    xml.Close();
  }
  xml.Close();
  xml.Close();
  return SendXml(ctx, xml.Finish());
}

HandlerResult CreateBucket(RequestContext& ctx) {
  if (auto problem = BucketNameProblem(ctx.bucket)) {
    return MakeError(400, "InvalidBucketName", "The specified bucket is not valid: " + *problem);
  }
  // The optional CreateBucketConfiguration only names a location; serac serves one region.
  auto configuration = ReadXmlBody(ctx);
  if (!configuration.ok()) return BodyOpenError(ctx, configuration.status());
  auto location = ParseCreateBucketConfiguration(*configuration);
  if (!location.ok()) return ErrorFromStatus(location.status());
  // The bucket would claim a region this server does not serve (AWS answers the same when the
  // constraint does not match the endpoint's region); the server's own region is accepted.
  if (!location->empty() && *location != ctx.backend.options.region) {
    return MakeError(400, "IllegalLocationConstraintException",
                     "The " + *location +
                         " location constraint is incompatible for the region specific endpoint this request "
                         "was sent to.");
  }
  meta::BucketRecord record;
  record.name = ctx.bucket;
  record.created_ms = ToUnixMillis(Now());
  Status created = ctx.meta().CreateBucket(record);
  if (!created.ok()) return ErrorFromStatus(created, Missing::kBucket);
  ctx.response.SetStatus(200);
  ctx.response.AddHeader("Location", "/" + ctx.bucket);
  (void)ctx.response.Send("");
  return kHandled;
}

HandlerResult HeadBucket(RequestContext& ctx) {
  if (auto error = RequireBucket(ctx)) return error;
  ctx.response.SetStatus(200);
  ctx.response.AddHeader("x-amz-bucket-region", ctx.backend.options.region);
  (void)ctx.response.Send("");
  return kHandled;
}

HandlerResult DeleteBucket(RequestContext& ctx) {
  Status deleted = ctx.meta().DeleteBucket(ctx.bucket);
  if (!deleted.ok()) return ErrorFromStatus(deleted, Missing::kBucket);
  ctx.response.SetStatus(204);
  (void)ctx.response.Send("");
  return kHandled;
}

HandlerResult GetBucketLocation(RequestContext& ctx) {
  if (auto error = RequireBucket(ctx)) return error;
  // us-east-1 is reported as an empty constraint, as AWS does.
  const std::string& region = ctx.backend.options.region;
  XmlWriter xml;
  xml.Open("LocationConstraint", kS3Namespace);
  xml.Close();
  std::string document = xml.Finish();
  if (region != "us-east-1") {
    document.insert(document.rfind("</LocationConstraint>"), XmlEscape(region));
  }
  return SendXml(ctx, document);
}

HandlerResult GetBucketVersioning(RequestContext& ctx) {
  if (auto error = RequireBucket(ctx)) return error;
  XmlWriter xml;
  xml.Open("VersioningConfiguration", kS3Namespace);
  return SendXml(ctx, xml.Finish());
}

HandlerResult GetAcl(RequestContext& ctx) {
  if (auto error = RequireBucket(ctx)) return error;
  if (!ctx.key.empty()) {
    auto object = ctx.meta().GetObject(ctx.bucket, ctx.key);
    if (!object.ok()) return ErrorFromStatus(object.status());
  }
  // One owner with full control: the only ACL serac has until policies arrive.
  std::string owner = XmlEscape(ctx.verified.access_key);
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<AccessControlPolicy xmlns=\"" +
      std::string(kS3Namespace) + "\"><Owner><ID>" + owner + "</ID><DisplayName>" + owner +
      "</DisplayName></Owner><AccessControlList><Grant><Grantee "
      "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"CanonicalUser\"><ID>" +
      owner + "</ID><DisplayName>" + owner +
      "</DisplayName></Grantee><Permission>FULL_CONTROL</Permission></Grant></AccessControlList>"
      "</AccessControlPolicy>";
  return SendXml(ctx, xml);
}

}  // namespace serac::s3
