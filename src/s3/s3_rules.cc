#include "s3/s3_rules.h"

#include <algorithm>
#include <set>

#include "common/encoding.h"
#include "common/limits.h"

namespace serac::s3 {

std::optional<S3Error> KeyProblem(std::string_view key) {
  if (key.empty()) return InvalidArgument("Object key must not be empty");
  if (key.size() > limits::kObjectKeyBytesMax) {
    return MakeError(400, "KeyTooLongError",
                     "Your key is too long (limits::kObjectKeyBytesMax = 1024 bytes)");
  }
  if (!IsValidUtf8(key)) return InvalidArgument("Object key must be valid UTF-8");
  return std::nullopt;
}

std::optional<S3Error> StorageClassProblem(std::string_view storage_class) {
  static constexpr std::string_view kKnownClasses[] = {
      "STANDARD",     "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING", "GLACIER",
      "DEEP_ARCHIVE", "OUTPOSTS",           "GLACIER_IR",  "SNOW",       "EXPRESS_ONEZONE"};
  if (storage_class.empty()) return std::nullopt;
  for (std::string_view known : kKnownClasses) {
    if (storage_class == known) return std::nullopt;
  }
  return MakeError(400, "InvalidStorageClass", "The storage class you specified is not valid");
}

// --- Ranges ---

RangeRequest ResolveRange(std::string_view header, uint64_t object_size) {
  RangeRequest whole;
  header = TrimWhitespace(header);
  constexpr std::string_view kUnit = "bytes=";
  if (header.size() <= kUnit.size() || !AsciiEqualsIgnoreCase(header.substr(0, kUnit.size()), kUnit))
    return whole;
  std::string_view spec = TrimWhitespace(header.substr(kUnit.size()));
  if (spec.find(',') != std::string_view::npos) return whole;  // several ranges: S3 serves the object
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return whole;
  std::string_view first_text = TrimWhitespace(spec.substr(0, dash));
  std::string_view last_text = TrimWhitespace(spec.substr(dash + 1));
  RangeRequest unsatisfiable{RangeKind::kUnsatisfiable, {}};

  if (first_text.empty()) {  // suffix: the last n bytes
    auto suffix = ParseUint64(last_text);
    if (!suffix) return whole;
    if (*suffix == 0 || object_size == 0) return unsatisfiable;
    uint64_t length = std::min(*suffix, object_size);
    return {RangeKind::kPartial, {object_size - length, length}};
  }
  auto first = ParseUint64(first_text);
  if (!first) return whole;
  std::optional<uint64_t> last;
  if (!last_text.empty()) {
    last = ParseUint64(last_text);
    if (!last || *last < *first) return whole;  // syntactically invalid: ignored, as RFC 7233 says
  }
  if (*first >= object_size) return unsatisfiable;
  uint64_t end = last ? std::min(*last, object_size - 1) : object_size - 1;
  return {RangeKind::kPartial, {*first, end - *first + 1}};
}

Result<ByteRange> ParseCopySourceRange(std::string_view header, uint64_t object_size) {
  header = TrimWhitespace(header);
  auto invalid = [&] {
    return Error(ErrorCode::kInvalidArgument,
                 "Range specified is not valid for source object of size: " + std::to_string(object_size));
  };
  if (header.substr(0, 6) != "bytes=") return invalid();
  std::string_view spec = header.substr(6);
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return invalid();
  auto first = ParseUint64(spec.substr(0, dash));
  auto last = ParseUint64(spec.substr(dash + 1));
  if (!first || !last || *last < *first || *last >= object_size) return invalid();
  return ByteRange{*first, *last - *first + 1};
}

// --- Conditions ---

std::string UnquoteEtag(std::string_view etag) {
  etag = TrimWhitespace(etag);
  if (etag.substr(0, 2) == "W/") etag = etag.substr(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return std::string(etag);
}

bool EtagListMatches(std::string_view list, std::string_view etag) {
  while (true) {
    size_t comma = list.find(',');
    std::string candidate = UnquoteEtag(list.substr(0, comma));
    if (candidate == "*" || (!candidate.empty() && candidate == etag)) return true;
    if (comma == std::string_view::npos) return false;
    list = list.substr(comma + 1);
  }
}

ConditionOutcome EvaluateConditions(const Conditions& conditions, std::string_view etag, int64_t mtime_ms) {
  const int64_t modified_seconds = mtime_ms / 1000;
  auto seconds = [](WallTime t) { return ToUnixMillis(t) / 1000; };
  if (conditions.if_match) {
    if (!EtagListMatches(*conditions.if_match, etag)) return ConditionOutcome::kPreconditionFailed;
  } else if (conditions.if_unmodified_since && modified_seconds > seconds(*conditions.if_unmodified_since)) {
    return ConditionOutcome::kPreconditionFailed;
  }
  if (conditions.if_none_match) {
    if (EtagListMatches(*conditions.if_none_match, etag)) return ConditionOutcome::kNotModified;
  } else if (conditions.if_modified_since && modified_seconds <= seconds(*conditions.if_modified_since)) {
    return ConditionOutcome::kNotModified;
  }
  return ConditionOutcome::kProceed;
}

// --- Continuation tokens ---

std::string EncodeContinuationToken(std::string_view last, bool is_common_prefix) {
  std::string raw(1, is_common_prefix ? 'P' : 'K');
  raw += last;
  return Base64Encode(raw);
}

std::optional<std::string> DecodeContinuationToken(std::string_view token) {
  auto raw = Base64Decode(token);
  if (!raw || raw->empty()) return std::nullopt;
  std::string_view rest = std::string_view(*raw).substr(1);
  if ((*raw)[0] == 'K') return std::string(rest);
  if ((*raw)[0] == 'P') return AfterCommonPrefix(rest);
  return std::nullopt;
}

std::string AfterCommonPrefix(std::string_view common_prefix) {
  std::string after(common_prefix);
  after.push_back('\xFF');
  return after;
}

std::string_view CommonPrefixOf(std::string_view key, std::string_view prefix, std::string_view delimiter) {
  if (delimiter.empty() || key.substr(0, prefix.size()) != prefix) return {};
  size_t at = key.find(delimiter, prefix.size());
  if (at == std::string_view::npos) return {};
  return key.substr(0, at + delimiter.size());
}

// --- Tags ---

Status ValidateTags(const TagSet& tags) {
  if (tags.size() > limits::kTagsPerObjectMax) {
    return Error(ErrorCode::kInvalidArgument,
                 "Object tags cannot be greater than 10 (limits::kTagsPerObjectMax)");
  }
  std::set<std::string_view> seen;
  for (const auto& [key, value] : tags) {
    if (key.empty() || key.size() > limits::kTagKeyBytesMax || !IsValidUtf8(key)) {
      return Error(ErrorCode::kInvalidArgument, "The TagKey you have provided is invalid");
    }
    if (value.size() > limits::kTagValueBytesMax || !IsValidUtf8(value)) {
      return Error(ErrorCode::kInvalidArgument, "The TagValue you have provided is invalid");
    }
    if (!seen.insert(key).second) {
      return Error(ErrorCode::kInvalidArgument, "Cannot provide multiple Tags with the same key");
    }
  }
  return Status::Ok();
}

Result<TagSet> ParseTaggingHeader(std::string_view header) {
  TagSet tags;
  QueryParams params = QueryParams::Parse(header);
  for (const auto& [key, value] : params.entries()) tags.emplace_back(key, value);
  SERAC_RETURN_IF_ERROR(ValidateTags(tags));
  return tags;
}

// --- Copy source ---

bool IsUnversionedId(std::string_view version_id) { return version_id.empty() || version_id == "null"; }

Result<CopySource> ParseCopySource(std::string_view header) {
  header = TrimWhitespace(header);
  size_t question = header.find('?');
  if (question != std::string_view::npos) {
    std::string_view options = header.substr(question + 1);
    // Keep the parsed parameters alive: Get() returns a view into them.
    QueryParams params = QueryParams::Parse(options);
    std::string_view version = params.Get("versionId", "null");
    if (version != "null") return Error(ErrorCode::kInvalidArgument, "Object versions are not supported");
    header = header.substr(0, question);
  }
  auto decoded = UriDecode(header, false);
  if (!decoded) return Error(ErrorCode::kInvalidArgument, "Copy Source must be URL-encoded");
  std::string_view path = *decoded;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  size_t slash = path.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == path.size()) {
    return Error(ErrorCode::kInvalidArgument,
                 "Copy Source must mention the source bucket and key: sourcebucket/sourcekey");
  }
  return CopySource{std::string(path.substr(0, slash)), std::string(path.substr(slash + 1))};
}

std::string StripAwsChunked(std::string_view content_encoding) {
  std::string out;
  while (!content_encoding.empty()) {
    size_t comma = content_encoding.find(',');
    std::string_view token = TrimWhitespace(content_encoding.substr(0, comma));
    content_encoding =
        comma == std::string_view::npos ? std::string_view() : content_encoding.substr(comma + 1);
    if (token.empty() || AsciiEqualsIgnoreCase(token, "aws-chunked")) continue;
    if (!out.empty()) out += ',';
    out += token;
  }
  return out;
}

}  // namespace serac::s3
