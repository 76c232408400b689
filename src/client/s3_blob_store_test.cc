// The BlobStore contract (blob/blob_store_contract.h) on the upstream-S3 back end, against a real
// `serac server` process as the upstream; then what only that back end has: its URL, its keys from
// the environment, and blobs in the upstream bucket under the prefix.
#include "client/s3_blob_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "blob/blob_store_contract.h"
#include "client/s3_client.h"
#include "client/serac_process_test_util.h"

namespace serac::blob {
namespace {

using client::testing::kRootAccessKey;
using client::testing::kRootSecretKey;
using client::testing::SeracProcess;

SeracProcess& Upstream() {
  static SeracProcess upstream;  // started at first use, stopped when the test binary exits
  return upstream;
}

client::S3ClientOptions UpstreamClient() {
  client::S3ClientOptions options;
  options.endpoint = Upstream().endpoint();
  options.access_key = kRootAccessKey;
  options.secret_key = kRootSecretKey;
  return options;
}

// Each test's store is a prefix of its own (the name of its temporary directory) in one bucket.
std::unique_ptr<BlobStore> OpenUpstream(const std::string& root) {
  if (!Upstream().running()) return nullptr;
  client::S3BlobStoreOptions options;
  options.client = UpstreamClient();
  options.bucket = "blobs";
  options.prefix = "contract/" + std::filesystem::path(root).parent_path().filename().string() + "/";
  Result<std::unique_ptr<BlobStore>> store = client::OpenS3BlobStore(options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

INSTANTIATE_TEST_SUITE_P(UpstreamS3, BlobStoreContractTest,
                         ::testing::Values(Backend{"UpstreamS3", OpenUpstream, /*local_temporaries=*/false}),
                         [](const ::testing::TestParamInfo<Backend>& info) { return info.param.name; });

TEST(S3BlobStoreTest, TheUrlNamesBucketPrefixAndEndpointAndTheKeysComeFromTheEnvironment) {
  ASSERT_TRUE(Upstream().running());
  ::setenv("SERAC_BLOB_S3_ACCESS_KEY_ID", std::string(kRootAccessKey).c_str(), 1);
  ::setenv("SERAC_BLOB_S3_SECRET_ACCESS_KEY", std::string(kRootSecretKey).c_str(), 1);
  auto store = client::OpenS3BlobStoreUrl("s3://urlblobs/node-a?endpoint=" + Upstream().endpoint());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Result<BlobId> id = WriteBlob(**store, "through the url");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  // The blob is the object PREFIX/<id> in the upstream bucket, and nothing else is there.
  Result<client::S3Client> upstream = client::S3Client::Make(UpstreamClient());
  ASSERT_TRUE(upstream.ok());
  auto page = upstream->ListObjects("urlblobs", "");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, "node-a/" + *id);
  auto bytes = upstream->GetObject("urlblobs", "node-a/" + *id);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, "through the url");

  // A wrong secret is refused by the upstream, and the error does not carry it.
  ::setenv("SERAC_BLOB_S3_SECRET_ACCESS_KEY", "not-the-secret-at-all", 1);
  auto refused = client::OpenS3BlobStoreUrl("s3://urlblobs/node-a?endpoint=" + Upstream().endpoint());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message().find("not-the-secret-at-all"), std::string::npos);
  ::unsetenv("SERAC_BLOB_S3_SECRET_ACCESS_KEY");
  ::unsetenv("SERAC_BLOB_S3_ACCESS_KEY_ID");
}

TEST(S3BlobStoreTest, TheSweepAbortsTheUploadsACrashLeftBehind) {
  ASSERT_TRUE(Upstream().running());
  client::S3BlobStoreOptions options;
  options.client = UpstreamClient();
  options.bucket = "sweptblobs";
  options.prefix = "p/";
  options.stale_upload_age = std::chrono::seconds(0);
  auto store = client::OpenS3BlobStore(options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  // A writer cut short: its upload begun, one part sent, never completed nor aborted.
  client::S3ClientOptions multipart = UpstreamClient();
  multipart.multipart_threshold_bytes = 1;
  auto upstream = client::S3Client::Make(multipart);
  ASSERT_TRUE(upstream.ok());
  const std::string blob_key = "p/" + std::string(32, 'a');
  client::S3Upload cut_short(*upstream, "sweptblobs", blob_key, true);
  ASSERT_TRUE(cut_short.Write(std::string(multipart.part_size_bytes + 10, 'x')).ok());
  // An upload of something that is not a blob of this store stays.
  client::S3Upload other(*upstream, "sweptblobs", "p/not-a-blob", false);
  ASSERT_TRUE(other.Write(std::string(multipart.part_size_bytes + 10, 'y')).ok());
  auto before = upstream->ListMultipartUploads("sweptblobs", "p/");
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_EQ(before->uploads.size(), 2u);

  ASSERT_TRUE((*store)->SweepTemporaryFiles().ok());
  auto after = upstream->ListMultipartUploads("sweptblobs", "p/");
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->uploads.size(), 1u);
  EXPECT_EQ(after->uploads[0].key, "p/not-a-blob");
  EXPECT_FALSE(cut_short.Close().ok());  // its parts are gone: it can no longer become a blob
  EXPECT_EQ((*store)->Open(std::string(32, 'a')).status().code(), ErrorCode::kNotFound);

  // What lies beside the prefix or below it is not the store's: never listed (so the start-up
  // orphan sweep, which removes what ForEachBlob lists and the index lacks, cannot reach it).
  for (const std::string& key :
       {"q/" + std::string(32, 'b'), "p/sub/" + std::string(32, 'c'), std::string(32, 'd')}) {
    ASSERT_TRUE(upstream->PutObject("sweptblobs", key, "not this store's").ok()) << key;
  }
  EXPECT_TRUE(ListBlobs(**store).empty());
}

TEST(S3BlobStoreTest, AUrlWithoutEndpointOrKeysSaysWhatIsMissing) {
  ::unsetenv("AWS_ENDPOINT_URL");
  auto no_endpoint = client::OpenS3BlobStoreUrl("s3://bucket/prefix");
  ASSERT_FALSE(no_endpoint.ok());
  EXPECT_NE(no_endpoint.status().message().find("endpoint"), std::string::npos);
  ::unsetenv("SERAC_BLOB_S3_ACCESS_KEY_ID");
  ::unsetenv("AWS_ACCESS_KEY_ID");
  ::unsetenv("SERAC_BLOB_S3_CREDENTIALS_FILE");
  auto no_keys = client::OpenS3BlobStoreUrl("s3://bucket/prefix?endpoint=http://127.0.0.1:1");
  ASSERT_FALSE(no_keys.ok());
  EXPECT_NE(no_keys.status().message().find("SERAC_BLOB_S3_ACCESS_KEY_ID"), std::string::npos);
}

}  // namespace
}  // namespace serac::blob
