// Pure S3 request rules, kept apart from I/O so they can be tested directly: query strings,
// bucket names, object keys, byte ranges, conditional headers, continuation tokens, tag sets and
// copy sources. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "s3/s3_errors.h"
#include "s3/s3_xml.h"
#include "service/bucket_name.h"
#include "service/query_params.h"

namespace serac::s3 {

using service::QueryParams;  // the query string, decoded: service/query_params.h

using service::BucketNameProblem;  // bucket naming rules: service/bucket_name.h
// InvalidArgument-style problem with an object key (empty, too long, not UTF-8), if any.
std::optional<S3Error> KeyProblem(std::string_view key);
// InvalidStorageClass unless x-amz-storage-class is empty or one of AWS's storage classes. serac has
// one tier, so every known class is stored (and listed) as STANDARD; an unknown name is a client
// mistake that must not pass silently.
std::optional<S3Error> StorageClassProblem(std::string_view storage_class);

// A single byte range resolved against an object size.
struct ByteRange {
  uint64_t first = 0;
  uint64_t length = 0;
};
enum class RangeKind {
  kWhole,          // no Range header, or one S3 ignores (malformed, several ranges)
  kPartial,        // serve `range` with 206
  kUnsatisfiable,  // 416 InvalidRange
};
struct RangeRequest {
  RangeKind kind = RangeKind::kWhole;
  ByteRange range;
};
RangeRequest ResolveRange(std::string_view header, uint64_t object_size);
// Parses x-amz-copy-source-range "bytes=a-b" (both bounds required) against the source size.
Result<ByteRange> ParseCopySourceRange(std::string_view header, uint64_t object_size);

// Conditional request headers (GET/HEAD/copy source).
struct Conditions {
  std::optional<std::string> if_match;
  std::optional<std::string> if_none_match;
  std::optional<WallTime> if_modified_since;
  std::optional<WallTime> if_unmodified_since;
};
enum class ConditionOutcome { kProceed, kNotModified, kPreconditionFailed };
// RFC 7232 §6 order, which S3 follows: If-Match, else If-Unmodified-Since (412); then
// If-None-Match, else If-Modified-Since (304). Times compare at one-second resolution.
ConditionOutcome EvaluateConditions(const Conditions& conditions, std::string_view etag, int64_t mtime_ms);
// True if the comma-separated entity-tag list matches `etag` ("*" matches anything).
bool EtagListMatches(std::string_view list, std::string_view etag);
// Removes surrounding quotes (and a W/ prefix) from an entity tag.
std::string UnquoteEtag(std::string_view etag);

// ListObjectsV2 continuation tokens: opaque base64 of where the previous page stopped. A page can
// end on a key or on a rolled-up common prefix; the next page resumes after either.
std::string EncodeContinuationToken(std::string_view last, bool is_common_prefix);
// The start-after key for the next page; nullopt if the token is not one of ours.
std::optional<std::string> DecodeContinuationToken(std::string_view token);
// Start-after key that also skips every key under `common_prefix` (0xFF never occurs in UTF-8).
std::string AfterCommonPrefix(std::string_view common_prefix);
// The common prefix `key` rolls up into under a delimiter listing (the key up to and including
// the first `delimiter` after `prefix`), or "" when it is listed itself. A view into `key`.
std::string_view CommonPrefixOf(std::string_view key, std::string_view prefix, std::string_view delimiter);

// x-amz-tagging: a URL query string "k1=v1&k2=v2". InvalidArgument on limits or duplicates.
Result<TagSet> ParseTaggingHeader(std::string_view header);
Status ValidateTags(const TagSet& tags);

// Buckets are unversioned: every object is version "null". True for "null" and for no version at
// all; any other version id names nothing that exists.
bool IsUnversionedId(std::string_view version_id);
inline constexpr std::string_view kInvalidVersionIdMessage = "Invalid version id specified";

// x-amz-copy-source: "/bucket/key" or "bucket/key", URL-encoded, optional "?versionId=null".
struct CopySource {
  std::string bucket;
  std::string key;
};
Result<CopySource> ParseCopySource(std::string_view header);

// Removes the aws-chunked token from a Content-Encoding list ("gzip,aws-chunked" → "gzip").
std::string StripAwsChunked(std::string_view content_encoding);

}  // namespace serac::s3
