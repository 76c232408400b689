#include "auth/sigv4.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "auth/sigv2_internal.h"
#include "auth/sigv4_internal.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/limits.h"

namespace serac::auth {

// ---------------------------------------------------------------------------------------------
// Shared helpers (sigv4_internal.h)

namespace internal {

std::string StringToSign(std::string_view algorithm, std::string_view amz_date, std::string_view scope,
                         std::string_view tail) {
  std::string text;
  text.reserve(algorithm.size() + amz_date.size() + scope.size() + tail.size() + 3);
  text.append(algorithm).append("\n").append(amz_date).append("\n").append(scope).append("\n").append(tail);
  return text;
}

std::string SignatureHex(std::string_view signing_key, std::string_view string_to_sign) {
  Sha256Digest mac = HmacSha256(signing_key, string_to_sign);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

bool SignaturesEqual(std::string_view a, std::string_view b) {
  return ConstantTimeEquals(AsciiLower(a), AsciiLower(b));
}

const std::string* FindHeader(const http::Request& request, std::string_view name) {
  for (const http::Header& header : request.headers) {
    if (AsciiEqualsIgnoreCase(header.name, name)) return &header.value;
  }
  return nullptr;
}

std::vector<std::string_view> FindHeaders(const http::Request& request, std::string_view name) {
  std::vector<std::string_view> values;
  for (const http::Header& header : request.headers) {
    if (AsciiEqualsIgnoreCase(header.name, name)) values.emplace_back(header.value);
  }
  return values;
}

bool IsLowerHex(std::string_view text, size_t length) {
  if (text.size() != length) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::vector<std::string_view> SplitList(std::string_view text) {
  std::vector<std::string_view> items;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = TrimWhitespace(text.substr(0, comma));
    if (!item.empty()) items.push_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return items;
}

Status CheckClockSkew(WallTime request_time, WallTime now) {
  auto skew = request_time > now ? request_time - now : now - request_time;
  if (skew > limits::kClockSkewMax) {
    return Error(ErrorCode::kClockSkewed,
                 "The difference between the request time and the current time is too large.");
  }
  return Status::Ok();
}

Status CheckSessionToken(std::string_view presented, const Credentials& credentials) {
  if (credentials.session_token.empty()) return Status::Ok();
  if (!ConstantTimeEquals(presented, credentials.session_token)) {
    return Error(ErrorCode::kAccessDenied, "The provided token is malformed or otherwise invalid.");
  }
  return Status::Ok();
}

}  // namespace internal

namespace {

using internal::FindHeader;
using internal::FindParam;

constexpr std::string_view kEcdsaAlgorithm = "AWS4-ECDSA-P256-SHA256";
constexpr std::string_view kTerminator = "aws4_request";
constexpr std::string_view kHeaderMalformedPrefix = "The authorization header is malformed; ";
constexpr std::string_view kCredentialParamPrefix = "Error parsing the X-Amz-Credential parameter; ";
constexpr std::string_view kInvalidContentSha256 =
    "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, "
    "STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER or a valid sha256 value";

std::string ToString(const Sha256Digest& digest) {
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos) {
      parts.push_back(text.substr(start));
      return parts;
    }
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

bool IsDigits(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// ---------------------------------------------------------------------------------------------
// Query strings

struct QueryParam {
  std::string name;   // decoded
  std::string value;  // decoded
};

// Decodes one name or value; '+' is a space (form encoding) as MinIO treats it. A malformed escape
// is kept verbatim: the signature then simply does not match.
std::string DecodeQueryComponent(std::string_view raw) {
  std::optional<std::string> decoded = UriDecode(raw, /*plus_is_space=*/true);
  return decoded ? std::move(*decoded) : std::string(raw);
}

std::vector<QueryParam> DecodeQuery(std::string_view raw_query) {
  std::vector<QueryParam> params;
  if (raw_query.empty()) return params;
  for (std::string_view piece : Split(raw_query, '&')) {
    if (piece.empty()) continue;
    size_t equals = piece.find('=');
    QueryParam param;
    param.name = DecodeQueryComponent(piece.substr(0, equals));
    if (equals != std::string_view::npos) param.value = DecodeQueryComponent(piece.substr(equals + 1));
    params.push_back(std::move(param));
  }
  return params;
}

// ---------------------------------------------------------------------------------------------
// Canonical headers

std::string NormalizeHeaderValue(std::string_view value) {
  value = TrimWhitespace(value);
  std::string normalized;
  normalized.reserve(value.size());
  bool in_space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t') {
      in_space = true;
      continue;
    }
    if (in_space) normalized.push_back(' ');
    in_space = false;
    normalized.push_back(c);
  }
  return normalized;
}

// "name:value\n" for every signed name, in the order given; duplicates joined with ','.
std::string CanonicalHeaders(const std::vector<http::Header>& headers,
                             const std::vector<std::string>& signed_names) {
  std::string text;
  for (const std::string& name : signed_names) {
    text.append(name).push_back(':');
    bool first = true;
    for (const http::Header& header : headers) {
      if (!AsciiEqualsIgnoreCase(header.name, name)) continue;
      if (!first) text.push_back(',');
      text.append(NormalizeHeaderValue(header.value));
      first = false;
    }
    text.push_back('\n');
  }
  return text;
}

std::string JoinSignedHeaders(const std::vector<std::string>& names) {
  std::string line;
  for (const std::string& name : names) {
    if (!line.empty()) line.push_back(';');
    line.append(name);
  }
  return line;
}

// Everything of the canonical request except the payload line.
std::string CanonicalRequestHead(std::string_view method, std::string_view canonical_uri,
                                 std::string_view canonical_query, std::string_view canonical_headers,
                                 std::string_view signed_headers_line) {
  std::string text;
  text.append(method).push_back('\n');
  text.append(canonical_uri).push_back('\n');
  text.append(canonical_query).push_back('\n');
  text.append(canonical_headers).push_back('\n');
  text.append(signed_headers_line).push_back('\n');
  return text;
}

std::string SignCanonicalRequest(std::string_view signing_key, std::string_view amz_date,
                                 std::string_view scope, std::string_view canonical_request) {
  std::string string_to_sign =
      internal::StringToSign(internal::kSigningAlgorithm, amz_date, scope, Sha256Hex(canonical_request));
  return internal::SignatureHex(signing_key, string_to_sign);
}

// ---------------------------------------------------------------------------------------------
// Signing-key cache: four HMACs per request are cheap, but a hot PUT path pays them per chunk
// stream; the key is valid for a whole day, so remember it.

class SigningKeyCache {
 public:
  std::string Get(std::string_view secret_key, std::string_view day, std::string_view region,
                  std::string_view service) {
    // The secret itself is part of the key: hashing it would cost as much as the lookup saves,
    // and the process holds every secret in memory anyway. '\0' cannot occur in any part.
    std::string cache_key;
    cache_key.reserve(secret_key.size() + day.size() + region.size() + service.size() + 3);
    cache_key.append(secret_key)
        .append(1, '\0')
        .append(day)
        .append(1, '\0')
        .append(region)
        .append(1, '\0')
        .append(service);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = entries_.find(cache_key);
      if (found != entries_.end()) return found->second;
    }
    std::string key = Derive(secret_key, day, region, service);
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= limits::kSigningKeyCacheEntriesMax) entries_.clear();  // days roll over
    entries_.emplace(std::move(cache_key), key);
    return key;
  }

 private:
  static std::string Derive(std::string_view secret_key, std::string_view day, std::string_view region,
                            std::string_view service) {
    std::string date_key = ToString(HmacSha256(std::string("AWS4").append(secret_key), day));
    std::string region_key = ToString(HmacSha256(date_key, region));
    std::string service_key = ToString(HmacSha256(region_key, service));
    return ToString(HmacSha256(service_key, kTerminator));
  }

  std::mutex mutex_;
  std::unordered_map<std::string, std::string> entries_;  // guarded by mutex_
};

SigningKeyCache& KeyCache() {
  static SigningKeyCache cache;
  return cache;
}

// ---------------------------------------------------------------------------------------------
// Parsing the auth parameters of a request

struct Scope {
  std::string access_key;
  std::string day;
  std::string region;
  std::string service;
  std::string ToString() const { return day + "/" + region + "/" + service + "/" + std::string(kTerminator); }
};

struct AuthParameters {
  bool presigned = false;
  Scope scope;
  std::vector<std::string> signed_headers;  // lower-case, in the order sent
  std::string signature;
  std::string amz_date;  // the timestamp of the string to sign
  WallTime request_time;
  int64_t expires_seconds = 0;  // presigned only
  std::string session_token;
};

// The region may be empty: DuckDB without s3_region signs so, and MinIO (whose region is unset by
// default) accepts it. The signature covers the scope as sent, so an empty region proves as much.
std::optional<Scope> ParseCredential(std::string_view credential) {
  std::vector<std::string_view> parts = Split(credential, '/');
  if (parts.size() != 5) return std::nullopt;
  if (parts[0].empty() || parts[1].size() != 8 || !IsDigits(parts[1]) || parts[3].empty() ||
      parts[4] != kTerminator) {
    return std::nullopt;
  }
  return Scope{std::string(parts[0]), std::string(parts[1]), std::string(parts[2]), std::string(parts[3])};
}

std::optional<std::vector<std::string>> ParseSignedHeaders(std::string_view line) {
  std::vector<std::string> names;
  for (std::string_view name : Split(line, ';')) {
    name = TrimWhitespace(name);
    if (name.empty()) return std::nullopt;
    names.push_back(AsciiLower(name));
  }
  return names;
}

Status CheckScopeAgainstOptions(const Scope& scope, const VerifyOptions& options, std::string_view prefix) {
  if (std::find(options.services.begin(), options.services.end(), scope.service) == options.services.end()) {
    std::string expected = options.services.empty() ? std::string() : options.services.front();
    return Error(ErrorCode::kAuthorizationMalformed, std::string(prefix) + "incorrect service \"" +
                                                         scope.service + "\". This endpoint belongs to \"" +
                                                         expected + "\".");
  }
  return Status::Ok();
}

Status CheckScopeDay(const AuthParameters& params, std::string_view prefix) {
  if (params.amz_date.substr(0, 8) != params.scope.day) {
    return Error(ErrorCode::kAuthorizationMalformed, std::string(prefix) + "Invalid credential date \"" +
                                                         params.scope.day +
                                                         "\". This date is not the same as X-Amz-Date: \"" +
                                                         params.amz_date.substr(0, 8) + "\".");
  }
  return Status::Ok();
}

Status MalformedHeader(std::string_view detail) {
  return Error(ErrorCode::kAuthorizationMalformed, std::string(kHeaderMalformedPrefix) + std::string(detail));
}

// Request time for header auth: x-amz-date, else Date.
Status ReadHeaderDate(const http::Request& request, AuthParameters& params) {
  static constexpr std::string_view kMissingDate =
      "AWS authentication requires a valid Date or x-amz-date header";
  if (const std::string* amz_date = FindHeader(request, "x-amz-date")) {
    std::optional<WallTime> parsed = ParseAmzDate(*amz_date);
    if (!parsed) return Error(ErrorCode::kAccessDenied, std::string(kMissingDate));
    params.request_time = *parsed;
    params.amz_date = *amz_date;
    return Status::Ok();
  }
  if (const std::string* date = FindHeader(request, "date")) {
    std::optional<WallTime> parsed = ParseHttpDate(*date);
    if (!parsed) return Error(ErrorCode::kAccessDenied, std::string(kMissingDate));
    params.request_time = *parsed;
    params.amz_date = FormatAmzDate(*parsed);
    return Status::Ok();
  }
  return Error(ErrorCode::kAccessDenied, std::string(kMissingDate));
}

Result<AuthParameters> ParseAuthorizationHeader(const http::Request& request, std::string_view header,
                                                const VerifyOptions& options) {
  header = TrimWhitespace(header);
  size_t space = header.find(' ');
  std::string_view algorithm = header.substr(0, space);
  if (algorithm == kEcdsaAlgorithm) {
    return Error(ErrorCode::kNotImplemented,
                 "Signature Version 4A (AWS4-ECDSA-P256-SHA256) is not supported");
  }
  if (algorithm != internal::kSigningAlgorithm || space == std::string_view::npos) {
    return MalformedHeader("the authorization mechanism must be AWS4-HMAC-SHA256.");
  }
  std::optional<std::string_view> credential, signed_headers, signature;
  for (std::string_view component : Split(header.substr(space + 1), ',')) {
    component = TrimWhitespace(component);
    size_t equals = component.find('=');
    if (equals == std::string_view::npos) continue;
    std::string_view name = TrimWhitespace(component.substr(0, equals));
    std::string_view value = TrimWhitespace(component.substr(equals + 1));
    if (name == "Credential") credential = value;
    if (name == "SignedHeaders") signed_headers = value;
    if (name == "Signature") signature = value;
  }
  if (!credential || !signed_headers || !signature) {
    return MalformedHeader(
        "the authorization header requires three components: Credential, SignedHeaders, and Signature.");
  }
  AuthParameters params;
  std::optional<Scope> scope = ParseCredential(*credential);
  if (!scope) {
    return MalformedHeader(
        "the Credential is mal-formed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".");
  }
  params.scope = std::move(*scope);
  std::optional<std::vector<std::string>> names = ParseSignedHeaders(*signed_headers);
  if (!names) return MalformedHeader("the SignedHeaders component is mal-formed.");
  params.signed_headers = std::move(*names);
  if (!internal::IsLowerHex(AsciiLower(*signature), 64)) {
    return MalformedHeader("the Signature component must be 64 hexadecimal characters.");
  }
  params.signature = std::string(*signature);
  SERAC_RETURN_IF_ERROR(ReadHeaderDate(request, params));
  SERAC_RETURN_IF_ERROR(CheckScopeDay(params, kHeaderMalformedPrefix));
  SERAC_RETURN_IF_ERROR(CheckScopeAgainstOptions(params.scope, options, kHeaderMalformedPrefix));
  if (const std::string* token = FindHeader(request, "x-amz-security-token")) params.session_token = *token;
  return params;
}

Status QueryParamError(std::string message) {
  return Error(ErrorCode::kAuthorizationMalformed, std::move(message));
}

Status ParsePresignExpiry(std::string_view text, AuthParameters& params) {
  bool negative = !text.empty() && text.front() == '-';
  std::optional<uint64_t> value = ParseUint64(negative ? text.substr(1) : text);
  if (!value) return QueryParamError("X-Amz-Expires should be a number");
  if (negative && *value != 0) return QueryParamError("X-Amz-Expires must be non-negative");
  if (*value > static_cast<uint64_t>(limits::kPresignedExpiryMax.count())) {
    return QueryParamError(
        "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less "
        "than "
        "604800 seconds");
  }
  params.expires_seconds = static_cast<int64_t>(*value);
  return Status::Ok();
}

Result<AuthParameters> ParsePresignedQuery(const std::vector<QueryParam>& query,
                                           const VerifyOptions& options) {
  const std::string* algorithm = FindParam(query, "X-Amz-Algorithm");
  const std::string* credential = FindParam(query, "X-Amz-Credential");
  const std::string* signature = FindParam(query, "X-Amz-Signature");
  const std::string* date = FindParam(query, "X-Amz-Date");
  const std::string* signed_headers = FindParam(query, "X-Amz-SignedHeaders");
  const std::string* expires = FindParam(query, "X-Amz-Expires");
  if (algorithm && *algorithm == kEcdsaAlgorithm) {
    return Error(ErrorCode::kNotImplemented,
                 "Signature Version 4A (AWS4-ECDSA-P256-SHA256) is not supported");
  }
  if (!algorithm || !credential || !signature || !date || !signed_headers || !expires) {
    return QueryParamError(
        "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, "
        "X-Amz-Signature, "
        "X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.");
  }
  if (*algorithm != internal::kSigningAlgorithm) {
    return QueryParamError("X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"");
  }
  AuthParameters params;
  params.presigned = true;
  std::optional<WallTime> request_time = ParseAmzDate(*date);
  if (!request_time)
    return QueryParamError("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"");
  params.request_time = *request_time;
  params.amz_date = *date;
  SERAC_RETURN_IF_ERROR(ParsePresignExpiry(*expires, params));
  std::optional<Scope> scope = ParseCredential(*credential);
  if (!scope) {
    return QueryParamError(
        std::string(kCredentialParamPrefix) +
        "the Credential is mal-formed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".");
  }
  params.scope = std::move(*scope);
  std::optional<std::vector<std::string>> names = ParseSignedHeaders(*signed_headers);
  if (!names) return QueryParamError("X-Amz-SignedHeaders is mal-formed");
  params.signed_headers = std::move(*names);
  if (!internal::IsLowerHex(AsciiLower(*signature), 64)) {
    return QueryParamError("X-Amz-Signature must be 64 hexadecimal characters");
  }
  params.signature = *signature;
  SERAC_RETURN_IF_ERROR(CheckScopeDay(params, kCredentialParamPrefix));
  SERAC_RETURN_IF_ERROR(CheckScopeAgainstOptions(params.scope, options, kCredentialParamPrefix));
  if (const std::string* token = FindParam(query, "X-Amz-Security-Token")) params.session_token = *token;
  return params;
}

// ---------------------------------------------------------------------------------------------
// Checks on the parsed parameters

Status CheckRequestTime(const AuthParameters& params, WallTime now) {
  if (params.presigned) {
    if (params.request_time > now + limits::kClockSkewMax) {
      return Error(ErrorCode::kAccessDenied, "Request is not valid yet");
    }
    if (now > params.request_time + std::chrono::seconds(params.expires_seconds)) {
      return Error(ErrorCode::kExpired, "Request has expired");
    }
    return Status::Ok();
  }
  return internal::CheckClockSkew(params.request_time, now);
}

// `host` must be signed, and so must every x-amz-* header sent, in both forms: a presigned URL's
// holder who adds an unsigned x-amz-copy-source, x-amz-meta-* or x-amz-tagging would make the
// request do what its signer never asked for (AWS refuses them the same way). Other headers
// browsers and tools add stay allowed.
Status CheckSignedHeaders(const http::Request& request, const AuthParameters& params) {
  const std::vector<std::string>& names = params.signed_headers;
  if (std::find(names.begin(), names.end(), "host") == names.end()) {
    return Error(ErrorCode::kAuthorizationMalformed,
                 params.presigned ? "X-Amz-SignedHeaders must include host"
                                  : std::string(kHeaderMalformedPrefix) + "SignedHeaders must include host.");
  }
  for (const http::Header& header : request.headers) {
    std::string name = AsciiLower(header.name);
    if (name.rfind("x-amz-", 0) != 0) continue;
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return Error(ErrorCode::kAccessDenied,
                   "There were headers present in the request which were not signed");
    }
  }
  return Status::Ok();
}

struct PayloadClaim {
  PayloadMode mode = PayloadMode::kUnsigned;
  std::string line;  // the payload line of the canonical request
};

// Java clients (AWS SDK v2 with a SHA-256 checksum, as Iceberg's REST SigV4 session uses) send
// the body's SHA-256 in base64 but sign its hex form. Only generic-service requests get this
// leniency; S3 requests keep S3's exact rule.
std::optional<std::string> Base64Sha256AsHex(std::string_view text) {
  if (text.size() != 44) return std::nullopt;
  std::optional<std::string> digest = Base64Decode(text);
  if (!digest || digest->size() != 32) return std::nullopt;
  return HexEncode(*digest);
}

Result<PayloadClaim> ParsePayloadClaim(const std::string& text, UriEncoding encoding) {
  if (text == internal::kUnsignedPayload) return PayloadClaim{PayloadMode::kUnsigned, text};
  if (text == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD") return PayloadClaim{PayloadMode::kStreamingSigned, text};
  if (text == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER") {
    return PayloadClaim{PayloadMode::kStreamingSignedTrailer, text};
  }
  if (text == "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
    return PayloadClaim{PayloadMode::kStreamingUnsignedTrailer, text};
  if (text == "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD" ||
      text == "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER") {
    return Error(ErrorCode::kNotImplemented, "Signature Version 4A streaming payloads are not supported");
  }
  if (internal::IsLowerHex(AsciiLower(text), 64)) return PayloadClaim{PayloadMode::kSignedHex, text};
  if (encoding == UriEncoding::kGeneric) {
    if (std::optional<std::string> hex = Base64Sha256AsHex(text)) {
      return PayloadClaim{PayloadMode::kSignedHex, std::move(*hex)};
    }
  }
  return Error(ErrorCode::kInvalidArgument, std::string(kInvalidContentSha256));
}

// True when the request cannot have a body, so the hash of an unsent payload line is known now.
bool BodyKnownEmpty(const http::Request& request) {
  if (FindHeader(request, "transfer-encoding") != nullptr) return false;
  const std::string* length = FindHeader(request, "content-length");
  return length == nullptr || TrimWhitespace(*length) == "0";
}

constexpr std::string_view kMissingContentSha256 =
    "Missing required header for this request: x-amz-content-sha256";

Result<PayloadClaim> ReadPayloadClaim(const http::Request& request, const AuthParameters& params,
                                      const std::vector<QueryParam>& query, const VerifyOptions& options) {
  if (params.presigned) {
    const std::string* claimed = FindParam(query, "X-Amz-Content-Sha256");
    if (claimed == nullptr)
      return PayloadClaim{PayloadMode::kUnsigned, std::string(internal::kUnsignedPayload)};
    return ParsePayloadClaim(*claimed, options.uri_encoding);
  }
  if (const std::string* header = FindHeader(request, "x-amz-content-sha256")) {
    return ParsePayloadClaim(*header, options.uri_encoding);
  }
  // The signature covers the body's hash, which the request does not carry: it is decided here,
  // from a body known to be empty or already read, or not at all.
  if (BodyKnownEmpty(request))
    return PayloadClaim{PayloadMode::kSignedHex, std::string(internal::kEmptySha256Hex)};
  if (options.body_sha256_hex && internal::IsLowerHex(*options.body_sha256_hex, 64)) {
    return PayloadClaim{PayloadMode::kSignedHex, *options.body_sha256_hex};
  }
  return Error(ErrorCode::kInvalidArgument, std::string(kMissingContentSha256));
}

Result<AuthParameters> ParseAuthParameters(const http::Request& request, const std::vector<QueryParam>& query,
                                           const VerifyOptions& options) {
  const std::string* authorization = FindHeader(request, "authorization");
  bool has_query_auth =
      FindParam(query, "X-Amz-Algorithm") != nullptr || FindParam(query, "X-Amz-Signature") != nullptr;
  if (authorization != nullptr && has_query_auth) {
    return Error(ErrorCode::kInvalidArgument,
                 "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query "
                 "string parameter or the Authorization header should be specified");
  }
  if (authorization != nullptr) return ParseAuthorizationHeader(request, *authorization, options);
  if (has_query_auth || FindParam(query, "X-Amz-Credential") != nullptr)
    return ParsePresignedQuery(query, options);
  return Error(ErrorCode::kAccessDenied, "The request carries no signature");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public functions

std::string DeriveSigningKey(std::string_view secret_key, std::string_view day, std::string_view region,
                             std::string_view service) {
  return KeyCache().Get(secret_key, day, region, service);
}

std::string CanonicalUri(std::string_view raw_path, UriEncoding encoding) {
  if (raw_path.empty()) return "/";
  if (encoding == UriEncoding::kS3) {
    std::optional<std::string> decoded = UriDecode(raw_path, /*plus_is_space=*/false);
    return UriEncode(decoded ? *decoded : raw_path, /*encode_slash=*/false);
  }
  // Generic AWS services: remove "." and ".." segments, then encode each (already encoded)
  // segment once more, so "%1F" is signed as "%251F".
  std::vector<std::string_view> segments;
  std::vector<std::string_view> parts = Split(raw_path, '/');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == ".") continue;
    if (parts[i] == "..") {
      if (segments.size() > 1) segments.pop_back();
      continue;
    }
    segments.push_back(parts[i]);
  }
  std::string uri;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (i > 0) uri.push_back('/');
    uri.append(UriEncode(segments[i], /*encode_slash=*/true));
  }
  if (uri.empty() || uri.front() != '/') uri.insert(uri.begin(), '/');
  return uri;
}

std::string CanonicalQuery(std::string_view raw_query, bool drop_signature) {
  std::vector<std::pair<std::string, std::string>> encoded;
  for (QueryParam& param : DecodeQuery(raw_query)) {
    if (drop_signature && param.name == "X-Amz-Signature") continue;
    encoded.emplace_back(UriEncode(param.name, true), UriEncode(param.value, true));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string text;
  for (const auto& [name, value] : encoded) {
    if (!text.empty()) text.push_back('&');
    text.append(name).push_back('=');
    text.append(value);
  }
  return text;
}

bool SignsUnsentBodyHash(const http::Request& request) {
  if (internal::IsSignatureV2(request)) return false;
  const std::string* authorization = FindHeader(request, "authorization");
  if (authorization == nullptr) return false;
  return FindHeader(request, "x-amz-content-sha256") == nullptr && !BodyKnownEmpty(request);
}

bool HasSignature(const http::Request& request) {
  if (FindHeader(request, "authorization") != nullptr) return true;
  if (request.query.empty()) return false;
  std::vector<QueryParam> query = DecodeQuery(request.query);
  for (std::string_view name : {"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "AWSAccessKeyId"}) {
    if (FindParam(query, name) != nullptr) return true;
  }
  return false;
}

Result<VerifiedRequest> Verify(const http::Request& request, const VerifyOptions& options,
                               const CredentialLookup& lookup) {
  return Verify(request, options, lookup, nullptr);
}

Result<VerifiedRequest> Verify(const http::Request& request, const VerifyOptions& options,
                               const CredentialLookup& lookup, SignatureMismatchDetail* mismatch) {
  if (internal::IsSignatureV2(request))
    return internal::VerifySignatureV2(request, options, lookup, mismatch);
  std::vector<QueryParam> query = DecodeQuery(request.query);
  SERAC_ASSIGN_OR_RETURN(AuthParameters params, ParseAuthParameters(request, query, options));
  SERAC_ASSIGN_OR_RETURN(PayloadClaim payload, ReadPayloadClaim(request, params, query, options));
  SERAC_RETURN_IF_ERROR(CheckRequestTime(params, options.now));
  SERAC_RETURN_IF_ERROR(CheckSignedHeaders(request, params));
  SERAC_ASSIGN_OR_RETURN(Credentials credentials, lookup(params.scope.access_key));
  SERAC_RETURN_IF_ERROR(internal::CheckSessionToken(params.session_token, credentials));

  VerifiedRequest verified;
  verified.access_key = params.scope.access_key;
  verified.session_token = params.session_token;
  verified.presigned = params.presigned;
  verified.payload_mode = payload.mode;
  if (payload.mode == PayloadMode::kSignedHex) verified.payload_sha256_hex = AsciiLower(payload.line);
  verified.signing_key =
      DeriveSigningKey(credentials.secret_key, params.scope.day, params.scope.region, params.scope.service);
  verified.seed_signature = AsciiLower(params.signature);
  verified.amz_date = params.amz_date;
  verified.scope = params.scope.ToString();
  std::string head = CanonicalRequestHead(request.method, CanonicalUri(request.path, options.uri_encoding),
                                          CanonicalQuery(request.query, params.presigned),
                                          CanonicalHeaders(request.headers, params.signed_headers),
                                          JoinSignedHeaders(params.signed_headers));
  std::string canonical_request = head + payload.line;
  std::string string_to_sign = internal::StringToSign(internal::kSigningAlgorithm, verified.amz_date,
                                                      verified.scope, Sha256Hex(canonical_request));
  if (!internal::SignaturesEqual(internal::SignatureHex(verified.signing_key, string_to_sign),
                                 params.signature)) {
    if (mismatch != nullptr) {
      *mismatch = SignatureMismatchDetail{verified.access_key, std::move(string_to_sign),
                                          std::move(canonical_request), params.signature};
    }
    return Error(ErrorCode::kSignatureMismatch, std::string(internal::kSignatureMismatchMessage));
  }
  return verified;
}

// ---------------------------------------------------------------------------------------------
// Signing (client side)

namespace {

void RemoveHeader(std::vector<http::Header>& headers, std::string_view name) {
  headers.erase(
      std::remove_if(headers.begin(), headers.end(),
                     [&](const http::Header& header) { return AsciiEqualsIgnoreCase(header.name, name); }),
      headers.end());
}

std::vector<std::string> SortedLowerNames(const std::vector<http::Header>& headers) {
  std::vector<std::string> names;
  for (const http::Header& header : headers) names.push_back(AsciiLower(header.name));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string PayloadLineForSigning(const SignOptions& options) {
  if (!options.payload_sha256_hex.empty()) return options.payload_sha256_hex;
  // Without the header the server hashes the body itself, so "unsigned" cannot be expressed.
  return std::string(options.send_content_sha256_header ? internal::kUnsignedPayload
                                                        : internal::kEmptySha256Hex);
}

}  // namespace

void SignRequest(std::string_view method, std::string_view raw_path, std::string_view raw_query,
                 std::vector<http::Header>& headers, const Credentials& credentials,
                 const SignOptions& options) {
  for (std::string_view name :
       {"authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"}) {
    RemoveHeader(headers, name);
  }
  std::string amz_date = FormatAmzDate(options.now);
  std::string day = FormatAmzDay(options.now);
  std::string payload_line = PayloadLineForSigning(options);
  headers.push_back({"x-amz-date", amz_date});
  if (options.send_content_sha256_header) headers.push_back({"x-amz-content-sha256", payload_line});
  if (!credentials.session_token.empty())
    headers.push_back({"x-amz-security-token", credentials.session_token});

  std::vector<std::string> signed_names = SortedLowerNames(headers);
  std::string signed_line = JoinSignedHeaders(signed_names);
  std::string canonical_request = CanonicalRequestHead(method, CanonicalUri(raw_path, options.uri_encoding),
                                                       CanonicalQuery(raw_query, false),
                                                       CanonicalHeaders(headers, signed_names), signed_line) +
                                  payload_line;
  Scope scope{credentials.access_key, day, options.region, options.service};
  std::string key = DeriveSigningKey(credentials.secret_key, day, options.region, options.service);
  std::string signature = SignCanonicalRequest(key, amz_date, scope.ToString(), canonical_request);
  headers.push_back({"Authorization", std::string(internal::kSigningAlgorithm) +
                                          " Credential=" + credentials.access_key + "/" + scope.ToString() +
                                          ", SignedHeaders=" + signed_line + ", Signature=" + signature});
}

std::string PresignQuery(std::string_view method, std::string_view raw_path, std::string_view host,
                         const Credentials& credentials, const SignOptions& options,
                         int64_t expires_seconds) {
  std::string amz_date = FormatAmzDate(options.now);
  std::string day = FormatAmzDay(options.now);
  Scope scope{credentials.access_key, day, options.region, options.service};
  std::string query = "X-Amz-Algorithm=" + std::string(internal::kSigningAlgorithm);
  query += "&X-Amz-Credential=" + UriEncode(credentials.access_key + "/" + scope.ToString(), true);
  query += "&X-Amz-Date=" + amz_date;
  query += "&X-Amz-Expires=" + std::to_string(expires_seconds);
  if (!credentials.session_token.empty()) {
    query += "&X-Amz-Security-Token=" + UriEncode(credentials.session_token, true);
  }
  query += "&X-Amz-SignedHeaders=host";
  std::vector<http::Header> headers = {{"host", std::string(host)}};
  std::string canonical_request =
      CanonicalRequestHead(method, CanonicalUri(raw_path, options.uri_encoding), CanonicalQuery(query, false),
                           CanonicalHeaders(headers, {"host"}), "host") +
      std::string(internal::kUnsignedPayload);
  std::string key = DeriveSigningKey(credentials.secret_key, day, options.region, options.service);
  return query +
         "&X-Amz-Signature=" + SignCanonicalRequest(key, amz_date, scope.ToString(), canonical_request);
}

}  // namespace serac::auth
