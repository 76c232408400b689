#include "s3/s3_errors.h"

#include <gtest/gtest.h>

namespace serac::s3 {
namespace {

TEST(ErrorMapping, CodesAndStatuses) {
  struct Case {
    ErrorCode code;
    int status;
    const char* s3_code;
  };
  for (const Case& c : std::initializer_list<Case>{
           {ErrorCode::kSignatureMismatch, 403, "SignatureDoesNotMatch"},
           {ErrorCode::kUnknownAccessKey, 403, "InvalidAccessKeyId"},
           {ErrorCode::kAccessDenied, 403, "AccessDenied"},
           {ErrorCode::kExpired, 403, "AccessDenied"},
           {ErrorCode::kClockSkewed, 403, "RequestTimeTooSkewed"},
           {ErrorCode::kAuthorizationMalformed, 400, "AuthorizationHeaderMalformed"},
           {ErrorCode::kPayloadHashMismatch, 400, "XAmzContentSHA256Mismatch"},
           {ErrorCode::kBadDigest, 400, "BadDigest"},
           {ErrorCode::kMissingContentLength, 411, "MissingContentLength"},
           {ErrorCode::kLimitExceeded, 400, "EntityTooLarge"},
           {ErrorCode::kTooSmall, 400, "EntityTooSmall"},
           {ErrorCode::kInvalidRange, 416, "InvalidRange"},
           {ErrorCode::kPreconditionFailed, 412, "PreconditionFailed"},
           {ErrorCode::kMalformedDocument, 400, "MalformedXML"},
           {ErrorCode::kInvalidArgument, 400, "InvalidArgument"},
           {ErrorCode::kNotImplemented, 501, "NotImplemented"},
           {ErrorCode::kAlreadyExists, 409, "BucketAlreadyOwnedByYou"},
           {ErrorCode::kNotEmpty, 409, "BucketNotEmpty"},
           {ErrorCode::kIoError, 500, "InternalError"},
           {ErrorCode::kInternal, 500, "InternalError"},
           {ErrorCode::kUnavailable, 503, "ServiceUnavailable"},
       }) {
    S3Error error = ErrorFromStatus(Error(c.code, ""));
    EXPECT_EQ(error.http_status, c.status) << c.s3_code;
    EXPECT_EQ(error.code, c.s3_code);
    EXPECT_FALSE(error.message.empty()) << c.s3_code;
  }
}

TEST(ErrorMapping, NotFoundDependsOnOperation) {
  Status missing = Error(ErrorCode::kNotFound, "gone");
  EXPECT_EQ(ErrorFromStatus(missing).code, "NoSuchKey");
  EXPECT_EQ(ErrorFromStatus(missing, Missing::kBucket).code, "NoSuchBucket");
  EXPECT_EQ(ErrorFromStatus(missing, Missing::kUpload).code, "NoSuchUpload");
  EXPECT_EQ(ErrorFromStatus(missing, Missing::kUpload).http_status, 404);
}

TEST(ErrorMapping, PresignedAuthErrors) {
  Status malformed = Error(ErrorCode::kAuthorizationMalformed, "X-Amz-Expires must be less than a week");
  S3Error error = ErrorFromStatus(malformed, Missing::kKey, true);
  EXPECT_EQ(error.code, "AuthorizationQueryParametersError");
  EXPECT_EQ(error.message, "X-Amz-Expires must be less than a week");
}

TEST(ErrorXml, ContainsAllFields) {
  S3Error error = MakeError(403, "RequestTimeTooSkewed", "too far");
  error.details = {{"MaxAllowedSkewMilliseconds", "900000"}};
  std::string xml = RenderErrorXml(error, "bkt", "a&b", "/bkt/a%26b", "REQ1");
  EXPECT_NE(xml.find("<Error><Code>RequestTimeTooSkewed</Code><Message>too far</Message>"),
            std::string::npos);
  EXPECT_NE(xml.find("<Key>a&amp;b</Key><BucketName>bkt</BucketName><Resource>/bkt/a%26b</Resource>"),
            std::string::npos);
  EXPECT_NE(xml.find("<MaxAllowedSkewMilliseconds>900000</MaxAllowedSkewMilliseconds>"), std::string::npos);
  EXPECT_NE(xml.find("<RequestId>REQ1</RequestId><HostId>REQ1</HostId></Error>"), std::string::npos);
}

TEST(ErrorXml, SignatureMismatchDetailsInAwsOrder) {
  EXPECT_EQ(SpacedHexBytes(std::string("AW\n\xff", 4)), "41 57 0a ff");
  EXPECT_EQ(SpacedHexBytes(""), "");

  S3Error v4 = ErrorFromStatus(Error(ErrorCode::kSignatureMismatch, ""));
  AddSignatureMismatchDetails(v4, "AKID", "AWS4\nx", "abc123", "GET\n/");
  std::string xml = RenderErrorXml(v4, "", "", "/", "R");
  EXPECT_NE(xml.find("<AWSAccessKeyId>AKID</AWSAccessKeyId><StringToSign>AWS4\nx</StringToSign>"
                     "<SignatureProvided>abc123</SignatureProvided>"
                     "<StringToSignBytes>41 57 53 34 0a 78</StringToSignBytes>"
                     "<CanonicalRequest>GET\n/</CanonicalRequest>"
                     "<CanonicalRequestBytes>47 45 54 0a 2f</CanonicalRequestBytes>"),
            std::string::npos)
      << xml;

  S3Error v2 = ErrorFromStatus(Error(ErrorCode::kSignatureMismatch, ""));
  AddSignatureMismatchDetails(v2, "AKID", "GET\n\n", "sig=", "");
  xml = RenderErrorXml(v2, "", "", "/", "R");
  EXPECT_NE(xml.find("<StringToSignBytes>47 45 54 0a 0a</StringToSignBytes>"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("CanonicalRequest"), std::string::npos) << xml;
}

}  // namespace
}  // namespace serac::s3
