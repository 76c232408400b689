#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "auth/sigv2_internal.h"
#include "auth/sigv4_internal.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/limits.h"

namespace serac::auth::internal {
namespace {

using internal::FindParam;

constexpr std::string_view kHeaderPrefix = "AWS ";
constexpr std::string_view kMissingDate = "AWS authentication requires a valid Date or x-amz-date header";
constexpr std::string_view kMixedMechanisms =
    "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string "
    "parameter or the Authorization header should be specified";

// Query parameters S3 signs as part of the resource in SigV2. The union of what AWS documents and
// what the SigV2 signers in use (botocore, minio-go) include; kept sorted for binary search.
constexpr std::array<std::string_view, 37> kSignedSubresources = {
    "accelerate",
    "acl",
    "analytics",
    "cors",
    "defaultObjectAcl",
    "delete",
    "encryption",
    "inventory",
    "legal-hold",
    "lifecycle",
    "location",
    "logging",
    "metrics",
    "notification",
    "object-lock",
    "partNumber",
    "policy",
    "replication",
    "requestPayment",
    "response-cache-control",
    "response-content-disposition",
    "response-content-encoding",
    "response-content-language",
    "response-content-type",
    "response-expires",
    "restore",
    "retention",
    "select",
    "select-type",
    "storageClass",
    "tagging",
    "torrent",
    "uploadId",
    "uploads",
    "versionId",
    "versioning",
    "versions",
};

bool IsSignedSubresource(std::string_view name) {
  return std::binary_search(kSignedSubresources.begin(), kSignedSubresources.end(), name);
}

// One query parameter exactly as sent, plus its decoded value. '+' is kept literally: a base64
// signature sent without escaping must still match, and no SigV2 input legitimately holds a space
// written as '+'.
struct RawParam {
  std::string_view raw_name;
  std::string name;   // decoded
  std::string value;  // decoded
  bool has_equals = false;
};

std::string Decode(std::string_view raw) {
  std::optional<std::string> decoded = UriDecode(raw, /*plus_is_space=*/false);
  return decoded ? std::move(*decoded) : std::string(raw);
}

std::vector<RawParam> ParseQuery(std::string_view raw_query) {
  std::vector<RawParam> params;
  while (!raw_query.empty()) {
    size_t amp = raw_query.find('&');
    std::string_view piece = raw_query.substr(0, amp);
    raw_query = amp == std::string_view::npos ? std::string_view() : raw_query.substr(amp + 1);
    if (piece.empty()) continue;
    size_t equals = piece.find('=');
    RawParam param;
    param.raw_name = piece.substr(0, equals);
    param.name = Decode(param.raw_name);
    if (equals != std::string_view::npos) {
      param.has_equals = true;
      param.value = Decode(piece.substr(equals + 1));
    }
    params.push_back(std::move(param));
  }
  return params;
}

// Accepts RFC 7231 dates plus the "+0000" zone spelling of RFC 1123 used in AWS's own examples,
// and the compact x-amz-date form some clients send even with SigV2.
std::optional<WallTime> ParseRequestDate(std::string_view text) {
  text = TrimWhitespace(text);
  if (std::optional<WallTime> parsed = ParseHttpDate(text)) return parsed;
  for (std::string_view zone : {" +0000", " -0000", " UT"}) {
    if (text.size() > zone.size() && text.substr(text.size() - zone.size()) == zone) {
      std::string gmt(text.substr(0, text.size() - zone.size()));
      gmt += " GMT";
      return ParseHttpDate(gmt);
    }
  }
  return ParseAmzDate(text);
}

// What the request claims: who signed it, with what, and how it is dated.
struct V2Parameters {
  bool presigned = false;
  std::string access_key;
  std::string signature;  // base64
  std::string session_token;
  WallTime request_time{};  // header form
  std::string expires;      // presigned form: epoch seconds as sent (it is the signed date line)
};

Result<V2Parameters> ParseHeaderForm(const http::Request& request, std::string_view authorization) {
  static constexpr std::string_view kInvalid =
      "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature";
  std::string_view credentials = TrimWhitespace(authorization.substr(kHeaderPrefix.size()));
  size_t colon = credentials.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == credentials.size()) {
    return Error(ErrorCode::kInvalidArgument, std::string(kInvalid));
  }
  V2Parameters params;
  params.access_key = std::string(credentials.substr(0, colon));
  params.signature = std::string(credentials.substr(colon + 1));
  const std::string* date = FindHeader(request, "x-amz-date");
  if (date == nullptr) date = FindHeader(request, "date");
  std::optional<WallTime> parsed = date ? ParseRequestDate(*date) : std::nullopt;
  if (!parsed) return Error(ErrorCode::kAccessDenied, std::string(kMissingDate));
  params.request_time = *parsed;
  if (const std::string* token = FindHeader(request, "x-amz-security-token")) params.session_token = *token;
  return params;
}

Result<V2Parameters> ParseQueryForm(const std::vector<RawParam>& query) {
  const std::string* access_key = FindParam(query, "AWSAccessKeyId");
  const std::string* signature = FindParam(query, "Signature");
  const std::string* expires = FindParam(query, "Expires");
  if (!access_key || !signature || !expires || access_key->empty() || signature->empty()) {
    return Error(ErrorCode::kAccessDenied,
                 "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters");
  }
  if (!ParseUint64(*expires))
    return Error(ErrorCode::kAccessDenied, "Invalid date (should be seconds since epoch)");
  V2Parameters params;
  params.presigned = true;
  params.access_key = *access_key;
  params.signature = *signature;
  params.expires = *expires;
  if (const std::string* token = FindParam(query, "x-amz-security-token")) params.session_token = *token;
  return params;
}

Status CheckRequestTime(const V2Parameters& params, WallTime now) {
  if (params.presigned) {
    uint64_t expires = ParseUint64(params.expires).value_or(0);
    auto now_seconds = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    if (now_seconds < 0 || static_cast<uint64_t>(now_seconds) > expires) {
      return Error(ErrorCode::kExpired, "Request has expired");
    }
    // SigV2 names an instant, not a lifetime: without a cap a URL could be made to last forever.
    // It gets SigV4's (limits::kPresignedExpiryMax), counted from now.
    if (expires - static_cast<uint64_t>(now_seconds) >
        static_cast<uint64_t>(limits::kPresignedExpiryMax.count())) {
      return Error(
          ErrorCode::kAccessDenied,
          "Expires must be at most seven days (limits::kPresignedExpiryMax, 604800 seconds) from now");
    }
    return Status::Ok();
  }
  return CheckClockSkew(params.request_time, now);
}

// "name:value\n" for every x-amz-* header (and, for presigned URLs, x-amz-* query parameter, which
// is how botocore carries headers such as the security token), sorted, duplicates joined with ','.
std::string CanonicalizedAmzHeaders(const http::Request& request, const std::vector<RawParam>& query,
                                    bool presigned) {
  std::map<std::string, std::vector<std::string_view>> amz;
  for (const http::Header& header : request.headers) {
    std::string name = AsciiLower(header.name);
    if (name.rfind("x-amz-", 0) == 0) amz[name].push_back(TrimWhitespace(header.value));
  }
  if (presigned) {
    for (const RawParam& param : query) {
      std::string name = AsciiLower(param.name);
      if (name.rfind("x-amz-", 0) == 0) amz[name].push_back(TrimWhitespace(param.value));
    }
  }
  std::string text;
  for (const auto& [name, values] : amz) {
    text.append(name).push_back(':');
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) text.push_back(',');
      text.append(values[i]);
    }
    text.push_back('\n');
  }
  return text;
}

// Content-MD5 or Content-Type: a presigned URL carries them as query parameters when the signer
// knew them; otherwise they are whatever header the client sends.
std::string StandardHeaderValue(const http::Request& request, const std::vector<RawParam>& query,
                                bool presigned, std::string_view name) {
  if (presigned) {
    for (const RawParam& param : query) {
      if (AsciiEqualsIgnoreCase(param.name, name)) return std::string(TrimWhitespace(param.value));
    }
  }
  const std::string* value = FindHeader(request, name);
  return value ? std::string(TrimWhitespace(*value)) : std::string();
}

std::string DateLine(const http::Request& request, const V2Parameters& params) {
  if (params.presigned) return params.expires;
  // x-amz-date replaces Date, and the Date line is then signed empty.
  if (FindHeader(request, "x-amz-date") != nullptr) return "";
  const std::string* date = FindHeader(request, "date");
  return date ? std::string(TrimWhitespace(*date)) : std::string();
}

std::string BuildStringToSign(const http::Request& request, const std::vector<RawParam>& query,
                              const V2Parameters& params, std::string_view virtual_host_bucket) {
  std::string text = request.method;
  text.push_back('\n');
  text.append(StandardHeaderValue(request, query, params.presigned, "content-md5")).push_back('\n');
  text.append(StandardHeaderValue(request, query, params.presigned, "content-type")).push_back('\n');
  text.append(DateLine(request, params)).push_back('\n');
  text.append(CanonicalizedAmzHeaders(request, query, params.presigned));
  text.append(CanonicalizedResourceV2(request.path, request.query, virtual_host_bucket));
  return text;
}

Result<V2Parameters> ParseParameters(const http::Request& request, const std::vector<RawParam>& query) {
  const std::string* authorization = FindHeader(request, "authorization");
  if (authorization == nullptr) return ParseQueryForm(query);
  for (std::string_view name : {"AWSAccessKeyId", "X-Amz-Algorithm", "X-Amz-Signature", "X-Amz-Credential"}) {
    if (FindParam(query, name) != nullptr)
      return Error(ErrorCode::kInvalidArgument, std::string(kMixedMechanisms));
  }
  return ParseHeaderForm(request, TrimWhitespace(*authorization));
}

}  // namespace

bool IsSignatureV2(const http::Request& request) {
  if (const std::string* authorization = FindHeader(request, "authorization")) {
    return TrimWhitespace(*authorization).rfind(kHeaderPrefix, 0) == 0;
  }
  if (request.query.empty()) return false;
  std::vector<RawParam> query = ParseQuery(request.query);
  return FindParam(query, "AWSAccessKeyId") != nullptr && FindParam(query, "X-Amz-Algorithm") == nullptr &&
         FindParam(query, "X-Amz-Credential") == nullptr && FindParam(query, "X-Amz-Signature") == nullptr;
}

std::string CanonicalizedResourceV2(std::string_view raw_path, std::string_view raw_query,
                                    std::string_view virtual_host_bucket) {
  std::string resource;
  if (!virtual_host_bucket.empty()) resource.append("/").append(virtual_host_bucket);
  resource.append(raw_path.empty() ? "/" : raw_path);
  std::vector<RawParam> signed_params;
  for (RawParam& param : ParseQuery(raw_query)) {
    if (IsSignedSubresource(param.raw_name)) signed_params.push_back(std::move(param));
  }
  std::stable_sort(signed_params.begin(), signed_params.end(),
                   [](const RawParam& a, const RawParam& b) { return a.raw_name < b.raw_name; });
  for (size_t i = 0; i < signed_params.size(); ++i) {
    resource.push_back(i == 0 ? '?' : '&');
    resource.append(signed_params[i].raw_name);
    if (signed_params[i].has_equals) resource.append("=").append(signed_params[i].value);
  }
  return resource;
}

std::string SignatureV2(std::string_view secret_key, std::string_view string_to_sign) {
  return Base64Encode(HmacSha1(secret_key, string_to_sign));
}

Result<VerifiedRequest> VerifySignatureV2(const http::Request& request, const VerifyOptions& options,
                                          const CredentialLookup& lookup, SignatureMismatchDetail* mismatch) {
  std::vector<RawParam> query = ParseQuery(request.query);
  SERAC_ASSIGN_OR_RETURN(V2Parameters params, ParseParameters(request, query));
  SERAC_RETURN_IF_ERROR(CheckRequestTime(params, options.now));
  SERAC_ASSIGN_OR_RETURN(Credentials credentials, lookup(params.access_key));
  SERAC_RETURN_IF_ERROR(CheckSessionToken(params.session_token, credentials));

  std::string string_to_sign = BuildStringToSign(request, query, params, options.virtual_host_bucket);
  // Base64 is case-sensitive, so unlike SigV4's hex this is compared byte for byte.
  if (!ConstantTimeEquals(SignatureV2(credentials.secret_key, string_to_sign), params.signature)) {
    if (mismatch != nullptr) {
      *mismatch = SignatureMismatchDetail{params.access_key, std::move(string_to_sign), "", params.signature};
    }
    return Error(ErrorCode::kSignatureMismatch, std::string(kSignatureMismatchMessage));
  }
  VerifiedRequest verified;
  verified.access_key = std::move(params.access_key);
  verified.session_token = std::move(params.session_token);
  verified.presigned = params.presigned;
  verified.payload_mode = PayloadMode::kUnsigned;  // SigV2 never signs the body
  verified.signature_version = 2;
  return verified;
}

}  // namespace serac::auth::internal
