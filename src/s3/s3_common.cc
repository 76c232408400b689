// Helpers shared by the operation handlers.
#include <algorithm>

#include "common/encoding.h"
#include "common/limits.h"
#include "common/log.h"
#include "s3/s3_internal.h"

namespace serac::s3 {

HandlerResult RequireBucket(RequestContext& ctx) {
  auto bucket = ctx.meta().GetBucket(ctx.bucket);
  if (!bucket.ok()) return ErrorFromStatus(bucket.status(), Missing::kBucket);
  return kHandled;
}

HandlerResult SendXml(RequestContext& ctx, const std::string& xml, int status) {
  ctx.response.SetStatus(status);
  ctx.response.AddHeader("Content-Type", "application/xml");
  Status sent = ctx.response.Send(xml);
  if (!sent.ok()) ctx.response.CloseAfterResponse();
  ctx.outcome.bytes_out += xml.size();
  return kHandled;
}

Result<std::unique_ptr<auth::VerifyingBodyReader>> OpenVerifiedBody(RequestContext& ctx,
                                                                    const auth::PayloadOptions& options) {
  return auth::VerifyingBodyReader::Create(ctx.request, ctx.verified, ctx.raw_body, options);
}

S3Error BodyOpenError(RequestContext& ctx, const Status& status) {
  if (status.code() == ErrorCode::kInvalidArgument && ctx.has_header("content-md5")) {
    return MakeError(400, "InvalidDigest", "The Content-MD5 you specified was invalid.");
  }
  return ErrorFromStatus(status);
}

Result<std::string> ReadXmlBody(RequestContext& ctx) {
  auth::PayloadOptions options;
  options.compute_md5 = false;
  auto body = OpenVerifiedBody(ctx, options);
  if (!body.ok()) return body.status();
  auto text = (*body)->ReadAll(limits::kXmlRequestBodyBytesMax);
  if (text.ok()) ctx.outcome.bytes_in += text->size();
  return text;
}

namespace {

constexpr std::string_view kMetaPrefix = "x-amz-meta-";

struct StoredHeader {
  const char* name;
  std::string meta::ObjectHeaders::*field;
};
constexpr StoredHeader kStoredHeaders[] = {
    {"content-type", &meta::ObjectHeaders::content_type},
    {"content-language", &meta::ObjectHeaders::content_language},
    {"content-disposition", &meta::ObjectHeaders::content_disposition},
    {"cache-control", &meta::ObjectHeaders::cache_control},
    {"expires", &meta::ObjectHeaders::expires},
};

}  // namespace

HandlerResult HeadersFromRequest(RequestContext& ctx, meta::ObjectHeaders& headers) {
  if (auto problem = StorageClassProblem(TrimWhitespace(ctx.header("x-amz-storage-class")))) return problem;
  for (const StoredHeader& stored : kStoredHeaders)
    headers.*stored.field = std::string(ctx.header(stored.name));
  headers.content_encoding = StripAwsChunked(ctx.header("content-encoding"));
  uint64_t metadata_bytes = 0;
  for (const http::Header& header : ctx.request.headers) {
    std::string name = AsciiLower(header.name);
    if (name.size() <= kMetaPrefix.size() || name.compare(0, kMetaPrefix.size(), kMetaPrefix) != 0) continue;
    name.erase(0, kMetaPrefix.size());
    metadata_bytes += name.size() + header.value.size();
    auto existing = std::find_if(headers.user_metadata.begin(), headers.user_metadata.end(),
                                 [&](const auto& entry) { return entry.first == name; });
    if (existing != headers.user_metadata.end()) {
      existing->second += "," + header.value;  // repeated headers combine, as HTTP allows
    } else {
      headers.user_metadata.emplace_back(std::move(name), header.value);
    }
  }
  if (metadata_bytes > limits::kUserMetadataBytesMax) {
    return MakeError(400, "MetadataTooLarge",
                     "Your metadata headers exceed the maximum allowed metadata size "
                     "(limits::kUserMetadataBytesMax = 2048 bytes)");
  }
  if (const std::string* tagging = ctx.request.FindHeader("x-amz-tagging")) {
    auto tags = ParseTaggingHeader(*tagging);
    if (!tags.ok()) return MakeError(400, "InvalidTag", tags.status().message());
    headers.tags = std::move(tags).value();
  }
  return kHandled;
}

std::string QuoteEtag(std::string_view etag) {
  std::string quoted = "\"";
  quoted += etag;
  quoted += '"';
  return quoted;
}

Conditions ReadConditions(RequestContext& ctx, std::string_view if_match, std::string_view if_none_match,
                          std::string_view if_modified_since, std::string_view if_unmodified_since) {
  Conditions conditions;
  if (const std::string* value = ctx.request.FindHeader(if_match)) conditions.if_match = *value;
  if (const std::string* value = ctx.request.FindHeader(if_none_match)) conditions.if_none_match = *value;
  // Unparseable dates are ignored, as HTTP requires.
  if (const std::string* value = ctx.request.FindHeader(if_modified_since)) {
    conditions.if_modified_since = ParseHttpDate(*value);
  }
  if (const std::string* value = ctx.request.FindHeader(if_unmodified_since)) {
    conditions.if_unmodified_since = ParseHttpDate(*value);
  }
  return conditions;
}

std::optional<ChecksumAlgorithm> ParseOptionalAlgorithm(std::string_view name) {
  name = TrimWhitespace(name);
  if (name.empty()) return std::nullopt;
  return ParseChecksumAlgorithm(name);
}

}  // namespace serac::s3
