// Fuzzes the verifier's decision, not only its parsing: a request is signed correctly, one thing
// about it is changed, and the changed request is verified as the server verifies it. Oracle: a
// request the verifier accepts is the request that was signed — same method, path, query, signed
// header values and, for a signed payload, the same body — and carries no unsigned x-amz-* header.
// A verifier that accepted a request before comparing its signature (or compared the wrong thing)
// fails here at once.
//
// Input: five control bytes, then a request in the text form of fuzz_request.h.
//   [0] how it is signed: 'h' S3 header with the body's hash, 'u' S3 header with UNSIGNED-PAYLOAD,
//       'p' presigned (S3), 'g' generic (catalog) header without x-amz-content-sha256 (PyIceberg),
//       'c' S3 aws-chunked with chunk signatures;
//   [1] what is changed (ChangeKind); [2], [3] where (little-endian); [4] the new byte.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "auth/payload.h"
#include "auth/sigv4.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "fuzz_request.h"
#include "http/http_test_fakes.h"

namespace {

using serac::Result;
using serac::auth::Credentials;
using serac::auth::UriEncoding;

constexpr int64_t kSignedAtMs = 1767225600000;  // 2026-01-01T00:00:00Z: the clock of signing and checking
constexpr size_t kChunkBytes = 8192;            // the smallest non-final aws-chunked chunk

Result<Credentials> LookupRoot(std::string_view access_key) {
  if (access_key != serac::fuzz::kRootAccessKey) {
    return serac::Error(serac::ErrorCode::kUnknownAccessKey, "unknown access key");
  }
  return Credentials{std::string(serac::fuzz::kRootAccessKey), std::string(serac::fuzz::kRootSecretKey), ""};
}

[[noreturn]] void Fail(const char* what, const serac::http::Request& signed_request,
                       const serac::http::Request& changed) {
  std::fprintf(stderr, "fuzz oracle: %s\nsigned:  %s %s\nchanged: %s %s\n", what,
               signed_request.method.c_str(), signed_request.target.c_str(), changed.method.c_str(),
               changed.target.c_str());
  std::abort();
}

std::string Lower(std::string_view text) { return serac::AsciiLower(text); }

// An HTTP token (RFC 9110 §5.6.2): what a method or a header name is made of on the wire.
bool IsToken(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

std::string HeaderValue(const serac::http::Request& request, std::string_view name) {
  const std::string* value = request.FindHeader(name);
  return value != nullptr ? *value : std::string();
}

// "k=v" pairs of a raw query, decoded, minus the signature itself, sorted: what a handler reads.
std::multimap<std::string, std::string> QueryMeaning(std::string_view raw) {
  std::multimap<std::string, std::string> params;
  while (!raw.empty()) {
    size_t amp = raw.find('&');
    std::string_view piece = raw.substr(0, amp);
    raw = amp == std::string_view::npos ? std::string_view() : raw.substr(amp + 1);
    if (piece.empty()) continue;
    size_t eq = piece.find('=');
    auto decode = [](std::string_view text) {
      std::optional<std::string> decoded = serac::UriDecode(text, /*plus_is_space=*/true);
      return decoded ? *decoded : std::string(text);
    };
    std::string name = decode(piece.substr(0, eq));
    std::string value = eq == std::string_view::npos ? std::string() : decode(piece.substr(eq + 1));
    if (name == "X-Amz-Signature") continue;
    params.emplace(std::move(name), std::move(value));
  }
  return params;
}

// SigV4's header canonicalisation: trimmed, inner runs of spaces and tabs as one space, repeated
// headers joined with ','. Two requests whose signed headers agree on this are the same request.
std::string CanonicalHeaderValue(const serac::http::Request& request, const std::string& name) {
  std::string joined;
  bool first = true;
  for (const serac::http::Header& header : request.headers) {
    if (!serac::AsciiEqualsIgnoreCase(header.name, name)) continue;
    if (!first) joined.push_back(',');
    first = false;
    std::string_view value = serac::TrimWhitespace(header.value);
    bool in_space = false;
    for (char c : value) {
      if (c == ' ' || c == '\t') {
        in_space = true;
        continue;
      }
      if (in_space) joined.push_back(' ');
      in_space = false;
      joined.push_back(c);
    }
  }
  return joined;
}

// The headers the signature covers, from the Authorization header or the presigned query.
std::vector<std::string> SignedHeaderNames(const serac::http::Request& request) {
  std::string list;
  std::string authorization = HeaderValue(request, "authorization");
  size_t at = authorization.find("SignedHeaders=");
  if (at != std::string::npos) {
    list = authorization.substr(at + 14, authorization.find(',', at) - at - 14);
  } else {
    auto query = QueryMeaning(request.query);
    auto it = query.find("X-Amz-SignedHeaders");
    if (it != query.end()) list = it->second;
  }
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= list.size()) {
    size_t semi = list.find(';', start);
    names.push_back(list.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  return names;
}

// The path as the front end reads it: S3 decodes it once; the catalog reads raw segments.
std::string PathMeaning(const std::string& path, UriEncoding encoding) {
  if (encoding == UriEncoding::kGeneric) return path;
  std::optional<std::string> decoded = serac::UriDecode(path, /*plus_is_space=*/false);
  return decoded ? *decoded : path;
}

bool HasDotSegment(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string_view segment =
        path.substr(start, slash == std::string_view::npos ? path.npos : slash - start);
    if (segment == "." || segment == "..") return true;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return false;
}

// Frames `body` as aws-chunked with chunk signatures chained from the request's seed signature.
std::string ChunkedBody(const std::string& body, const std::string& seed, const std::string& key,
                        const std::string& amz_date, const std::string& scope) {
  std::string framed;
  std::string previous = seed;
  const std::string empty_hash = serac::Sha256Hex("");
  size_t offset = 0;
  while (true) {
    std::string_view chunk = std::string_view(body).substr(offset, kChunkBytes);
    std::string to_sign = "AWS4-HMAC-SHA256-PAYLOAD\n" + amz_date + "\n" + scope + "\n" + previous + "\n" +
                          empty_hash + "\n" + serac::Sha256Hex(chunk);
    serac::Sha256Digest mac = serac::HmacSha256(key, to_sign);
    std::string signature =
        serac::HexEncode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
    char size_hex[32];
    std::snprintf(size_hex, sizeof(size_hex), "%zx", chunk.size());
    framed += std::string(size_hex) + ";chunk-signature=" + signature + "\r\n";
    framed.append(chunk);
    framed += "\r\n";
    previous = signature;
    offset += chunk.size();
    if (chunk.empty()) return framed;
  }
}

struct Signed {
  serac::http::Request request;
  std::string wire_body;  // what goes on the wire (aws-chunked framing included)
  std::string body;       // what the signature's payload claim is about
  UriEncoding encoding = UriEncoding::kS3;
  std::string service = "s3";
  bool body_signed = true;  // false for UNSIGNED-PAYLOAD and presigned URLs
};

void RemoveHeaders(serac::http::Request& request, std::initializer_list<std::string_view> names) {
  std::vector<serac::http::Header> kept;
  for (serac::http::Header& header : request.headers) {
    bool drop = false;
    for (std::string_view name : names) drop = drop || serac::AsciiEqualsIgnoreCase(header.name, name);
    if (!drop) kept.push_back(std::move(header));
  }
  request.headers = std::move(kept);
}

bool Sign(char form, serac::fuzz::ParsedInput& input, Signed& out) {
  serac::http::Request& request = input.request;
  // A seed's own query signature is not what this target signs.
  for (std::string_view auth_param : {"X-Amz-", "AWSAccessKeyId", "Signature="}) {
    if (request.query.find(auth_param) != std::string::npos) return false;
  }
  RemoveHeaders(request, {"authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token",
                          "content-length", "transfer-encoding", "x-amz-decoded-content-length"});
  if (request.FindHeader("host") == nullptr) request.headers.push_back({"Host", "127.0.0.1:9000"});
  // One Host: a presigned URL signs the one host it was made for.
  bool seen_host = false;
  std::vector<serac::http::Header> one_host;
  for (serac::http::Header& header : request.headers) {
    const bool host = serac::AsciiEqualsIgnoreCase(header.name, "host");
    if (host && seen_host) continue;
    seen_host = seen_host || host;
    one_host.push_back(std::move(header));
  }
  request.headers = std::move(one_host);
  const Credentials root{std::string(serac::fuzz::kRootAccessKey), std::string(serac::fuzz::kRootSecretKey),
                         ""};
  serac::auth::SignOptions sign;
  sign.now = serac::FromUnixMillis(kSignedAtMs);
  out.body = input.body;
  out.wire_body = input.body;
  if (form == 'p') {
    // A presigned URL signs the host only: a holder sends no x-amz-* header of its own.
    std::vector<serac::http::Header> kept;
    for (serac::http::Header& header : request.headers) {
      if (Lower(header.name).rfind("x-amz-", 0) != 0) kept.push_back(std::move(header));
    }
    request.headers = std::move(kept);
    std::string query = serac::auth::PresignQuery(request.method, request.path, HeaderValue(request, "host"),
                                                  root, sign, 3600);
    // The presigned query replaces any the seed had: the URL is what was handed out.
    request.query = query;
    out.body_signed = false;
  } else {
    if (form == 'g') {
      out.encoding = UriEncoding::kGeneric;
      out.service = "s3tables";
      sign.service = "s3tables";
      sign.uri_encoding = UriEncoding::kGeneric;
      sign.send_content_sha256_header = false;
      sign.payload_sha256_hex = serac::Sha256Hex(input.body);
    } else if (form == 'u') {
      out.body_signed = false;
    } else if (form == 'c') {
      sign.payload_sha256_hex = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
      request.headers.push_back({"Content-Encoding", "aws-chunked"});
      request.headers.push_back({"x-amz-decoded-content-length", std::to_string(input.body.size())});
    } else if (form == 'h') {
      sign.payload_sha256_hex = serac::Sha256Hex(input.body);
    } else {
      return false;
    }
    if (form != 'c' && !input.body.empty()) {
      request.headers.push_back({"Content-Length", std::to_string(input.body.size())});
    }
    serac::auth::SignRequest(request.method, request.path, request.query, request.headers, root, sign);
    if (form == 'c') {
      std::string authorization = HeaderValue(request, "authorization");
      std::string seed = authorization.substr(authorization.find("Signature=") + 10);
      std::string amz_date = serac::FormatAmzDate(sign.now);
      std::string scope = serac::FormatAmzDay(sign.now) + "/us-east-1/s3/aws4_request";
      std::string key =
          serac::auth::DeriveSigningKey(root.secret_key, serac::FormatAmzDay(sign.now), "us-east-1", "s3");
      out.wire_body = ChunkedBody(input.body, seed, key, amz_date, scope);
      // Content-Length is the framing's, which SigV4 does not require to be signed.
      request.headers.push_back({"Content-Length", std::to_string(out.wire_body.size())});
    }
  }
  request.target = request.path + (request.query.empty() ? "" : "?" + request.query);
  out.request = request;
  return true;
}

enum ChangeKind : uint8_t {
  kMethodByte,
  kPathByte,
  kQueryByte,
  kHeaderValueByte,
  kHeaderNameByte,
  kBodyByte,
  kRemoveHeader,
  kAddAmzHeader,
  kAddOtherHeader,
  kInsertPathByte,
  kInsertQueryByte,
  kTruncateBody,
  kChangeKinds
};

void SetByte(std::string& text, uint16_t where, uint8_t value) {
  if (text.empty()) {
    text.push_back(static_cast<char>(value));
    return;
  }
  text[where % text.size()] = static_cast<char>(value);
}

void Change(serac::http::Request& request, std::string& wire_body, uint8_t kind, uint16_t where,
            uint8_t value) {
  std::vector<serac::http::Header>& headers = request.headers;
  switch (kind % kChangeKinds) {
    case kMethodByte:
      SetByte(request.method, where, value);
      break;
    case kPathByte:
      SetByte(request.path, where, value);
      break;
    case kQueryByte:
      SetByte(request.query, where, value);
      break;
    case kHeaderValueByte:
      if (!headers.empty()) SetByte(headers[where % headers.size()].value, where / 7, value);
      break;
    case kHeaderNameByte:
      if (!headers.empty()) SetByte(headers[where % headers.size()].name, where / 7, value);
      break;
    case kBodyByte:
      SetByte(wire_body, where, value);
      break;
    case kRemoveHeader:
      if (!headers.empty()) headers.erase(headers.begin() + where % headers.size());
      break;
    case kAddAmzHeader:
      headers.push_back(
          {value % 2 ? "x-amz-copy-source" : "x-amz-meta-added", std::string(1, 'a' + value % 26)});
      break;
    case kAddOtherHeader:
      headers.push_back({"x-other-" + std::to_string(value), "v"});
      break;
    case kInsertPathByte:
      request.path.insert(request.path.begin() + where % (request.path.size() + 1), static_cast<char>(value));
      break;
    case kInsertQueryByte:
      request.query.insert(request.query.begin() + where % (request.query.size() + 1),
                           static_cast<char>(value));
      break;
    case kTruncateBody:
      wire_body.resize(wire_body.size() - std::min<size_t>(wire_body.size(), 1 + value % 4));
      break;
  }
  request.target = request.path + (request.query.empty() ? "" : "?" + request.query);
}

// Verifies `request` as the server does: the body read first when the signature covers its unsent
// hash (the catalog), then the head, then the body through the payload verifier. Returns whether
// the head was accepted and, if so, the body as a handler would have read it.
struct Verdict {
  bool head_accepted = false;
  bool body_accepted = false;
  std::string body;
};

Verdict Check(const serac::http::Request& request, const std::string& wire_body, const Signed& signer) {
  Verdict verdict;
  serac::auth::VerifyOptions options;
  options.services = {signer.service};
  options.uri_encoding = signer.encoding;
  options.now = serac::FromUnixMillis(kSignedAtMs + 1000);
  if (signer.encoding == UriEncoding::kGeneric && HasDotSegment(request.path))
    return verdict;  // refused by the router
  if (signer.encoding == UriEncoding::kGeneric && serac::auth::SignsUnsentBodyHash(request)) {
    options.body_sha256_hex = serac::Sha256Hex(wire_body);
  }
  auto verified = serac::auth::Verify(request, options, LookupRoot);
  if (!verified.ok()) return verdict;
  verdict.head_accepted = true;
  serac::http::testing::StringBody raw(wire_body);
  serac::auth::PayloadOptions payload;
  payload.compute_md5 = false;
  auto reader = serac::auth::VerifyingBodyReader::Create(request, *verified, raw, payload);
  if (!reader.ok()) return verdict;
  Result<std::string> body = (*reader)->ReadAll(1 << 20);
  if (!body.ok()) return verdict;
  verdict.body_accepted = true;
  verdict.body = std::move(body).value();
  return verdict;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 6) return -1;
  const char form = static_cast<char>(data[0]);
  const uint8_t kind = data[1];
  const uint16_t where = static_cast<uint16_t>(data[2] | (data[3] << 8));
  const uint8_t value = data[4];
  serac::fuzz::ParsedInput input;
  if (!serac::fuzz::ParseInput(data + 5, size - 5, input)) return -1;
  if (input.body.size() > (1 << 16)) return -1;
  Signed signer;
  if (!Sign(form, input, signer)) return -1;

  // The signed request itself must pass: otherwise the oracle below would prove nothing.
  Verdict original = Check(signer.request, signer.wire_body, signer);
  if (!original.head_accepted || !original.body_accepted || original.body != signer.body) {
    if (signer.encoding == UriEncoding::kGeneric && HasDotSegment(signer.request.path)) return 0;
    // Seeds whose heads are not valid HTTP for signing (a header the signer cannot canonicalise
    // the way it sends it) are not this target's business; a well-formed one must verify.
    bool plain = IsToken(signer.request.method);
    for (const serac::http::Header& header : signer.request.headers) {
      plain = plain && IsToken(header.name);
      for (char c : header.value) plain = plain && c >= 0x20 && c < 0x7f;
    }
    if (plain) Fail("a correctly signed request was refused", signer.request, signer.request);
    return 0;
  }

  serac::http::Request changed = signer.request;
  std::string wire_body = signer.wire_body;
  Change(changed, wire_body, kind, where, value);
  Verdict verdict = Check(changed, wire_body, signer);
  if (!verdict.head_accepted) return 0;

  // Accepted: it must be the request that was signed.
  if (changed.method != signer.request.method) Fail("accepted with another method", signer.request, changed);
  if (PathMeaning(changed.path, signer.encoding) != PathMeaning(signer.request.path, signer.encoding)) {
    Fail("accepted with another path", signer.request, changed);
  }
  if (QueryMeaning(changed.query) != QueryMeaning(signer.request.query)) {
    Fail("accepted with another query", signer.request, changed);
  }
  const std::vector<std::string> names = SignedHeaderNames(signer.request);
  for (const std::string& name : names) {
    if (CanonicalHeaderValue(changed, name) != CanonicalHeaderValue(signer.request, name)) {
      Fail("accepted with another value of a signed header", signer.request, changed);
    }
  }
  for (const serac::http::Header& header : changed.headers) {
    std::string name = Lower(header.name);
    if (name.rfind("x-amz-", 0) != 0) continue;
    bool is_signed = false;
    for (const std::string& signed_name : names) is_signed = is_signed || signed_name == name;
    if (!is_signed) Fail("accepted with an unsigned x-amz-* header", signer.request, changed);
  }
  if (verdict.body_accepted && signer.body_signed && verdict.body != signer.body) {
    Fail("a signed body was changed and read as verified", signer.request, changed);
  }
  return 0;
}
