// Tests of the S3 authorisation table, the resource ARNs and the condition keys (s3_auth.h).
#include "s3/s3_auth.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace serac::s3 {
namespace {

using S = ResourceScope;

struct Expected {
  std::string operation;
  std::string action;
  ResourceScope scope;
  bool listing;
  bool reads_copy_source;
};

// The mapping AWS documents for each operation, written out independently of the table.
const std::vector<Expected> kExpected = {
    {"ListBuckets", "s3:ListAllMyBuckets", S::kFilteredService, false, false},
    {"CreateBucket", "s3:CreateBucket", S::kBucket, false, false},
    {"HeadBucket", "s3:ListBucket", S::kBucket, false, false},
    {"DeleteBucket", "s3:DeleteBucket", S::kBucket, false, false},
    {"GetBucketLocation", "s3:GetBucketLocation", S::kBucket, false, false},
    {"GetBucketVersioning", "s3:GetBucketVersioning", S::kBucket, false, false},
    {"GetBucketAcl", "s3:GetBucketAcl", S::kBucket, false, false},
    {"ListObjects", "s3:ListBucket", S::kBucket, true, false},
    {"ListObjectsV2", "s3:ListBucket", S::kBucket, true, false},
    {"ListMultipartUploads", "s3:ListBucketMultipartUploads", S::kBucket, false, false},
    {"DeleteObjects", "s3:DeleteObject", S::kEachKey, false, false},
    {"PutObject", "s3:PutObject", S::kObject, false, false},
    {"CopyObject", "s3:PutObject", S::kObject, false, true},
    {"GetObject", "s3:GetObject", S::kObject, false, false},
    {"HeadObject", "s3:GetObject", S::kObject, false, false},
    {"DeleteObject", "s3:DeleteObject", S::kObject, false, false},
    {"GetObjectAcl", "s3:GetObjectAcl", S::kObject, false, false},
    {"GetObjectTagging", "s3:GetObjectTagging", S::kObject, false, false},
    {"PutObjectTagging", "s3:PutObjectTagging", S::kObject, false, false},
    {"DeleteObjectTagging", "s3:DeleteObjectTagging", S::kObject, false, false},
    {"CreateMultipartUpload", "s3:PutObject", S::kObject, false, false},
    {"UploadPart", "s3:PutObject", S::kObject, false, false},
    {"UploadPartCopy", "s3:PutObject", S::kObject, false, true},
    {"CompleteMultipartUpload", "s3:PutObject", S::kObject, false, false},
    {"AbortMultipartUpload", "s3:AbortMultipartUpload", S::kObject, false, false},
    {"ListParts", "s3:ListMultipartUploadParts", S::kObject, false, false},
};

TEST(S3AuthTest, EveryOperationHasItsAction) {
  for (const Expected& expected : kExpected) {
    SCOPED_TRACE(expected.operation);
    const OperationAccess* access = FindOperationAccess(expected.operation);
    ASSERT_NE(access, nullptr);
    EXPECT_EQ(access->operation, expected.operation);
    EXPECT_EQ(access->action, expected.action);
    EXPECT_EQ(access->scope, expected.scope);
    EXPECT_EQ(access->listing, expected.listing);
    EXPECT_EQ(access->reads_copy_source, expected.reads_copy_source);
  }
  // Nothing in the table that this test does not pin down, and no operation twice.
  EXPECT_EQ(OperationAccessTable().size(), kExpected.size());
  std::set<std::string_view> names;
  for (const OperationAccess& entry : OperationAccessTable()) {
    EXPECT_TRUE(names.insert(entry.operation).second) << entry.operation;
  }
}

TEST(S3AuthTest, UnofferedOperationsHaveNoEntry) {
  EXPECT_EQ(FindOperationAccess("PutObjectAcl"), nullptr);
  EXPECT_EQ(FindOperationAccess("UnsupportedBucketOperation"), nullptr);
  EXPECT_EQ(FindOperationAccess("getobject"), nullptr);  // names are exact
  EXPECT_EQ(FindOperationAccess(""), nullptr);
}

TEST(S3AuthTest, ResourceArns) {
  EXPECT_EQ(ResourceArn(S::kService, "b", "k"), "arn:aws:s3:::");
  EXPECT_EQ(ResourceArn(S::kBucket, "my-bucket", "ignored"), "arn:aws:s3:::my-bucket");
  EXPECT_EQ(ResourceArn(S::kObject, "my-bucket", "dir/a b+c"), "arn:aws:s3:::my-bucket/dir/a b+c");
  EXPECT_EQ(ResourceArn(S::kEachKey, "my-bucket", "k"), "");
}

std::string Only(const auth::ConditionContext& context, std::string_view key) {
  const std::vector<std::string>* values = context.Find(key);
  if (values == nullptr) return "<absent>";
  return values->size() == 1 ? values->front() : "<" + std::to_string(values->size()) + " values>";
}

TEST(S3AuthTest, ConditionKeysOfAListing) {
  namespace keys = auth::condition_keys;
  auth::Principal principal;
  principal.kind = auth::PrincipalKind::kUser;
  principal.user = "alice";
  principal.access_key = "AKALICE";
  http::Request request;
  request.remote_address = "192.0.2.10:40000";
  request.tls = true;
  QueryParams query = QueryParams::Parse("list-type=2&prefix=home%2Falice%2F&delimiter=%2F&max-keys=50");

  auth::ConditionContext listing = RequestConditions(principal, request, query, true);
  EXPECT_EQ(Only(listing, keys::kUsername), "alice");
  EXPECT_EQ(Only(listing, keys::kSourceIp), "192.0.2.10");
  EXPECT_EQ(Only(listing, keys::kSecureTransport), "true");
  EXPECT_EQ(Only(listing, keys::kS3Prefix), "home/alice/");
  EXPECT_EQ(Only(listing, keys::kS3Delimiter), "/");
  EXPECT_EQ(Only(listing, keys::kS3MaxKeys), "50");

  // Not a listing: no s3:* keys even if the query has such names.
  auth::ConditionContext other = RequestConditions(principal, request, query, false);
  EXPECT_EQ(Only(other, keys::kS3Prefix), "<absent>");
  EXPECT_EQ(Only(other, keys::kS3Delimiter), "<absent>");
  EXPECT_EQ(Only(other, keys::kUsername), "alice");
}

TEST(S3AuthTest, ListingWithoutPrefixHasEmptyPrefix) {
  namespace keys = auth::condition_keys;
  auth::Principal principal;
  principal.user = "bob";
  http::Request request;
  request.remote_address = "[::1]:1234";
  auth::ConditionContext context = RequestConditions(principal, request, QueryParams::Parse(""), true);
  EXPECT_EQ(Only(context, keys::kS3Prefix), "");
  EXPECT_EQ(Only(context, keys::kS3Delimiter), "<absent>");
  EXPECT_EQ(Only(context, keys::kS3MaxKeys), "<absent>");
  EXPECT_EQ(Only(context, keys::kSecureTransport), "false");
  EXPECT_EQ(Only(context, keys::kSourceIp), "::1");
}

}  // namespace
}  // namespace serac::s3
