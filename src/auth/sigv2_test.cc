#include <gtest/gtest.h>

#include "auth/sigv2_internal.h"
#include "auth/sigv4.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"

namespace serac::auth {
namespace {

// The published AWS example credentials (S3 "Signing and authenticating REST requests" examples).
constexpr std::string_view kAccessKey = "AKIAIOSFODNN7EXAMPLE";
constexpr std::string_view kSecretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

CredentialLookup LookupWith(std::string secret, std::string token = "") {
  return [secret, token](std::string_view access_key) -> Result<Credentials> {
    if (access_key != kAccessKey) return Error(ErrorCode::kUnknownAccessKey, "unknown");
    return Credentials{std::string(kAccessKey), secret, token};
  };
}

CredentialLookup Lookup() { return LookupWith(std::string(kSecretKey)); }

http::Request MakeRequest(std::string method, std::string path, std::string query,
                          std::vector<http::Header> headers) {
  http::Request request;
  request.method = std::move(method);
  request.path = std::move(path);
  request.query = std::move(query);
  request.target = request.path + (request.query.empty() ? "" : "?" + request.query);
  request.headers = std::move(headers);
  return request;
}

WallTime HttpDate(std::string_view text) {
  std::optional<WallTime> time = ParseHttpDate(text);
  EXPECT_TRUE(time.has_value()) << text;
  return time.value_or(WallTime{});
}

WallTime EpochSeconds(int64_t seconds) { return WallTime{} + std::chrono::seconds(seconds); }

VerifyOptions OptionsAt(WallTime now, std::string virtual_host_bucket = "") {
  VerifyOptions options;
  options.now = now;
  options.virtual_host_bucket = std::move(virtual_host_bucket);
  return options;
}

std::string SignV2(std::string_view string_to_sign) {
  return Base64Encode(HmacSha1(kSecretKey, string_to_sign));
}

std::string AuthorizationV2(std::string_view signature) {
  return "AWS " + std::string(kAccessKey) + ":" + std::string(signature);
}

// AWS example "Object GET", path-style.
http::Request AwsGetPuppy() {
  return MakeRequest("GET", "/johnsmith/photos/puppy.jpg", "",
                     {{"Host", "s3.amazonaws.com"},
                      {"Date", "Tue, 27 Mar 2007 19:36:42 +0000"},
                      {"Authorization", AuthorizationV2("bWq2s1WEIj+Ydj0vQ697zp+IXMU=")}});
}

const WallTime kPuppyTime = HttpDate("Tue, 27 Mar 2007 19:37:42 GMT");  // a minute after the Date

TEST(SigV2Test, AwsExampleGetObjectVerifies) {
  Result<VerifiedRequest> verified = Verify(AwsGetPuppy(), OptionsAt(kPuppyTime), Lookup());
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_EQ(verified->access_key, kAccessKey);
  EXPECT_EQ(verified->signature_version, 2);
  EXPECT_FALSE(verified->presigned);
  EXPECT_EQ(verified->payload_mode, PayloadMode::kUnsigned);
  EXPECT_TRUE(verified->signing_key.empty());
}

TEST(SigV2Test, VirtualHostNeedsTheBucketHint) {
  http::Request request = AwsGetPuppy();
  request.path = "/photos/puppy.jpg";
  request.headers[0].value = "johnsmith.s3.amazonaws.com";
  EXPECT_TRUE(Verify(request, OptionsAt(kPuppyTime, "johnsmith"), Lookup()).ok());
  EXPECT_EQ(Verify(request, OptionsAt(kPuppyTime), Lookup()).status().code(), ErrorCode::kSignatureMismatch);
}

// AWS example "Upload": Content-MD5, Content-Type, and x-amz-* headers including a repeated one.
TEST(SigV2Test, AwsExampleUploadWithAmzHeaders) {
  http::Request request = MakeRequest("PUT", "/db-backup.dat.gz", "",
                                      {{"User-Agent", "curl/7.15.5"},
                                       {"Host", "static.johnsmith.net:8080"},
                                       {"Date", "Tue, 27 Mar 2007 21:06:08 +0000"},
                                       {"x-amz-acl", "public-read"},
                                       {"content-type", "application/x-download"},
                                       {"Content-MD5", "4gJE4saaMU4BqNR0kLY+lw=="},
                                       {"X-Amz-Meta-ReviewedBy", "joe@johnsmith.net"},
                                       {"X-Amz-Meta-ReviewedBy", "jane@johnsmith.net"},
                                       {"X-Amz-Meta-FileChecksum", "0x02661779"},
                                       {"X-Amz-Meta-ChecksumAlgorithm", "crc32"},
                                       {"Content-Disposition", "attachment; filename=database.dat"},
                                       {"Content-Encoding", "gzip"},
                                       {"Content-Length", "5913339"},
                                       {"Authorization", AuthorizationV2("ilyl83RwaSoYIEdixDQcA4OnAnc=")}});
  VerifyOptions options = OptionsAt(HttpDate("Tue, 27 Mar 2007 21:06:08 GMT"), "static.johnsmith.net");
  Result<VerifiedRequest> verified = Verify(request, options, Lookup());
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();

  // The order of the repeated header's values is signed.
  std::swap(request.headers[6].value, request.headers[7].value);
  EXPECT_EQ(Verify(request, options, Lookup()).status().code(), ErrorCode::kSignatureMismatch);
}

// AWS example "Get ACL": a sub-resource on the bucket root of a virtual-host request.
TEST(SigV2Test, AwsExampleAclSubresource) {
  http::Request request = MakeRequest("GET", "/", "acl",
                                      {{"Host", "johnsmith.s3.amazonaws.com"},
                                       {"Date", "Tue, 27 Mar 2007 19:44:46 +0000"},
                                       {"Authorization", AuthorizationV2("c2WLPFtWHVgbEmeEG93a4cG37dM=")}});
  EXPECT_TRUE(
      Verify(request, OptionsAt(HttpDate("Tue, 27 Mar 2007 19:44:46 GMT"), "johnsmith"), Lookup()).ok());
}

TEST(SigV2Test, WrongSecretFillsMismatchDetailWithoutSecrets) {
  SignatureMismatchDetail detail;
  Result<VerifiedRequest> verified =
      Verify(AwsGetPuppy(), OptionsAt(kPuppyTime), LookupWith("not-the-secret"), &detail);
  ASSERT_EQ(verified.status().code(), ErrorCode::kSignatureMismatch);
  EXPECT_EQ(detail.access_key, kAccessKey);
  EXPECT_EQ(detail.string_to_sign, "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/johnsmith/photos/puppy.jpg");
  EXPECT_EQ(detail.canonical_request, "");
  EXPECT_EQ(detail.signature_provided, "bWq2s1WEIj+Ydj0vQ697zp+IXMU=");
}

TEST(SigV2Test, SignatureComparisonIsCaseSensitive) {
  http::Request request = AwsGetPuppy();
  request.headers[2].value = AuthorizationV2("bwq2s1WEIj+Ydj0vQ697zp+IXMU=");
  EXPECT_EQ(Verify(request, OptionsAt(kPuppyTime), Lookup()).status().code(), ErrorCode::kSignatureMismatch);
}

TEST(SigV2Test, HeaderFormChecksClockSkewAndDate) {
  WallTime late = HttpDate("Tue, 27 Mar 2007 19:52:43 GMT");  // 16 minutes after
  EXPECT_EQ(Verify(AwsGetPuppy(), OptionsAt(late), Lookup()).status().code(), ErrorCode::kClockSkewed);
  WallTime early = HttpDate("Tue, 27 Mar 2007 19:21:41 GMT");
  EXPECT_EQ(Verify(AwsGetPuppy(), OptionsAt(early), Lookup()).status().code(), ErrorCode::kClockSkewed);

  http::Request undated = AwsGetPuppy();
  undated.headers.erase(undated.headers.begin() + 1);
  EXPECT_EQ(Verify(undated, OptionsAt(kPuppyTime), Lookup()).status().code(), ErrorCode::kAccessDenied);
}

TEST(SigV2Test, AmzDateReplacesDateAndEmptiesTheDateLine) {
  std::string string_to_sign =
      "DELETE\n\n\n\nx-amz-date:Tue, 27 Mar 2007 21:20:26 +0000\n/johnsmith/photos/puppy.jpg";
  http::Request request = MakeRequest("DELETE", "/johnsmith/photos/puppy.jpg", "",
                                      {{"Host", "s3.amazonaws.com"},
                                       {"Date", "Thu, 01 Jan 1970 00:00:00 GMT"},  // ignored, also for skew
                                       {"x-amz-date", "Tue, 27 Mar 2007 21:20:26 +0000"},
                                       {"Authorization", AuthorizationV2(SignV2(string_to_sign))}});
  WallTime now = HttpDate("Tue, 27 Mar 2007 21:20:30 GMT");
  Result<VerifiedRequest> verified = Verify(request, OptionsAt(now), Lookup());
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();

  // Signing the Date header's value as well is the classic client bug: it must not match.
  std::string with_date =
      "DELETE\n\n\nThu, 01 Jan 1970 00:00:00 GMT\nx-amz-date:Tue, 27 Mar 2007 21:20:26 +0000\n"
      "/johnsmith/photos/puppy.jpg";
  request.headers[3].value = AuthorizationV2(SignV2(with_date));
  EXPECT_EQ(Verify(request, OptionsAt(now), Lookup()).status().code(), ErrorCode::kSignatureMismatch);
}

// A presigned GET as boto3's default (SigV2) presigner writes it: the signature URL-encoded in the
// query, Expires as the date line, a response-* override signed as a sub-resource (decoded), and
// the path signed exactly as sent. The signature was computed independently of this code.
constexpr std::string_view kPresignedQuery =
    "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1175139620&Signature=OG002Qhxg8HViFuc4%2BQbGi8rJug%3D"
    "&response-content-type=text%2Fplain";

http::Request PresignedPuppy() {
  return MakeRequest("GET", "/johnsmith/photos/puppy%20dog.jpg", std::string(kPresignedQuery),
                     {{"Host", "s3.amazonaws.com"}, {"User-Agent", "curl/8.0"}});
}

TEST(SigV2Test, PresignedUrlVerifiesUntilItExpires) {
  Result<VerifiedRequest> verified = Verify(PresignedPuppy(), OptionsAt(EpochSeconds(1175139620)), Lookup());
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_TRUE(verified->presigned);
  EXPECT_EQ(verified->signature_version, 2);
  EXPECT_EQ(verified->payload_mode, PayloadMode::kUnsigned);
  EXPECT_EQ(verified->access_key, kAccessKey);

  Result<VerifiedRequest> expired = Verify(PresignedPuppy(), OptionsAt(EpochSeconds(1175139621)), Lookup());
  EXPECT_EQ(expired.status().code(), ErrorCode::kExpired);
  EXPECT_EQ(expired.status().message(), "Request has expired");
}

TEST(SigV2Test, PresignedUrlMayLastAtMostSevenDays) {
  // The AWS example's Expires is 1175139620: checked seven days and a second before, it is too far.
  const int64_t expires = 1175139620;
  const int64_t week = 7 * 24 * 3600;
  EXPECT_TRUE(Verify(PresignedPuppy(), OptionsAt(EpochSeconds(expires - week)), Lookup()).ok());
  Result<VerifiedRequest> too_long =
      Verify(PresignedPuppy(), OptionsAt(EpochSeconds(expires - week - 1)), Lookup());
  EXPECT_EQ(too_long.status().code(), ErrorCode::kAccessDenied);
  EXPECT_NE(too_long.status().message().find("seven days"), std::string::npos);
}

TEST(SigV2Test, PresignedUrlRejectsTamperingAndWrongSecret) {
  WallTime now = EpochSeconds(1175130000);
  http::Request other_key = PresignedPuppy();
  other_key.path = "/johnsmith/photos/kitten.jpg";
  EXPECT_EQ(Verify(other_key, OptionsAt(now), Lookup()).status().code(), ErrorCode::kSignatureMismatch);

  http::Request other_override = PresignedPuppy();
  other_override.query.replace(other_override.query.find("text%2Fplain"), 12, "text%2Fhtml");
  EXPECT_EQ(Verify(other_override, OptionsAt(now), Lookup()).status().code(), ErrorCode::kSignatureMismatch);

  SignatureMismatchDetail detail;
  EXPECT_EQ(Verify(PresignedPuppy(), OptionsAt(now), LookupWith("wrong"), &detail).status().code(),
            ErrorCode::kSignatureMismatch);
  EXPECT_EQ(detail.string_to_sign,
            "GET\n\n\n1175139620\n/johnsmith/photos/puppy%20dog.jpg?response-content-type=text/plain");
  EXPECT_EQ(detail.signature_provided, "OG002Qhxg8HViFuc4+QbGi8rJug=");
}

TEST(SigV2Test, PresignedUrlWithSessionTokenSignsItAsAnAmzHeader) {
  std::string string_to_sign = "PUT\n\ntext/plain\n2000000000\nx-amz-security-token:tok+en\n/b/k";
  std::string query = "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=2000000000&Signature=" +
                      UriEncode(SignV2(string_to_sign), true) + "&content-type=text%2Fplain" +
                      "&x-amz-security-token=tok%2Ben";
  http::Request request = MakeRequest("PUT", "/b/k", query, {{"Host", "localhost"}});
  VerifyOptions options = OptionsAt(EpochSeconds(1999999000));
  Result<VerifiedRequest> verified = Verify(request, options, LookupWith(std::string(kSecretKey), "tok+en"));
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_EQ(verified->session_token, "tok+en");
  EXPECT_EQ(Verify(request, options, LookupWith(std::string(kSecretKey), "other")).status().code(),
            ErrorCode::kAccessDenied);
}

TEST(SigV2Test, PresignedUrlMissingParametersIsDenied) {
  http::Request request =
      MakeRequest("GET", "/b/k", "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1", {{"Host", "localhost"}});
  EXPECT_EQ(Verify(request, OptionsAt(EpochSeconds(0)), Lookup()).status().code(), ErrorCode::kAccessDenied);
  request.query = "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=soon&Signature=abc";
  EXPECT_EQ(Verify(request, OptionsAt(EpochSeconds(0)), Lookup()).status().code(), ErrorCode::kAccessDenied);
}

TEST(SigV2Test, CanonicalizedResourceKeepsOnlySignedSubresourcesSorted) {
  using internal::CanonicalizedResourceV2;
  EXPECT_EQ(CanonicalizedResourceV2("/b/k", "uploadId=abc%2Fdef&partNumber=2&max-parts=5&X-Amz-Foo=1", ""),
            "/b/k?partNumber=2&uploadId=abc/def");
  EXPECT_EQ(CanonicalizedResourceV2("/b", "uploads&prefix=x", ""), "/b?uploads");
  EXPECT_EQ(CanonicalizedResourceV2("/b/a%20b", "versionId=&list-type=2", ""), "/b/a%20b?versionId=");
  EXPECT_EQ(CanonicalizedResourceV2("/", "", "bucket"), "/bucket/");
  EXPECT_EQ(CanonicalizedResourceV2("/k", "tagging", "bucket"), "/bucket/k?tagging");
  EXPECT_EQ(CanonicalizedResourceV2("/b/k", "response-expires=Thu%2C%2001%20Jan&acl", ""),
            "/b/k?acl&response-expires=Thu, 01 Jan");
}

TEST(SigV2Test, UploadPartSignsPartNumberAndUploadId) {
  std::string string_to_sign = "PUT\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/b/k?partNumber=3&uploadId=u%2F1";
  // uploadId value is decoded in the resource: "u%2F1" would be the wrong thing to sign.
  std::string decoded_string_to_sign =
      "PUT\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/b/k?partNumber=3&uploadId=u/1";
  http::Request request = MakeRequest("PUT", "/b/k", "uploadId=u%2F1&partNumber=3",
                                      {{"Host", "localhost"},
                                       {"Date", "Tue, 27 Mar 2007 19:36:42 +0000"},
                                       {"Authorization", AuthorizationV2(SignV2(decoded_string_to_sign))}});
  EXPECT_TRUE(Verify(request, OptionsAt(kPuppyTime), Lookup()).ok());
  request.headers[2].value = AuthorizationV2(SignV2(string_to_sign));
  EXPECT_EQ(Verify(request, OptionsAt(kPuppyTime), Lookup()).status().code(), ErrorCode::kSignatureMismatch);
  request.headers[2].value = AuthorizationV2(SignV2("PUT\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/b/k"));
  EXPECT_EQ(Verify(request, OptionsAt(kPuppyTime), Lookup()).status().code(), ErrorCode::kSignatureMismatch);
}

TEST(SigV2Test, MalformedHeaderAndUnknownKey) {
  http::Request request = AwsGetPuppy();
  request.headers[2].value = "AWS AKIAIOSFODNN7EXAMPLE";
  EXPECT_EQ(Verify(request, OptionsAt(kPuppyTime), Lookup()).status().code(), ErrorCode::kInvalidArgument);
  request.headers[2].value = "AWS :sig";
  EXPECT_EQ(Verify(request, OptionsAt(kPuppyTime), Lookup()).status().code(), ErrorCode::kInvalidArgument);
  request.headers[2].value = "AWS SOMEONEELSE:bWq2s1WEIj+Ydj0vQ697zp+IXMU=";
  EXPECT_EQ(Verify(request, OptionsAt(kPuppyTime), Lookup()).status().code(), ErrorCode::kUnknownAccessKey);

  http::Request mixed = AwsGetPuppy();
  mixed.query = "X-Amz-Algorithm=AWS4-HMAC-SHA256";
  EXPECT_EQ(Verify(mixed, OptionsAt(kPuppyTime), Lookup()).status().code(), ErrorCode::kInvalidArgument);
}

TEST(SigV2Test, HasSignatureRecognisesBothForms) {
  EXPECT_TRUE(HasSignature(AwsGetPuppy()));
  EXPECT_TRUE(HasSignature(PresignedPuppy()));
  EXPECT_TRUE(internal::IsSignatureV2(AwsGetPuppy()));
  EXPECT_TRUE(internal::IsSignatureV2(PresignedPuppy()));
  EXPECT_FALSE(internal::IsSignatureV2(MakeRequest("GET", "/b/k", "", {{"Host", "x"}})));
  EXPECT_FALSE(internal::IsSignatureV2(
      MakeRequest("GET", "/b/k", "", {{"Authorization", "AWS4-HMAC-SHA256 Credential=x"}})));
}

// --- SignatureDoesNotMatch detail for SigV4 ---

// AWS SigV4 example "GET Object" (examplebucket/test.txt with a Range header).
http::Request AwsV4GetObjectExample() {
  return MakeRequest(
      "GET", "/test.txt", "",
      {{"Host", "examplebucket.s3.amazonaws.com"},
       {"Range", "bytes=0-9"},
       {"x-amz-content-sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
       {"x-amz-date", "20130524T000000Z"},
       {"Authorization",
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
        "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"}});
}

TEST(SignatureMismatchDetailTest, SigV4DetailHoldsPublishedCanonicalRequestAndStringToSign) {
  VerifyOptions options = OptionsAt(*ParseAmzDate("20130524T000000Z"));
  SignatureMismatchDetail detail;
  Result<VerifiedRequest> verified =
      Verify(AwsV4GetObjectExample(), options, LookupWith("not-the-secret"), &detail);
  ASSERT_EQ(verified.status().code(), ErrorCode::kSignatureMismatch);
  EXPECT_EQ(detail.access_key, kAccessKey);
  EXPECT_EQ(detail.canonical_request,
            "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
            "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
            "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(detail.string_to_sign,
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(detail.signature_provided, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  for (const std::string* field : {&detail.access_key, &detail.string_to_sign, &detail.canonical_request}) {
    EXPECT_EQ(field->find("not-the-secret"), std::string::npos);
  }
}

TEST(SignatureMismatchDetailTest, LeftUntouchedOnSuccessAndOtherErrors) {
  VerifyOptions options = OptionsAt(*ParseAmzDate("20130524T000000Z"));
  SignatureMismatchDetail detail;
  ASSERT_TRUE(Verify(AwsV4GetObjectExample(), options, Lookup(), &detail).ok());
  EXPECT_TRUE(detail.string_to_sign.empty());
  EXPECT_EQ(Verify(AwsV4GetObjectExample(), options, Lookup(), nullptr).status().code(), ErrorCode::kOk);

  VerifyOptions late = OptionsAt(*ParseAmzDate("20130525T000000Z"));
  EXPECT_EQ(Verify(AwsV4GetObjectExample(), late, LookupWith("x"), &detail).status().code(),
            ErrorCode::kClockSkewed);
  EXPECT_TRUE(detail.canonical_request.empty());
}

}  // namespace
}  // namespace serac::auth
