#include "auth/payload.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "auth/sigv4_internal.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"

namespace serac::auth {
namespace {

constexpr std::string_view kAccessKey = "AKIAIOSFODNN7EXAMPLE";
constexpr std::string_view kSecretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr std::string_view kHello = "hello world";
constexpr std::string_view kHelloCrc32 = "DUoRhQ==";
constexpr std::string_view kHelloMd5Hex = "5eb63bbbe01eeed093cb22bb8f5acdc3";

// A raw body that hands out its bytes in random small slices, as a slow network would.
class SlicedBody final : public http::BodyReader {
 public:
  explicit SlicedBody(std::string data, uint32_t seed = 1) : data_(std::move(data)), random_(seed) {}

  Result<size_t> Read(char* buffer, size_t capacity) override {
    size_t slice = random_() % 2 == 0 ? 1 + random_() % 8 : 1 + random_() % 4096;
    size_t count = std::min({capacity, slice, data_.size() - position_});
    std::copy_n(data_.data() + position_, count, buffer);
    position_ += count;
    return count;
  }
  std::optional<uint64_t> content_length() const override { return data_.size(); }
  void SetLimit(uint64_t bytes_max) override { limit_ = bytes_max; }
  uint64_t limit() const { return limit_; }

 private:
  std::string data_;
  size_t position_ = 0;
  std::mt19937 random_;
  uint64_t limit_ = 0;
};

// Reads the whole decoded body with random buffer sizes.
Result<std::string> ReadAllFrom(http::BodyReader& reader, uint32_t seed = 7) {
  std::mt19937 random(seed);
  std::string out;
  std::vector<char> buffer(9000);
  while (true) {
    size_t capacity = 1 + random() % buffer.size();
    SERAC_ASSIGN_OR_RETURN(size_t count, reader.Read(buffer.data(), capacity));
    if (count == 0) return out;
    out.append(buffer.data(), count);
  }
}

http::Request RequestWith(std::vector<http::Header> headers) {
  http::Request request;
  request.method = "PUT";
  request.path = "/bucket/key";
  request.headers = std::move(headers);
  return request;
}

VerifiedRequest VerifiedFor(PayloadMode mode) {
  VerifiedRequest verified;
  verified.access_key = std::string(kAccessKey);
  verified.payload_mode = mode;
  verified.signing_key = DeriveSigningKey(kSecretKey, "20240101", "us-east-1", "s3");
  verified.seed_signature = std::string(64, 'a');
  verified.amz_date = "20240101T000000Z";
  verified.scope = "20240101/us-east-1/s3/aws4_request";
  return verified;
}

// Client side of aws-chunked framing, for building test bodies.
class ChunkedBodyBuilder {
 public:
  ChunkedBodyBuilder(const VerifiedRequest& verified, bool signed_chunks)
      : verified_(verified), signed_(signed_chunks), previous_(verified.seed_signature) {}

  ChunkedBodyBuilder& Chunk(std::string_view data) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx", data.size());
    body_ += size;
    if (signed_) body_ += ";chunk-signature=" + NextSignature(data);
    body_ += "\r\n";
    if (!data.empty()) body_.append(data).append("\r\n");
    return *this;
  }
  ChunkedBodyBuilder& Raw(std::string_view text) {
    body_ += text;
    return *this;
  }
  ChunkedBodyBuilder& SignedTrailer(std::string_view name, std::string_view value) {
    std::string line = std::string(name) + ":" + std::string(value) + "\n";
    std::string tail = previous_ + "\n" + Sha256Hex(line);
    std::string signature = internal::SignatureHex(
        verified_.signing_key,
        internal::StringToSign(internal::kTrailerAlgorithm, verified_.amz_date, verified_.scope, tail));
    body_ += std::string(name) + ":" + std::string(value) + "\r\n";
    body_ += "x-amz-trailer-signature:" + signature + "\r\n\r\n";
    return *this;
  }
  const std::string& body() const { return body_; }

 private:
  std::string NextSignature(std::string_view data) {
    std::string tail = previous_ + "\n" + std::string(internal::kEmptySha256Hex) + "\n" + Sha256Hex(data);
    previous_ = internal::SignatureHex(
        verified_.signing_key,
        internal::StringToSign(internal::kChunkAlgorithm, verified_.amz_date, verified_.scope, tail));
    return previous_;
  }

  VerifiedRequest verified_;
  bool signed_;
  std::string previous_;
  std::string body_;
};

Result<std::string> Decode(const http::Request& request, const VerifiedRequest& verified,
                           std::string raw_body, PayloadOptions options = {},
                           std::unique_ptr<VerifyingBodyReader>* keep = nullptr) {
  SlicedBody raw(std::move(raw_body));
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<VerifyingBodyReader> reader,
                         VerifyingBodyReader::Create(request, verified, raw, options));
  Result<std::string> decoded = ReadAllFrom(*reader);
  if (keep != nullptr) *keep = std::move(reader);
  return decoded;
}

ErrorCode CodeOf(const Result<std::string>& result) { return result.status().code(); }

// --- The AWS published chunked-upload example -------------------------------------------------

struct AwsStreamingExample {
  http::Request request;
  VerifiedRequest verified;
  std::string body;
};

AwsStreamingExample MakeAwsStreamingExample() {
  AwsStreamingExample example;
  example.request =
      RequestWith({{"Host", "s3.amazonaws.com"},
                   {"x-amz-date", "20130524T000000Z"},
                   {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                   {"Authorization",
                    "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                    "SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;"
                    "x-amz-decoded-content-length;x-amz-storage-class,"
                    "Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"},
                   {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
                   {"Content-Encoding", "aws-chunked"},
                   {"x-amz-decoded-content-length", "66560"},
                   {"Content-Length", "66824"}});
  example.request.path = "/examplebucket/chunkObject.txt";
  VerifyOptions options;
  options.now = *ParseAmzDate("20130524T000000Z");
  auto lookup = [](std::string_view) -> Result<Credentials> {
    return Credentials{std::string(kAccessKey), std::string(kSecretKey), ""};
  };
  Result<VerifiedRequest> verified = Verify(example.request, options, lookup);
  EXPECT_TRUE(verified.ok()) << verified.status().ToString();
  if (verified.ok()) example.verified = *verified;
  example.body =
      "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n" +
      std::string(65536, 'a') + "\r\n" +
      "400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n" +
      std::string(1024, 'a') + "\r\n" +
      "0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n";
  EXPECT_EQ(example.body.size(), 66824u);
  return example;
}

TEST(AwsChunked, AwsExampleDecodesAndVerifies) {
  AwsStreamingExample example = MakeAwsStreamingExample();
  std::unique_ptr<VerifyingBodyReader> reader;
  Result<std::string> decoded = Decode(example.request, example.verified, example.body, {}, &reader);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, std::string(66560, 'a'));
  EXPECT_EQ(reader->bytes_read(), 66560u);
  EXPECT_EQ(reader->content_length(), 66560u);
  EXPECT_EQ(reader->md5_hex(), HexEncode([] {
              Md5Digest d = Md5(std::string(66560, 'a'));
              return std::string(reinterpret_cast<const char*>(d.data()), d.size());
            }()));
}

TEST(AwsChunked, TamperedChunkIsSignatureMismatch) {
  AwsStreamingExample example = MakeAwsStreamingExample();
  std::string body = example.body;
  body[1000] = 'b';
  EXPECT_EQ(CodeOf(Decode(example.request, example.verified, body)), ErrorCode::kSignatureMismatch);
  std::string bad_final = example.body;
  bad_final[bad_final.size() - 5] = bad_final[bad_final.size() - 5] == '0' ? '1' : '0';
  EXPECT_EQ(CodeOf(Decode(example.request, example.verified, bad_final)), ErrorCode::kSignatureMismatch);
  // Reordered chunks break the chain too.
  std::string truncated = example.body.substr(0, example.body.size() - 90);
  EXPECT_NE(CodeOf(Decode(example.request, example.verified, truncated)), ErrorCode::kOk);
}

TEST(AwsChunked, ErrorIsReturnedBeforeEndAndIsSticky) {
  AwsStreamingExample example = MakeAwsStreamingExample();
  std::string body = example.body;
  body[500] = 'b';
  SlicedBody raw(body);
  auto reader = VerifyingBodyReader::Create(example.request, example.verified, raw, {});
  ASSERT_TRUE(reader.ok());
  Result<std::string> first = ReadAllFrom(**reader);
  EXPECT_EQ(first.status().code(), ErrorCode::kSignatureMismatch);
  char byte;
  EXPECT_EQ((*reader)->Read(&byte, 1).status().code(), ErrorCode::kSignatureMismatch);
}

TEST(AwsChunked, ShortNonFinalChunkIsRejected) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kStreamingSigned);
  std::string body =
      ChunkedBodyBuilder(verified, true).Chunk("abc").Chunk("def").Chunk("").Raw("\r\n").body();
  http::Request request = RequestWith({{"x-amz-decoded-content-length", "6"}});
  Result<std::string> decoded = Decode(request, verified, body);
  EXPECT_EQ(CodeOf(decoded), ErrorCode::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("8192"), std::string::npos);
  // A single short chunk is fine.
  std::string single = ChunkedBodyBuilder(verified, true).Chunk("abcdef").Chunk("").Raw("\r\n").body();
  Result<std::string> ok = Decode(request, verified, single);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(*ok, "abcdef");
}

TEST(AwsChunked, DecodedLengthMustMatch) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kStreamingUnsignedTrailer);
  std::string body = ChunkedBodyBuilder(verified, false).Chunk(kHello).Chunk("").Raw("\r\n").body();
  EXPECT_EQ(CodeOf(Decode(RequestWith({{"x-amz-decoded-content-length", "12"}}), verified, body)),
            ErrorCode::kIncompleteBody);
  EXPECT_EQ(CodeOf(Decode(RequestWith({{"x-amz-decoded-content-length", "10"}}), verified, body)),
            ErrorCode::kInvalidArgument);
  SlicedBody raw(body);
  auto missing = VerifyingBodyReader::Create(RequestWith({}), verified, raw, {});
  EXPECT_EQ(missing.status().code(), ErrorCode::kMissingContentLength);
}

TEST(AwsChunked, LimitAppliesToDecodedBytes) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kStreamingUnsignedTrailer);
  std::string body = ChunkedBodyBuilder(verified, false).Chunk(kHello).Chunk("").body();
  SlicedBody raw(body);
  auto reader =
      VerifyingBodyReader::Create(RequestWith({{"x-amz-decoded-content-length", "11"}}), verified, raw, {});
  ASSERT_TRUE(reader.ok());
  (*reader)->SetLimit(10);
  EXPECT_EQ(ReadAllFrom(**reader).status().code(), ErrorCode::kLimitExceeded);
}

// --- Unsigned trailer (boto3 over HTTPS, PyArrow) ----------------------------------------------

http::Request UnsignedTrailerRequest() {
  return RequestWith({{"Content-Encoding", "aws-chunked"},
                      {"x-amz-trailer", "x-amz-checksum-crc32"},
                      {"x-amz-sdk-checksum-algorithm", "CRC32"},
                      {"x-amz-decoded-content-length", "11"}});
}

TEST(UnsignedTrailer, BotocoreCaptureVerifies) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kStreamingUnsignedTrailer);
  std::unique_ptr<VerifyingBodyReader> reader;
  Result<std::string> decoded =
      Decode(UnsignedTrailerRequest(), verified,
             "b\r\nhello world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n", {}, &reader);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, kHello);
  ASSERT_TRUE(reader->checksum().has_value());
  EXPECT_EQ(reader->checksum()->first, ChecksumAlgorithm::kCrc32);
  EXPECT_EQ(reader->checksum()->second, kHelloCrc32);
  EXPECT_EQ(reader->md5_hex(), kHelloMd5Hex);
}

TEST(UnsignedTrailer, TolerantSyntax) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kStreamingUnsignedTrailer);
  // Bare \n endings, a chunk extension, spaces around ':' and extra blank lines.
  Result<std::string> decoded = Decode(UnsignedTrailerRequest(), verified,
                                       "b;ext=1\nhello world\n0\nx-amz-checksum-crc32 : DUoRhQ==\n\n\r\n");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, kHello);
}

TEST(UnsignedTrailer, BadCrcIsBadDigest) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kStreamingUnsignedTrailer);
  EXPECT_EQ(CodeOf(Decode(UnsignedTrailerRequest(), verified,
                          "b\r\nhello world\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n")),
            ErrorCode::kBadDigest);
  EXPECT_EQ(CodeOf(Decode(UnsignedTrailerRequest(), verified,
                          "b\r\nhello worle\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n")),
            ErrorCode::kBadDigest);
  // Announced but never sent.
  EXPECT_EQ(CodeOf(Decode(UnsignedTrailerRequest(), verified, "b\r\nhello world\r\n0\r\n\r\n")),
            ErrorCode::kInvalidArgument);
}

TEST(UnsignedTrailer, NoTrailerAtAll) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kStreamingUnsignedTrailer);
  http::Request request = RequestWith({{"x-amz-decoded-content-length", "11"}});
  PayloadOptions options;
  options.default_checksum = ChecksumAlgorithm::kCrc32;
  std::unique_ptr<VerifyingBodyReader> reader;
  Result<std::string> decoded = Decode(request, verified, "b\r\nhello world\r\n0\r\n", options, &reader);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, kHello);
  ASSERT_TRUE(reader->checksum().has_value());
  EXPECT_EQ(reader->checksum()->second, kHelloCrc32);  // computed with the default algorithm
}

TEST(UnsignedTrailer, HeaderAndTrailerChecksumConflict) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kStreamingUnsignedTrailer);
  http::Request request = UnsignedTrailerRequest();
  request.headers.push_back({"x-amz-checksum-crc32", std::string(kHelloCrc32)});
  SlicedBody raw("");
  EXPECT_EQ(VerifyingBodyReader::Create(request, verified, raw, {}).status().code(),
            ErrorCode::kInvalidArgument);
}

// --- Signed trailer (Java SDK v2 over HTTP with checksums) ---------------------------------------

TEST(SignedTrailer, GoodAndTampered) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kStreamingSignedTrailer);
  http::Request request =
      RequestWith({{"x-amz-trailer", "x-amz-checksum-crc32"}, {"x-amz-decoded-content-length", "11"}});
  std::string body = ChunkedBodyBuilder(verified, true)
                         .Chunk(kHello)
                         .Chunk("")
                         .SignedTrailer("x-amz-checksum-crc32", kHelloCrc32)
                         .body();
  std::unique_ptr<VerifyingBodyReader> reader;
  Result<std::string> decoded = Decode(request, verified, body, {}, &reader);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, kHello);
  EXPECT_EQ(reader->checksum()->second, kHelloCrc32);

  std::string wrong_value = ChunkedBodyBuilder(verified, true)
                                .Chunk(kHello)
                                .Chunk("")
                                .SignedTrailer("x-amz-checksum-crc32", "AAAAAA==")
                                .body();
  EXPECT_EQ(CodeOf(Decode(request, verified, wrong_value)), ErrorCode::kBadDigest);

  std::string tampered = body;
  tampered.replace(tampered.find(kHelloCrc32), kHelloCrc32.size(), "AAAAAA==");
  EXPECT_EQ(CodeOf(Decode(request, verified, tampered)), ErrorCode::kSignatureMismatch);

  std::string unsigned_trailer = ChunkedBodyBuilder(verified, true)
                                     .Chunk(kHello)
                                     .Chunk("")
                                     .Raw("x-amz-checksum-crc32:" + std::string(kHelloCrc32) + "\r\n\r\n")
                                     .body();
  EXPECT_EQ(CodeOf(Decode(request, verified, unsigned_trailer)), ErrorCode::kSignatureMismatch);
}

// --- Plain bodies: Content-MD5, checksum headers, payload hash, unsent payload hash
// ------------------------------

TEST(PlainBody, ContentMd5) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kUnsigned);
  std::string good_md5 = "XrY7u+Ae7tCTyyK7j1rNww==";
  std::unique_ptr<VerifyingBodyReader> reader;
  Result<std::string> decoded =
      Decode(RequestWith({{"Content-MD5", good_md5}}), verified, std::string(kHello), {}, &reader);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(reader->md5_hex(), kHelloMd5Hex);
  EXPECT_EQ(reader->content_length(), 11u);
  EXPECT_EQ(CodeOf(Decode(RequestWith({{"Content-MD5", good_md5}}), verified, "hello worle")),
            ErrorCode::kBadDigest);
  SlicedBody raw{std::string(kHello)};
  auto malformed =
      VerifyingBodyReader::Create(RequestWith({{"Content-MD5", "bm90LW1kNQ=="}}), verified, raw, {});
  EXPECT_EQ(malformed.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(malformed.status().message().find("InvalidDigest"), std::string::npos);
  auto garbage = VerifyingBodyReader::Create(RequestWith({{"Content-MD5", "!!!"}}), verified, raw, {});
  EXPECT_EQ(garbage.status().code(), ErrorCode::kInvalidArgument);
}

TEST(PlainBody, ChecksumHeadersForAllAlgorithms) {
  struct Case {
    std::string header;
    ChecksumAlgorithm algorithm;
    std::string value;  // of "hello world"
  };
  Checksummer nvme(ChecksumAlgorithm::kCrc64Nvme);
  nvme.Update(kHello.data(), kHello.size());
  std::vector<Case> cases = {
      {"x-amz-checksum-crc32", ChecksumAlgorithm::kCrc32, "DUoRhQ=="},
      {"x-amz-checksum-crc32c", ChecksumAlgorithm::kCrc32c, "yZRlqg=="},
      {"x-amz-checksum-crc64nvme", ChecksumAlgorithm::kCrc64Nvme, Base64Encode(nvme.Finish())},
      {"x-amz-checksum-sha1", ChecksumAlgorithm::kSha1, "Kq5sNclPz7QV2+lfQIuc6R7oRu0="},
      {"x-amz-checksum-sha256", ChecksumAlgorithm::kSha256, "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="},
  };
  VerifiedRequest verified = VerifiedFor(PayloadMode::kUnsigned);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    std::unique_ptr<VerifyingBodyReader> reader;
    Result<std::string> decoded =
        Decode(RequestWith({{c.header, c.value}}), verified, std::string(kHello), {}, &reader);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    ASSERT_TRUE(reader->checksum().has_value());
    EXPECT_EQ(reader->checksum()->first, c.algorithm);
    EXPECT_EQ(reader->checksum()->second, c.value);
    EXPECT_EQ(CodeOf(Decode(RequestWith({{c.header, c.value}}), verified, "hello worle")),
              ErrorCode::kBadDigest);
    SlicedBody raw("");
    EXPECT_EQ(
        VerifyingBodyReader::Create(RequestWith({{c.header, "AAAA"}}), verified, raw, {}).status().code(),
        ErrorCode::kInvalidArgument);
  }
  // Headers named x-amz-checksum-* that carry no checksum are not mistaken for one.
  EXPECT_TRUE(
      Decode(RequestWith({{"x-amz-checksum-mode", "ENABLED"}, {"x-amz-checksum-type", "FULL_OBJECT"}}),
             verified, std::string(kHello))
          .ok());
  // Two checksum headers are refused.
  SlicedBody raw("");
  EXPECT_EQ(VerifyingBodyReader::Create(
                RequestWith({{"x-amz-checksum-crc32", "DUoRhQ=="}, {"x-amz-checksum-crc32c", "yZRlqg=="}}),
                verified, raw, {})
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
}

TEST(PlainBody, PayloadHash) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kSignedHex);
  verified.payload_sha256_hex = Sha256Hex(kHello);
  Result<std::string> good = Decode(RequestWith({}), verified, std::string(kHello));
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  Result<std::string> bad = Decode(RequestWith({}), verified, "hello worle");
  EXPECT_EQ(CodeOf(bad), ErrorCode::kPayloadHashMismatch);
  EXPECT_EQ(bad.status().message(),
            "The provided 'x-amz-content-sha256' header does not match what was computed.");
  // An empty body (Content-Length: 0) is checked against the claim without hashing it.
  EXPECT_EQ(CodeOf(Decode(RequestWith({}), verified, "")), ErrorCode::kPayloadHashMismatch);
  verified.payload_sha256_hex = Sha256Hex("");
  Result<std::string> empty = Decode(RequestWith({}), verified, "");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(*empty, "");
  EXPECT_EQ(CodeOf(Decode(RequestWith({}), verified, std::string(kHello))), ErrorCode::kPayloadHashMismatch);
}

TEST(PlainBody, UnsentPayloadHashIsDecidedBeforeTheBodyIsRead) {
  Credentials credentials{std::string(kAccessKey), std::string(kSecretKey), ""};
  const std::string body = R"({"namespace":["a","b"]})";
  SignOptions sign;
  sign.service = "s3tables";
  sign.uri_encoding = UriEncoding::kGeneric;
  sign.now = *ParseAmzDate("20240101T120000Z");
  sign.payload_sha256_hex = Sha256Hex(body);
  sign.send_content_sha256_header = false;
  std::vector<http::Header> headers = {{"Host", "localhost:9000"},
                                       {"Content-Length", std::to_string(body.size())}};
  SignRequest("POST", "/_iceberg/v1/wh/namespaces", "", headers, credentials, sign);
  http::Request request = RequestWith(headers);
  request.method = "POST";
  request.path = "/_iceberg/v1/wh/namespaces";
  VerifyOptions options;
  options.services = {"s3tables"};
  options.uri_encoding = UriEncoding::kGeneric;
  options.now = sign.now;
  auto lookup = [&](std::string_view) -> Result<Credentials> { return credentials; };
  // The head alone proves nothing: the verdict needs the body's hash.
  EXPECT_EQ(Verify(request, options, lookup).status().code(), ErrorCode::kInvalidArgument);
  std::string tampered = body;
  tampered[3] = 'N';
  options.body_sha256_hex = Sha256Hex(tampered);
  EXPECT_EQ(Verify(request, options, lookup).status().code(), ErrorCode::kSignatureMismatch);
  options.body_sha256_hex = Sha256Hex(body);
  Result<VerifiedRequest> verified = Verify(request, options, lookup);
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  ASSERT_EQ(verified->payload_mode, PayloadMode::kSignedHex);
  // Reading the same body again through the verifier checks it against the signed hash.
  PayloadOptions no_md5;
  no_md5.compute_md5 = false;
  Result<std::string> good = Decode(request, *verified, body, no_md5);
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(*good, body);
  EXPECT_EQ(CodeOf(Decode(request, *verified, tampered, no_md5)), ErrorCode::kPayloadHashMismatch);
}

TEST(PlainBody, SetLimitIsPassedToTheRawReader) {
  VerifiedRequest verified = VerifiedFor(PayloadMode::kUnsigned);
  SlicedBody raw{std::string(kHello)};
  auto reader = VerifyingBodyReader::Create(RequestWith({}), verified, raw, {});
  ASSERT_TRUE(reader.ok());
  (*reader)->SetLimit(5);
  EXPECT_EQ(raw.limit(), 5u);
  EXPECT_EQ(ReadAllFrom(**reader).status().code(), ErrorCode::kLimitExceeded);
}

TEST(ChecksumHeaders, EveryAlgorithmRoundTripsThroughItsHeaderName) {
  for (ChecksumAlgorithm algorithm :
       {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kCrc64Nvme,
        ChecksumAlgorithm::kSha1, ChecksumAlgorithm::kSha256}) {
    EXPECT_EQ(ChecksumAlgorithmOfHeader(ChecksumHeaderName(algorithm)), algorithm);
  }
  EXPECT_EQ(ChecksumHeaderName(ChecksumAlgorithm::kCrc64Nvme), "x-amz-checksum-crc64nvme");
  EXPECT_EQ(ChecksumAlgorithmOfHeader("X-Amz-Checksum-CRC32C"), ChecksumAlgorithm::kCrc32c);
}

TEST(ChecksumHeaders, OtherChecksumHeadersNameNoAlgorithm) {
  EXPECT_EQ(ChecksumAlgorithmOfHeader("x-amz-checksum-type"), std::nullopt);
  EXPECT_EQ(ChecksumAlgorithmOfHeader("x-amz-checksum-mode"), std::nullopt);
  EXPECT_EQ(ChecksumAlgorithmOfHeader("x-amz-checksum-"), std::nullopt);
  EXPECT_EQ(ChecksumAlgorithmOfHeader("crc32"), std::nullopt);
  EXPECT_EQ(ChecksumAlgorithmOfHeader("content-md5"), std::nullopt);
}

}  // namespace
}  // namespace serac::auth
