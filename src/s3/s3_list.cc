// ListObjectsV2 and ListObjects (v1). Delimiter roll-up resumes the MetaStore scan just past a
// common prefix, so a directory of a million keys costs one row, not a million.
#include <algorithm>

#include "common/clock.h"
#include "common/encoding.h"
#include "common/limits.h"
#include "s3/s3_internal.h"
#include "s3/s3_xml.h"

namespace serac::s3 {

namespace {

struct ListingRequest {
  std::string prefix;
  std::string delimiter;
  std::string start_after;  // scan position (exclusive)
  uint32_t max_keys = limits::kKeysPerListMax;
};

struct ListingPage {
  std::vector<meta::ObjectRecord> contents;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string last;  // last key or common prefix returned
  bool last_is_prefix = false;
};

// The common prefix `key` rolls up into, or "" when it is listed itself.
std::string_view RollUp(std::string_view key, const ListingRequest& request) {
  return CommonPrefixOf(key, request.prefix, request.delimiter);
}

Result<ListingPage> CollectPage(meta::MetaStore& meta, const std::string& bucket,
                                const ListingRequest& request) {
  ListingPage page;
  meta::ListObjectsQuery query;
  query.bucket = bucket;
  query.prefix = request.prefix;
  query.start_after = request.start_after;
  query.with_details = false;
  uint32_t count = 0;
  while (count < request.max_keys) {
    query.limit = std::min(request.max_keys - count, limits::kKeysPerListMax);
    SERAC_ASSIGN_OR_RETURN(std::vector<meta::ObjectRecord> batch, meta.ListObjects(query));
    bool jumped = false;
    for (meta::ObjectRecord& object : batch) {
      std::string_view common = RollUp(object.key, request);
      ++count;
      if (!common.empty()) {
        page.common_prefixes.emplace_back(common);
        page.last = std::string(common);
        page.last_is_prefix = true;
        query.start_after = AfterCommonPrefix(common);
        jumped = true;
        break;
      }
      page.last = object.key;
      page.last_is_prefix = false;
      query.start_after = object.key;
      page.contents.push_back(std::move(object));
      if (count == request.max_keys) break;
    }
    if (!jumped && batch.size() < query.limit) return page;  // the scan reached the end
  }
  if (request.max_keys == 0) return page;
  query.limit = 1;
  SERAC_ASSIGN_OR_RETURN(std::vector<meta::ObjectRecord> next, meta.ListObjects(query));
  page.truncated = !next.empty();
  return page;
}

// For v1 markers (and start-after) that lie inside a rolled-up prefix: resume after that prefix.
std::string ResumePoint(std::string_view marker, const ListingRequest& request) {
  if (marker.substr(0, request.prefix.size()) != request.prefix) return std::string(marker);
  std::string_view common = RollUp(marker, request);
  return common.empty() ? std::string(marker) : AfterCommonPrefix(common);
}

struct ListingStyle {
  bool v2 = true;
  bool url_encode = false;
  bool fetch_owner = false;
};

std::string Encoded(const ListingStyle& style, std::string_view text) {
  return style.url_encode ? UriEncode(text, false) : std::string(text);
}

void WriteContents(XmlWriter& xml, const ListingPage& page, const ListingStyle& style,
                   std::string_view owner) {
  for (const meta::ObjectRecord& object : page.contents) {
    xml.Open("Contents");
    xml.Element("Key", Encoded(style, object.key));
    xml.Element("LastModified", FormatIso8601(FromUnixMillis(object.mtime_ms)));
    xml.Element("ETag", QuoteEtag(object.etag));
    xml.Element("Size", object.size);
    xml.Element("StorageClass", "STANDARD");
    if (!style.v2 || style.fetch_owner) {
      xml.Open("Owner");
      xml.Element("ID", owner);
      xml.Element("DisplayName", owner);
      xml.Close();
    }
    xml.Close();
  }
  for (const std::string& common : page.common_prefixes) {
    xml.Open("CommonPrefixes");
    xml.Element("Prefix", Encoded(style, common));
    xml.Close();
  }
}

HandlerResult ParseListingRequest(RequestContext& ctx, ListingRequest& request, ListingStyle& style) {
  request.prefix = ctx.query.Get("prefix");
  request.delimiter = ctx.query.Get("delimiter");
  if (const std::string* max_keys = ctx.query.Find("max-keys")) {
    auto parsed = ParseUint64(*max_keys);
    if (!parsed) return InvalidArgument("max-keys must be a non-negative integer");
    request.max_keys = static_cast<uint32_t>(std::min<uint64_t>(*parsed, limits::kKeysPerListMax));
  }
  if (const std::string* encoding = ctx.query.Find("encoding-type")) {
    if (*encoding != "url") return InvalidArgument("Invalid Encoding Method specified in Request");
    style.url_encode = true;
  }
  style.fetch_owner = ctx.query.Get("fetch-owner") == "true";
  return kHandled;
}

}  // namespace

HandlerResult ListObjects(RequestContext& ctx, bool v2) {
  ListingRequest request;
  ListingStyle style;
  style.v2 = v2;
  if (auto error = ParseListingRequest(ctx, request, style)) return error;
  const std::string* token = v2 ? ctx.query.Find("continuation-token") : nullptr;
  std::string_view start_after = ctx.query.Get(v2 ? "start-after" : "marker");
  if (token) {
    auto resume = DecodeContinuationToken(*token);
    if (!resume) return InvalidArgument("The continuation token provided is incorrect");
    request.start_after = std::move(*resume);
  } else {
    request.start_after = v2 ? std::string(start_after) : ResumePoint(start_after, request);
  }

  auto page = CollectPage(ctx.meta(), ctx.bucket, request);
  if (!page.ok()) return ErrorFromStatus(page.status(), Missing::kBucket);

  XmlWriter xml;
  xml.Open("ListBucketResult", kS3Namespace);
  xml.Element("Name", ctx.bucket);
  xml.Element("Prefix", Encoded(style, request.prefix));
  if (v2) {
    if (!start_after.empty()) xml.Element("StartAfter", Encoded(style, start_after));
    if (token) xml.Element("ContinuationToken", *token);
    xml.Element("KeyCount", page->contents.size() + page->common_prefixes.size());
  } else {
    xml.Element("Marker", Encoded(style, start_after));
  }
  xml.Element("MaxKeys", request.max_keys);
  if (!request.delimiter.empty()) xml.Element("Delimiter", Encoded(style, request.delimiter));
  if (style.url_encode) xml.Element("EncodingType", "url");
  xml.Bool("IsTruncated", page->truncated);
  if (page->truncated && v2) {
    xml.Element("NextContinuationToken", EncodeContinuationToken(page->last, page->last_is_prefix));
  }
  if (page->truncated && !v2 && !request.delimiter.empty())
    xml.Element("NextMarker", Encoded(style, page->last));
  WriteContents(xml, *page, style, ctx.verified.access_key);
  return SendXml(ctx, xml.Finish());
}

}  // namespace serac::s3
