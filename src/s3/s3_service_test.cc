// End-to-end tests of S3Service over the real SQLite MetaStore and local BlobStore, with signed
// requests and in-memory HTTP fakes.
#include "s3/s3_service.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "auth/identity.h"
#include "auth/server_key.h"
#include "auth/service_test_stores.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/random.h"
#include "http/http_test_fakes.h"
#include "s3/s3_errors.h"

namespace serac::s3 {
namespace {

constexpr std::string_view kAccessKey = "TESTACCESSKEY";
constexpr std::string_view kSecretKey = "testsecretkey/abcdefghijklmnopqrstuvwx";

using http::testing::RecordingResponse;
using http::testing::StringBody;

std::string Crc64NvmeBase64(std::string_view data) {
  Checksummer checksummer(ChecksumAlgorithm::kCrc64Nvme);
  checksummer.Update(data.data(), data.size());
  return Base64Encode(checksummer.Finish());
}

std::string Between(const std::string& text, const std::string& open, const std::string& close) {
  size_t at = text.find(open);
  if (at == std::string::npos) return {};
  at += open.size();
  return text.substr(at, text.find(close, at) - at);
}

class S3ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stores_.Open("s3_service_test", root_credentials_, auth::IdentityOptions{});
    if (HasFatalFailure()) return;
    service_ = std::make_unique<S3Service>(stores_.meta.get(), stores_.blobs.get(), stores_.identity.get(),
                                           S3Options{"s3.test", "us-east-1"});
  }
  void TearDown() override {
    service_.reset();  // before the stores it points into
  }

  RecordingResponse Call(const std::string& method, const std::string& path, const std::string& query = "",
                         const std::string& body = "", std::vector<http::Header> extra = {}, bool sign = true,
                         const std::string& host = "localhost:9000") {
    std::vector<http::Header> headers = {{"Host", host}};
    for (auto& header : extra) headers.push_back(header);
    if (sign) {
      auth::SignOptions options;
      options.now = Now();
      options.payload_sha256_hex = Sha256Hex(body);
      auth::SignRequest(method, path, query, headers, signer_, options);
    }
    http::Request request;
    request.method = method;
    request.path = path;
    request.query = query;
    request.target = path + (query.empty() ? "" : "?" + query);
    request.headers = headers;
    request.request_id = "REQ";
    request.remote_address = remote_address_;
    StringBody reader(body);
    RecordingResponse response;
    http::RequestOutcome outcome;
    service_->Handle(request, reader, response, outcome);
    last_operation_ = outcome.operation;
    last_principal_ = outcome.principal;
    return response;
  }

  void CreateBucket(const std::string& name) { ASSERT_EQ(Call("PUT", "/" + name).status(), 200); }

  const auth::Credentials root_credentials_{std::string(kAccessKey), std::string(kSecretKey), ""};
  auth::testing::ServiceTestStores stores_;
  std::unique_ptr<S3Service> service_;
  auth::Credentials signer_ = root_credentials_;  // who Call() signs as
  std::string remote_address_ = "127.0.0.1:40000";
  std::string last_operation_;
  std::string last_principal_;
};

TEST_F(S3ServiceTest, AnonymousIsRejected) {
  auto anonymous = Call("GET", "/", "", "", {}, false);
  EXPECT_EQ(anonymous.status(), 403);
  EXPECT_NE(anonymous.body.find("<Code>AccessDenied</Code>"), std::string::npos);
  EXPECT_EQ(anonymous.Header("Content-Type"), "application/xml");
}

TEST_F(S3ServiceTest, BucketLifecycle) {
  EXPECT_EQ(Call("PUT", "/Bad_Name").status(), 400);
  CreateBucket("bucket-one");
  EXPECT_EQ(last_operation_, "CreateBucket");
  auto again = Call("PUT", "/bucket-one");
  EXPECT_EQ(again.status(), 409);
  EXPECT_NE(again.body.find("BucketAlreadyOwnedByYou"), std::string::npos);
  auto head = Call("HEAD", "/bucket-one");
  EXPECT_EQ(head.status(), 200);
  EXPECT_EQ(head.Header("x-amz-bucket-region"), "us-east-1");
  EXPECT_EQ(Call("HEAD", "/missing-bucket").status(), 404);
  auto list = Call("GET", "/");
  EXPECT_NE(list.body.find("<Name>bucket-one</Name>"), std::string::npos);
  auto location = Call("GET", "/bucket-one", "location");
  EXPECT_NE(
      location.body.find(
          "<LocationConstraint xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"></LocationConstraint>"),
      std::string::npos);
  EXPECT_EQ(Call("GET", "/bucket-one", "cors").status(), 501);
  ASSERT_EQ(Call("PUT", "/bucket-one/k", "", "x").status(), 200);
  auto not_empty = Call("DELETE", "/bucket-one");
  EXPECT_EQ(not_empty.status(), 409);
  EXPECT_NE(not_empty.body.find("BucketNotEmpty"), std::string::npos);
  EXPECT_EQ(Call("DELETE", "/bucket-one/k").status(), 204);
  EXPECT_EQ(Call("DELETE", "/bucket-one/k").status(), 204);  // missing keys too
  EXPECT_EQ(Call("DELETE", "/bucket-one").status(), 204);
}

TEST_F(S3ServiceTest, SmallObjectRoundTripWithRangesAndConditions) {
  CreateBucket("bk1");
  auto put =
      Call("PUT", "/bk1/dir/my%20key%2B", "", "hello world",
           {{"Content-Type", "text/plain"}, {"X-Amz-Meta-Color", "Blue"}, {"x-amz-tagging", "a=1&b=2"}});
  ASSERT_EQ(put.status(), 200) << put.body;
  std::string etag =
      "\"" + HexEncode(std::string_view(reinterpret_cast<const char*>(Md5("hello world").data()), 16)) + "\"";
  EXPECT_EQ(put.Header("ETag"), etag);

  auto get = Call("GET", "/bk1/dir/my%20key%2B");
  EXPECT_EQ(get.status(), 200);
  EXPECT_EQ(get.body, "hello world");
  EXPECT_EQ(get.Header("Content-Type"), "text/plain");
  EXPECT_EQ(get.Header("x-amz-meta-color"), "Blue");
  EXPECT_EQ(get.Header("x-amz-tagging-count"), "2");
  EXPECT_EQ(get.Header("ETag"), etag);

  auto ranged = Call("GET", "/bk1/dir/my%20key%2B", "", "", {{"Range", "bytes=-5"}});
  EXPECT_EQ(ranged.status(), 206);
  EXPECT_EQ(ranged.body, "world");
  EXPECT_EQ(ranged.Header("Content-Range"), "bytes 6-10/11");
  auto beyond = Call("GET", "/bk1/dir/my%20key%2B", "", "", {{"Range", "bytes=20-"}});
  EXPECT_EQ(beyond.status(), 416);
  EXPECT_EQ(beyond.Header("Content-Range"), "bytes */11");

  EXPECT_EQ(Call("GET", "/bk1/dir/my%20key%2B", "", "", {{"If-None-Match", etag}}).status(), 304);
  EXPECT_EQ(Call("GET", "/bk1/dir/my%20key%2B", "", "", {{"If-Match", "\"nope\""}}).status(), 412);
  auto head = Call("HEAD", "/bk1/dir/my%20key%2B");
  EXPECT_EQ(head.status(), 200);
  EXPECT_EQ(head.announced.value_or(0), 11u);
  EXPECT_TRUE(head.body.empty());
  auto missing = Call("GET", "/bk1/nothing");
  EXPECT_EQ(missing.status(), 404);
  EXPECT_NE(missing.body.find("NoSuchKey"), std::string::npos);
  EXPECT_NE(Call("GET", "/b2/nothing").body.find("NoSuchBucket"), std::string::npos);

  // Conditional create.
  EXPECT_EQ(Call("PUT", "/bk1/dir/my%20key%2B", "", "x", {{"If-None-Match", "*"}}).status(), 412);
  EXPECT_EQ(Call("PUT", "/bk1/new", "", "x", {{"If-None-Match", "*"}}).status(), 200);

  auto tags = Call("GET", "/bk1/dir/my%20key%2B", "tagging");
  EXPECT_NE(tags.body.find("<Tag><Key>a</Key><Value>1</Value></Tag>"), std::string::npos);
}

TEST_F(S3ServiceTest, LargeObjectGoesToBlobAndStreams) {
  CreateBucket("big");
  std::string data(300 * 1024, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  ASSERT_EQ(Call("PUT", "/big/obj", "", data).status(), 200);
  auto get = Call("GET", "/big/obj");
  EXPECT_EQ(get.announced.value_or(0), data.size());
  EXPECT_EQ(get.body, data);
  auto ranged = Call("GET", "/big/obj", "", "", {{"Range", "bytes=1000-1999"}});
  EXPECT_EQ(ranged.body, data.substr(1000, 1000));

  auto copy = Call("PUT", "/big/copy", "", "", {{"x-amz-copy-source", "/big/obj"}});
  ASSERT_EQ(copy.status(), 200) << copy.body;
  EXPECT_NE(copy.body.find("<CopyObjectResult"), std::string::npos);
  EXPECT_EQ(Call("GET", "/big/copy").body, data);
  EXPECT_EQ(Call("PUT", "/big/obj", "", "", {{"x-amz-copy-source", "big/obj"}}).status(), 400);
}

TEST_F(S3ServiceTest, ListingWithDelimiterAndPages) {
  CreateBucket("lst");
  for (const char* key : {"a", "d/1", "d/2", "d/3", "e/x/y", "f"}) {
    ASSERT_EQ(Call("PUT", std::string("/lst/") + key, "", "v").status(), 200);
  }
  auto all = Call("GET", "/lst", "list-type=2&delimiter=%2F");
  EXPECT_NE(all.body.find("<KeyCount>4</KeyCount>"), std::string::npos) << all.body;
  EXPECT_NE(all.body.find("<CommonPrefixes><Prefix>d/</Prefix></CommonPrefixes>"), std::string::npos);
  EXPECT_NE(all.body.find("<IsTruncated>false</IsTruncated>"), std::string::npos);

  // Page through with max-keys=2: [a, d/], [e/, f].
  auto first = Call("GET", "/lst", "delimiter=%2F&list-type=2&max-keys=2");
  EXPECT_NE(first.body.find("<IsTruncated>true</IsTruncated>"), std::string::npos) << first.body;
  size_t at = first.body.find("<NextContinuationToken>");
  ASSERT_NE(at, std::string::npos);
  std::string token = first.body.substr(at + 23, first.body.find("</", at) - at - 23);
  auto second =
      Call("GET", "/lst",
           "continuation-token=" + UriEncode(token, true) + "&delimiter=%2F&list-type=2&max-keys=2");
  EXPECT_NE(second.body.find("<Prefix>e/</Prefix>"), std::string::npos) << second.body;
  EXPECT_NE(second.body.find("<Key>f</Key>"), std::string::npos);
  EXPECT_EQ(second.body.find("d/"), std::string::npos);
  EXPECT_NE(second.body.find("<IsTruncated>false</IsTruncated>"), std::string::npos);

  auto v1 = Call("GET", "/lst", "prefix=d%2F&max-keys=2");
  EXPECT_NE(v1.body.find("<Key>d/1</Key>"), std::string::npos);
  EXPECT_NE(v1.body.find("<IsTruncated>true</IsTruncated>"), std::string::npos);
  auto zero = Call("GET", "/lst", "list-type=2&max-keys=0");
  EXPECT_NE(zero.body.find("<KeyCount>0</KeyCount>"), std::string::npos);
}

TEST_F(S3ServiceTest, MultipartUpload) {
  CreateBucket("mpu");
  auto created = Call("POST", "/mpu/obj", "uploads", "", {{"x-amz-checksum-algorithm", "CRC32"}});
  ASSERT_EQ(created.status(), 200) << created.body;
  size_t at = created.body.find("<UploadId>");
  std::string upload_id = created.body.substr(at + 10, created.body.find("</UploadId>") - at - 10);
  std::string part1(5 * 1024 * 1024, 'a');
  std::string part2 = "tail";
  auto p1 = Call("PUT", "/mpu/obj", "partNumber=1&uploadId=" + upload_id, part1);
  ASSERT_EQ(p1.status(), 200) << p1.body;
  EXPECT_FALSE(p1.Header("x-amz-checksum-crc32").empty());
  auto p2 = Call("PUT", "/mpu/obj", "partNumber=2&uploadId=" + upload_id, part2);
  ASSERT_EQ(p2.status(), 200);
  auto parts = Call("GET", "/mpu/obj", "uploadId=" + upload_id);
  EXPECT_NE(parts.body.find("<PartNumber>2</PartNumber>"), std::string::npos);

  std::string wrong_order = "<CompleteMultipartUpload><Part><PartNumber>2</PartNumber><ETag>" +
                            p2.Header("ETag") + "</ETag></Part><Part><PartNumber>1</PartNumber><ETag>" +
                            p1.Header("ETag") + "</ETag></Part></CompleteMultipartUpload>";
  EXPECT_NE(Call("POST", "/mpu/obj", "uploadId=" + upload_id, wrong_order).body.find("InvalidPartOrder"),
            std::string::npos);
  std::string bad_etag =
      "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"00\"</ETag></Part></"
      "CompleteMultipartUpload>";
  EXPECT_NE(Call("POST", "/mpu/obj", "uploadId=" + upload_id, bad_etag).body.find("InvalidPart"),
            std::string::npos);

  std::string good = "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + p1.Header("ETag") +
                     "</ETag></Part><Part><PartNumber>2</PartNumber><ETag>" + p2.Header("ETag") +
                     "</ETag></Part></CompleteMultipartUpload>";
  auto done = Call("POST", "/mpu/obj", "uploadId=" + upload_id, good);
  ASSERT_EQ(done.status(), 200) << done.body;
  EXPECT_NE(done.body.find("-2&quot;</ETag>"), std::string::npos) << done.body;
  EXPECT_NE(done.body.find("<ChecksumCRC32>"), std::string::npos);
  auto get = Call("GET", "/mpu/obj");
  EXPECT_EQ(get.body.size(), part1.size() + part2.size());
  EXPECT_EQ(get.body.substr(part1.size()), "tail");
  EXPECT_EQ(get.Header("x-amz-mp-parts-count"), "2");
  auto tail = Call("GET", "/mpu/obj", "", "", {{"Range", "bytes=5242878-5242881"}});
  EXPECT_EQ(tail.body, "aata");
  auto part_two = Call("GET", "/mpu/obj", "partNumber=2");
  EXPECT_EQ(part_two.status(), 206);
  EXPECT_EQ(part_two.body, "tail");
  EXPECT_EQ(Call("DELETE", "/mpu/obj", "uploadId=" + upload_id).status(), 404);
}

TEST_F(S3ServiceTest, DeleteObjectsAndVirtualHost) {
  CreateBucket("vhb");
  ASSERT_EQ(Call("PUT", "/k1", "", "1", {}, true, "vhb.s3.test:9000").status(), 200);
  EXPECT_EQ(Call("GET", "/vhb/k1").body, "1");
  auto deleted = Call("POST", "/vhb", "delete",
                      "<Delete><Object><Key>k1</Key></Object><Object><Key>k2</Key></Object></Delete>");
  EXPECT_EQ(deleted.status(), 200);
  EXPECT_NE(deleted.body.find("<Deleted><Key>k2</Key></Deleted>"), std::string::npos);
  EXPECT_EQ(Call("POST", "/vhb", "delete", "<Delete>").status(), 400);
  EXPECT_EQ(Call("GET", "/vhb/k1").status(), 404);
}

// Stored header values come back byte for byte. Values longer than the small-string buffer once
// came back as freed memory: the ?: choosing between a literal and the stored std::string made a
// temporary copy, and the view of it dangled.
TEST_F(S3ServiceTest, StoredContentTypeSurvivesEveryWritePath) {
  CreateBucket("ctb");
  const std::string type = "application/vnd.serac.example+json; charset=utf-8; profile=\"long enough\"";
  ASSERT_EQ(Call("PUT", "/ctb/put", "", "body", {{"Content-Type", type}}).status(), 200);
  EXPECT_EQ(Call("GET", "/ctb/put").Header("Content-Type"), type);
  EXPECT_EQ(Call("HEAD", "/ctb/put").Header("Content-Type"), type);
  EXPECT_EQ(Call("GET", "/ctb/put", "response-content-type=text%2Fplain").Header("Content-Type"),
            "text/plain");

  auto copied = Call("PUT", "/ctb/copy", "", "",
                     {{"x-amz-copy-source", "/ctb/put"},
                      {"x-amz-metadata-directive", "REPLACE"},
                      {"Content-Type", type + "; copied"}});
  ASSERT_EQ(copied.status(), 200) << copied.body;
  EXPECT_EQ(Call("HEAD", "/ctb/copy").Header("Content-Type"), type + "; copied");

  auto created = Call("POST", "/ctb/mp", "uploads", "", {{"Content-Type", type + "; multipart"}});
  ASSERT_EQ(created.status(), 200);
  std::string upload_id = Between(created.body, "<UploadId>", "</UploadId>");
  auto part = Call("PUT", "/ctb/mp", "partNumber=1&uploadId=" + upload_id, "only part");
  ASSERT_EQ(part.status(), 200);
  auto done = Call("POST", "/ctb/mp", "uploadId=" + upload_id,
                   "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + part.Header("ETag") +
                       "</ETag></Part></CompleteMultipartUpload>");
  ASSERT_EQ(done.status(), 200) << done.body;
  EXPECT_EQ(Call("GET", "/ctb/mp").Header("Content-Type"), type + "; multipart");

  ASSERT_EQ(Call("PUT", "/ctb/untyped", "", "x").status(), 200);
  EXPECT_EQ(Call("GET", "/ctb/untyped").Header("Content-Type"), "binary/octet-stream");
}

// Without a client checksum, AWS stores a full-object CRC64NVME; multipart objects get the parts'
// CRC64NVMEs combined.
TEST_F(S3ServiceTest, DefaultCrc64NvmeChecksum) {
  CreateBucket("crc");
  std::string data = "no checksum from the client";
  auto put = Call("PUT", "/crc/simple", "", data);
  ASSERT_EQ(put.status(), 200);
  EXPECT_EQ(put.Header("x-amz-checksum-crc64nvme"), Crc64NvmeBase64(data));
  auto get = Call("GET", "/crc/simple", "", "", {{"x-amz-checksum-mode", "ENABLED"}});
  EXPECT_EQ(get.Header("x-amz-checksum-crc64nvme"), Crc64NvmeBase64(data));
  EXPECT_EQ(get.Header("x-amz-checksum-type"), "FULL_OBJECT");
  EXPECT_EQ(Call("GET", "/crc/simple").Header("x-amz-checksum-crc64nvme"), "");  // only when asked

  auto created = Call("POST", "/crc/mp", "uploads");
  std::string upload_id = Between(created.body, "<UploadId>", "</UploadId>");
  std::string part1(5 * 1024 * 1024, 'p');
  std::string part2 = "second part";
  auto p1 = Call("PUT", "/crc/mp", "partNumber=1&uploadId=" + upload_id, part1);
  auto p2 = Call("PUT", "/crc/mp", "partNumber=2&uploadId=" + upload_id, part2);
  ASSERT_EQ(p1.status(), 200);
  ASSERT_EQ(p2.status(), 200);
  auto listed = Call("GET", "/crc/mp", "uploadId=" + upload_id);
  EXPECT_EQ(listed.body.find("<Checksum"), std::string::npos) << listed.body;  // not an upload algorithm
  auto done = Call("POST", "/crc/mp", "uploadId=" + upload_id,
                   "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + p1.Header("ETag") +
                       "</ETag></Part><Part><PartNumber>2</PartNumber><ETag>" + p2.Header("ETag") +
                       "</ETag></Part></CompleteMultipartUpload>");
  ASSERT_EQ(done.status(), 200) << done.body;
  std::string whole = Crc64NvmeBase64(part1 + part2);
  EXPECT_NE(done.body.find("<ChecksumCRC64NVME>" + whole + "</ChecksumCRC64NVME><ChecksumType>FULL_OBJECT"),
            std::string::npos)
      << done.body;
  EXPECT_EQ(Call("HEAD", "/crc/mp", "", "", {{"x-amz-checksum-mode", "ENABLED"}})
                .Header("x-amz-checksum-crc64nvme"),
            whole);

  // A part sent with a checksum of another algorithm has no CRC64NVME: then no object checksum.
  created = Call("POST", "/crc/mixed", "uploads");
  upload_id = Between(created.body, "<UploadId>", "</UploadId>");
  auto only = Call("PUT", "/crc/mixed", "partNumber=1&uploadId=" + upload_id, "x",
                   {{"x-amz-checksum-crc32", "jNwWgw=="}});  // CRC32 of "x"
  ASSERT_EQ(only.status(), 200) << only.body;
  done = Call("POST", "/crc/mixed", "uploadId=" + upload_id,
              "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + only.Header("ETag") +
                  "</ETag></Part></CompleteMultipartUpload>");
  ASSERT_EQ(done.status(), 200) << done.body;
  EXPECT_EQ(done.body.find("<Checksum"), std::string::npos) << done.body;
}

TEST_F(S3ServiceTest, ListMultipartUploadsRollsUpCommonPrefixes) {
  CreateBucket("lmu");
  std::map<std::string, std::vector<std::string>> ids;
  for (const char* key : {"a", "d/1", "d/2", "d/2", "e/x/y", "f"}) {
    auto created = Call("POST", std::string("/lmu/") + key, "uploads");
    ASSERT_EQ(created.status(), 200);
    ids[key].push_back(Between(created.body, "<UploadId>", "</UploadId>"));
  }
  auto all = Call("GET", "/lmu", "uploads&delimiter=%2F");
  EXPECT_NE(all.body.find("<Delimiter>/</Delimiter>"), std::string::npos) << all.body;
  EXPECT_NE(all.body.find("<Key>a</Key>"), std::string::npos);
  EXPECT_NE(all.body.find("<Key>f</Key>"), std::string::npos);
  EXPECT_EQ(all.body.find("<Key>d/"), std::string::npos);
  EXPECT_NE(all.body.find("<CommonPrefixes><Prefix>d/</Prefix></CommonPrefixes>"
                          "<CommonPrefixes><Prefix>e/</Prefix></CommonPrefixes>"),
            std::string::npos);
  EXPECT_NE(all.body.find("<IsTruncated>false</IsTruncated>"), std::string::npos);

  // Pages of two: [a, d/], [e/, f]; a page ending on a prefix resumes past it.
  auto first = Call("GET", "/lmu", "uploads&delimiter=%2F&max-uploads=2");
  EXPECT_NE(first.body.find("<IsTruncated>true</IsTruncated>"), std::string::npos) << first.body;
  EXPECT_EQ(Between(first.body, "<NextKeyMarker>", "</NextKeyMarker>"), "d/");
  EXPECT_NE(first.body.find("<NextUploadIdMarker></NextUploadIdMarker>"), std::string::npos);
  auto second = Call("GET", "/lmu", "uploads&delimiter=%2F&max-uploads=2&key-marker=d%2F");
  EXPECT_NE(second.body.find("<Prefix>e/</Prefix>"), std::string::npos) << second.body;
  EXPECT_NE(second.body.find("<Key>f</Key>"), std::string::npos);
  EXPECT_EQ(second.body.find("<Key>d/"), std::string::npos);
  EXPECT_EQ(second.body.find("<Prefix>d/</Prefix></CommonPrefixes>"), std::string::npos);
  EXPECT_NE(second.body.find("<KeyMarker>d/</KeyMarker>"), std::string::npos);
  EXPECT_NE(second.body.find("<IsTruncated>false</IsTruncated>"), std::string::npos);

  // Within a prefix, two uploads of one key page by upload id.
  auto nested = Call("GET", "/lmu", "uploads&prefix=d%2F&delimiter=%2F&max-uploads=2");
  EXPECT_NE(nested.body.find("<IsTruncated>true</IsTruncated>"), std::string::npos) << nested.body;
  std::string key_marker = Between(nested.body, "<NextKeyMarker>", "</NextKeyMarker>");
  std::string id_marker = Between(nested.body, "<NextUploadIdMarker>", "</NextUploadIdMarker>");
  EXPECT_EQ(key_marker, "d/2");
  auto rest =
      Call("GET", "/lmu", "uploads&prefix=d%2F&delimiter=%2F&key-marker=d%2F2&upload-id-marker=" + id_marker);
  EXPECT_NE(rest.body.find("<IsTruncated>false</IsTruncated>"), std::string::npos) << rest.body;
  EXPECT_EQ(rest.body.find("<Key>d/1</Key>"), std::string::npos);
  EXPECT_NE(rest.body.find("<Key>d/2</Key>"), std::string::npos);
  EXPECT_EQ(rest.body.find(id_marker + "</UploadId>"), std::string::npos);
}

TEST_F(S3ServiceTest, SignatureMismatchExplainsWhatWasSigned) {
  CreateBucket("sig");
  // Sign one path, send another: the server's string to sign then differs from the client's.
  std::vector<http::Header> headers = {{"Host", "localhost:9000"}};
  auth::SignOptions options;
  options.now = Now();
  options.payload_sha256_hex = Sha256Hex("");
  auth::SignRequest("GET", "/sig/signed", "", headers, {std::string(kAccessKey), std::string(kSecretKey), ""},
                    options);
  http::Request request;
  request.method = "GET";
  request.path = "/sig/sent";
  request.target = "/sig/sent";
  request.headers = headers;
  request.request_id = "REQ";
  StringBody reader("");
  RecordingResponse response;
  http::RequestOutcome outcome;
  service_->Handle(request, reader, response, outcome);
  EXPECT_EQ(response.status(), 403);
  const std::string& body = response.body;
  EXPECT_NE(body.find("<Code>SignatureDoesNotMatch</Code>"), std::string::npos) << body;
  EXPECT_EQ(Between(body, "<AWSAccessKeyId>", "</"), kAccessKey);
  std::string string_to_sign = Between(body, "<StringToSign>", "</StringToSign>");
  EXPECT_EQ(string_to_sign.rfind("AWS4-HMAC-SHA256\n", 0), 0u) << body;
  EXPECT_EQ(Between(body, "<StringToSignBytes>", "</"), SpacedHexBytes(string_to_sign));
  std::string canonical = Between(body, "<CanonicalRequest>", "</CanonicalRequest>");
  EXPECT_EQ(canonical.rfind("GET\n/sig/sent\n", 0), 0u) << body;
  EXPECT_EQ(Between(body, "<CanonicalRequestBytes>", "</"), SpacedHexBytes(canonical));
  EXPECT_EQ(Between(body, "<SignatureProvided>", "</").size(), 64u);
}

TEST_F(S3ServiceTest, MalformedRequestBodiesChangeNothing) {
  CreateBucket("xml");
  ASSERT_EQ(Call("PUT", "/xml/keep", "", "x").status(), 200);
  auto trailing =
      Call("POST", "/xml", "delete", "<Delete><Object><Key>keep</Key></Object></Delete><trailing/>");
  EXPECT_EQ(trailing.status(), 400);
  EXPECT_NE(trailing.body.find("<Code>MalformedXML</Code>"), std::string::npos) << trailing.body;
  EXPECT_EQ(Call("GET", "/xml/keep").body, "x");

  auto tagging =
      Call("PUT", "/xml/keep", "tagging",
           "<!DOCTYPE t [<!ENTITY e \"v\">]><Tagging><TagSet><Tag><Key>&e;</Key><Value>1</Value></Tag>"
           "</TagSet></Tagging>");
  EXPECT_EQ(tagging.status(), 400);
  EXPECT_NE(tagging.body.find("MalformedXML"), std::string::npos);

  EXPECT_EQ(Call("PUT", "/xml-two", "", "<CreateBucketConfiguration/><extra/>").status(), 400);
  EXPECT_EQ(Call("HEAD", "/xml-two").status(), 404);
  EXPECT_EQ(Call("PUT", "/xml-three", "",
                 "<CreateBucketConfiguration><LocationConstraint>us-east-1</LocationConstraint>"
                 "</CreateBucketConfiguration>")
                .status(),
            200);
}

TEST_F(S3ServiceTest, LocationConstraintMustNameTheServersRegion) {
  auto elsewhere = Call("PUT", "/far-away", "",
                        "<CreateBucketConfiguration><LocationConstraint>eu-west-1</LocationConstraint>"
                        "</CreateBucketConfiguration>");
  EXPECT_EQ(elsewhere.status(), 400);
  EXPECT_NE(elsewhere.body.find("<Code>IllegalLocationConstraintException</Code>"), std::string::npos)
      << elsewhere.body;
  EXPECT_EQ(Call("HEAD", "/far-away").status(), 404);
}

TEST_F(S3ServiceTest, UnknownStorageClassWritesNothing) {
  CreateBucket("scb");
  auto put = Call("PUT", "/scb/k", "", "x", {{"x-amz-storage-class", "NOT_A_CLASS"}});
  EXPECT_EQ(put.status(), 400);
  EXPECT_NE(put.body.find("<Code>InvalidStorageClass</Code>"), std::string::npos) << put.body;
  EXPECT_EQ(Call("HEAD", "/scb/k").status(), 404);
  auto upload = Call("POST", "/scb/k", "uploads", "", {{"x-amz-storage-class", "NOT_A_CLASS"}});
  EXPECT_EQ(upload.status(), 400);
  EXPECT_EQ(Call("PUT", "/scb/k", "", "x", {{"x-amz-storage-class", "GLACIER"}}).status(), 200);
}

// An unversioned bucket has only the "null" version: naming another must not reach the live object.
TEST_F(S3ServiceTest, OtherVersionsThanNullChangeNothing) {
  CreateBucket("ver");
  ASSERT_EQ(Call("PUT", "/ver/k", "", "live").status(), 200);
  for (const char* method : {"DELETE", "GET", "HEAD"}) {
    auto response = Call(method, "/ver/k", "versionId=abc");
    EXPECT_EQ(response.status(), 400) << method;
  }
  auto deleted = Call("DELETE", "/ver/k", "versionId=abc");
  EXPECT_NE(deleted.body.find("<Code>InvalidArgument</Code>"), std::string::npos) << deleted.body;
  EXPECT_EQ(Call("GET", "/ver/k", "versionId=null").body, "live");

  auto batch = Call("POST", "/ver", "delete",
                    "<Delete><Object><Key>k</Key><VersionId>abc</VersionId></Object></Delete>");
  EXPECT_EQ(batch.status(), 200);
  EXPECT_NE(batch.body.find("<Error><Key>k</Key><Code>InvalidArgument</Code>"), std::string::npos)
      << batch.body;
  EXPECT_EQ(Call("GET", "/ver/k").body, "live");
  EXPECT_EQ(Call("DELETE", "/ver/k", "versionId=null").status(), 204);
  EXPECT_EQ(Call("HEAD", "/ver/k").status(), 404);
}

// Tag changes rewrite only the tags: the object keeps its blobs, so nothing is copied or collected.
TEST_F(S3ServiceTest, TaggingKeepsTheObjectsBlobs) {
  CreateBucket("tgb");
  std::string data(200 * 1024, 'b');
  ASSERT_EQ(Call("PUT", "/tgb/big", "", data, {{"x-amz-tagging", "a=1"}}).status(), 200);
  auto before = stores_.meta->GetObject("tgb", "big");
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before->segments.size(), 1u);

  auto put = Call("PUT", "/tgb/big", "tagging",
                  "<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>");
  ASSERT_EQ(put.status(), 200) << put.body;
  auto after = stores_.meta->GetObject("tgb", "big");
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->segments.size(), 1u);
  EXPECT_EQ(after->segments[0].blob_id, before->segments[0].blob_id);
  EXPECT_EQ(after->headers.tags, (std::vector<std::pair<std::string, std::string>>{{"k", "v"}}));
  EXPECT_NE(Call("GET", "/tgb/big", "tagging").body.find("<Key>k</Key><Value>v</Value>"), std::string::npos);

  EXPECT_EQ(Call("DELETE", "/tgb/big", "tagging").status(), 204);
  after = stores_.meta->GetObject("tgb", "big");
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->headers.tags.empty());
  EXPECT_EQ(after->segments[0].blob_id, before->segments[0].blob_id);
  auto garbage = stores_.meta->PeekGarbage(100);
  ASSERT_TRUE(garbage.ok());
  EXPECT_TRUE(garbage->empty());
  EXPECT_EQ(Call("GET", "/tgb/big").body, data);

  EXPECT_NE(Call("DELETE", "/tgb/none", "tagging").body.find("NoSuchKey"), std::string::npos);
  EXPECT_NE(Call("DELETE", "/tgb-missing/none", "tagging").body.find("NoSuchBucket"), std::string::npos);
}

TEST_F(S3ServiceTest, FailedWriteConditionIsNamed) {
  CreateBucket("cond");
  ASSERT_EQ(Call("PUT", "/cond/k", "", "x").status(), 200);
  auto exists = Call("PUT", "/cond/k", "", "y", {{"If-None-Match", "*"}});
  EXPECT_EQ(exists.status(), 412);
  EXPECT_NE(exists.body.find("<Condition>If-None-Match</Condition>"), std::string::npos) << exists.body;
  auto stale = Call("PUT", "/cond/k", "", "y", {{"If-Match", "\"0123\""}});
  EXPECT_EQ(stale.status(), 412);
  EXPECT_NE(stale.body.find("<Condition>If-Match</Condition>"), std::string::npos) << stale.body;
  auto copy = Call("PUT", "/cond/k2", "", "", {{"x-amz-copy-source", "/cond/k"}, {"If-Match", "\"0123\""}});
  EXPECT_EQ(copy.status(), 412);
  EXPECT_NE(copy.body.find("<Condition>If-Match</Condition>"), std::string::npos) << copy.body;
  EXPECT_EQ(Call("GET", "/cond/k").body, "x");
}

// --- Identity and policies ---

class S3AuthorizationTest : public S3ServiceTest {
 protected:
  // A user with `policies` and one fresh access key; returns the key's credentials.
  auth::Credentials AddUser(const std::string& name, const std::vector<std::string>& policies) {
    Status created = stores_.identity->CreateUser(name, policies);
    EXPECT_TRUE(created.ok()) << created.ToString();
    auto key = stores_.identity->CreateAccessKey(name, "test key");
    EXPECT_TRUE(key.ok()) << key.status().ToString();
    if (!key.ok()) return {};
    return {key->access_key, key->secret_key, ""};
  }
  void AddPolicy(const std::string& name, const std::string& document) {
    Status stored = stores_.identity->PutPolicy(name, document);
    ASSERT_TRUE(stored.ok()) << stored.ToString();
  }
  RecordingResponse As(const auth::Credentials& who, const std::string& method, const std::string& path,
                       const std::string& query = "", const std::string& body = "",
                       std::vector<http::Header> extra = {}) {
    auth::Credentials saved = signer_;
    signer_ = who;
    RecordingResponse response = Call(method, path, query, body, std::move(extra));
    signer_ = saved;
    return response;
  }
  // Checked as root, so the answer does not depend on the caller's rights.
  bool Exists(const std::string& path) { return Call("HEAD", path).status() == 200; }
  void Put(const std::string& path, const std::string& body) {
    ASSERT_EQ(Call("PUT", path, "", body).status(), 200);
  }

  auth::Principal PrincipalOf(const auth::Credentials& who) {
    auth::VerifiedRequest verified;
    verified.access_key = who.access_key;
    auto principal = stores_.identity->PrincipalForSignedRequest(verified, Now());
    EXPECT_TRUE(principal.ok()) << principal.status().ToString();
    return principal.ok() ? std::move(principal).value() : auth::Principal{};
  }
  auth::Credentials Vend(const auth::Credentials& parent, const std::string& bucket,
                         const std::string& prefix, bool write, WallTime now) {
    auto vended = stores_.identity->VendCredentials(PrincipalOf(parent), bucket, prefix, write, now);
    EXPECT_TRUE(vended.ok()) << vended.status().ToString();
    if (!vended.ok()) return {};
    return {vended->access_key, vended->secret_key, vended->session_token};
  }
  // A presigned GET of `path` as `who`, sent unsigned otherwise.
  RecordingResponse PresignedGet(const auth::Credentials& who, const std::string& path) {
    auth::SignOptions options;
    options.now = Now();
    std::string query = auth::PresignQuery("GET", path, "localhost:9000", who, options, 300);
    return Call("GET", path, query, "", {}, false);
  }
};

void ExpectAccessDenied(const RecordingResponse& response) {
  EXPECT_EQ(response.status(), 403) << response.body;
  EXPECT_NE(response.body.find("<Code>AccessDenied</Code>"), std::string::npos) << response.body;
  EXPECT_NE(response.body.find("<RequestId>REQ</RequestId>"), std::string::npos) << response.body;
}

TEST_F(S3AuthorizationTest, ReadonlyUserReadsButChangesNothing) {
  CreateBucket("robkt");
  Put("/robkt/existing", "data");
  auth::Credentials reader = AddUser("reader", {"readonly"});

  ExpectAccessDenied(As(reader, "PUT", "/robkt/new", "", "payload"));
  EXPECT_FALSE(Exists("/robkt/new"));
  ExpectAccessDenied(As(reader, "PUT", "/robkt/existing", "", "overwrite"));
  EXPECT_EQ(Call("GET", "/robkt/existing").body, "data");
  ExpectAccessDenied(As(reader, "DELETE", "/robkt/existing"));
  EXPECT_TRUE(Exists("/robkt/existing"));
  ExpectAccessDenied(As(reader, "POST", "/robkt/mp", "uploads"));
  EXPECT_EQ(Call("GET", "/robkt", "uploads").body.find("<Upload>"), std::string::npos);
  ExpectAccessDenied(As(reader, "PUT", "/ro-second"));
  EXPECT_EQ(Call("HEAD", "/ro-second").status(), 404);
  ExpectAccessDenied(As(reader, "DELETE", "/robkt"));
  ExpectAccessDenied(As(reader, "PUT", "/robkt/existing", "tagging", "<Tagging><TagSet/></Tagging>"));

  auto get = As(reader, "GET", "/robkt/existing");
  EXPECT_EQ(get.status(), 200);
  EXPECT_EQ(get.body, "data");
  EXPECT_EQ(last_principal_, "reader");  // the user, not the key, in the access log
  EXPECT_EQ(As(reader, "HEAD", "/robkt/existing").status(), 200);
  EXPECT_EQ(As(reader, "HEAD", "/robkt").status(), 200);
  EXPECT_NE(As(reader, "GET", "/robkt", "list-type=2").body.find("<Key>existing</Key>"), std::string::npos);
  EXPECT_NE(As(reader, "GET", "/").body.find("<Name>robkt</Name>"), std::string::npos);
}

TEST_F(S3AuthorizationTest, WriteonlyUserCannotListOrRead) {
  CreateBucket("wobkt");
  auth::Credentials writer = AddUser("writer", {"writeonly"});
  EXPECT_EQ(As(writer, "PUT", "/wobkt/k", "", "v").status(), 200);
  ExpectAccessDenied(As(writer, "GET", "/wobkt/k"));
  ExpectAccessDenied(As(writer, "GET", "/wobkt"));
  EXPECT_EQ(As(writer, "HEAD", "/wobkt").status(), 403);  // s3:ListBucket
  // No s3:ListAllMyBuckets and no bucket it may list: an empty list, not a refusal.
  auto listed = As(writer, "GET", "/");
  EXPECT_EQ(listed.status(), 200) << listed.body;
  EXPECT_NE(listed.body.find("<Buckets></Buckets>"), std::string::npos) << listed.body;
}

TEST_F(S3AuthorizationTest, ListBucketsShowsOnlyTheBucketsTheCallerMaySee) {
  CreateBucket("team-a");
  CreateBucket("team-b");
  CreateBucket("team-c");
  AddPolicy("team-a-only", R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*",)"
                           R"("Resource":["arn:aws:s3:::team-a","arn:aws:s3:::team-a/*"]}]})");
  AddPolicy("locate-c", R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow",)"
                        R"("Action":"s3:GetBucketLocation","Resource":"arn:aws:s3:::team-c"}]})");
  auth::Credentials member = AddUser("member", {"team-a-only"});
  auto listed = As(member, "GET", "/");
  ASSERT_EQ(listed.status(), 200) << listed.body;
  EXPECT_NE(listed.body.find("<Name>team-a</Name>"), std::string::npos) << listed.body;
  EXPECT_EQ(listed.body.find("<Name>team-b</Name>"), std::string::npos) << listed.body;
  EXPECT_EQ(listed.body.find("<Name>team-c</Name>"), std::string::npos) << listed.body;

  // s3:GetBucketLocation alone makes a bucket visible too (MinIO's rule).
  auth::Credentials locator = AddUser("locator", {"locate-c"});
  auto located = As(locator, "GET", "/");
  ASSERT_EQ(located.status(), 200) << located.body;
  EXPECT_NE(located.body.find("<Name>team-c</Name>"), std::string::npos) << located.body;
  EXPECT_EQ(located.body.find("<Name>team-a</Name>"), std::string::npos) << located.body;

  // Root, and anyone allowed s3:ListAllMyBuckets, sees them all.
  auto all = Call("GET", "/");
  for (const char* name : {"team-a", "team-b", "team-c"}) {
    EXPECT_NE(all.body.find(std::string("<Name>") + name + "</Name>"), std::string::npos) << all.body;
  }
}

TEST_F(S3AuthorizationTest, ExplicitDenyOfListAllMyBucketsRefusesTheListing) {
  CreateBucket("denied-a");
  AddPolicy(
      "no-bucket-list",
      R"({"Version":"2012-10-17","Statement":[)"
      R"({"Effect":"Allow","Action":"s3:*","Resource":["arn:aws:s3:::denied-a","arn:aws:s3:::denied-a/*"]},)"
      R"({"Effect":"Deny","Action":"s3:ListAllMyBuckets","Resource":"*"}]})");
  auth::Credentials user = AddUser("no-lister", {"no-bucket-list"});
  ExpectAccessDenied(As(user, "GET", "/"));
  EXPECT_EQ(As(user, "HEAD", "/denied-a").status(), 200);  // the bucket itself stays usable
}

TEST_F(S3AuthorizationTest, DeleteObjectsDeletesOnlyAllowedKeys) {
  CreateBucket("mix");
  Put("/mix/tmp/a", "1");
  Put("/mix/keep/b", "2");
  AddPolicy("tmp-cleaner",
            R"({"Version":"2012-10-17","Statement":[)"
            R"({"Effect":"Allow","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::mix/tmp/*"}]})");
  auth::Credentials cleaner = AddUser("cleaner", {"tmp-cleaner"});
  auto result = As(cleaner, "POST", "/mix", "delete",
                   "<Delete><Object><Key>tmp/a</Key></Object><Object><Key>keep/b</Key></Object></Delete>");
  ASSERT_EQ(result.status(), 200) << result.body;
  EXPECT_NE(result.body.find("<Deleted><Key>tmp/a</Key></Deleted>"), std::string::npos) << result.body;
  EXPECT_NE(result.body.find("<Error><Key>keep/b</Key><Code>AccessDenied</Code>"), std::string::npos)
      << result.body;
  EXPECT_FALSE(Exists("/mix/tmp/a"));
  EXPECT_TRUE(Exists("/mix/keep/b"));
  // Quiet mode still reports the denied key.
  auto quiet = As(cleaner, "POST", "/mix", "delete",
                  "<Delete><Quiet>true</Quiet><Object><Key>keep/b</Key></Object></Delete>");
  EXPECT_NE(quiet.body.find("<Code>AccessDenied</Code>"), std::string::npos) << quiet.body;
  EXPECT_TRUE(Exists("/mix/keep/b"));
}

TEST_F(S3AuthorizationTest, CopyNeedsReadOnTheSource) {
  CreateBucket("cpbkt");
  Put("/cpbkt/secret", "top secret");
  Put("/cpbkt/mine/src", "mine");
  AddPolicy("own-prefix",
            R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow",)"
            R"("Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::cpbkt/mine/*"}]})");
  auth::Credentials owner = AddUser("owner", {"own-prefix"});
  ExpectAccessDenied(
      As(owner, "PUT", "/cpbkt/mine/stolen", "", "", {{"x-amz-copy-source", "/cpbkt/secret"}}));
  EXPECT_FALSE(Exists("/cpbkt/mine/stolen"));
  ExpectAccessDenied(
      As(owner, "PUT", "/cpbkt/elsewhere", "", "", {{"x-amz-copy-source", "/cpbkt/mine/src"}}));
  EXPECT_FALSE(Exists("/cpbkt/elsewhere"));
  auto allowed = As(owner, "PUT", "/cpbkt/mine/copy", "", "", {{"x-amz-copy-source", "/cpbkt/mine/src"}});
  EXPECT_EQ(allowed.status(), 200) << allowed.body;
  EXPECT_EQ(Call("GET", "/cpbkt/mine/copy").body, "mine");

  // UploadPartCopy: the same rule, and the denied part is never stored.
  auto created = As(owner, "POST", "/cpbkt/mine/mp", "uploads");
  ASSERT_EQ(created.status(), 200) << created.body;
  std::string upload_id = Between(created.body, "<UploadId>", "</UploadId>");
  ExpectAccessDenied(As(owner, "PUT", "/cpbkt/mine/mp", "partNumber=1&uploadId=" + upload_id, "",
                        {{"x-amz-copy-source", "/cpbkt/secret"}}));
  EXPECT_EQ(Call("GET", "/cpbkt/mine/mp", "uploadId=" + upload_id).body.find("<Part>"), std::string::npos);
}

TEST_F(S3AuthorizationTest, DisabledKeyOrUserStopsAtOnce) {
  CreateBucket("dis");
  Put("/dis/k", "v");
  auth::Credentials reader = AddUser("sleeper", {"readonly"});
  ASSERT_EQ(As(reader, "GET", "/dis/k").status(), 200);
  ASSERT_TRUE(stores_.identity->SetAccessKeyEnabled(reader.access_key, false).ok());
  auto refused = As(reader, "GET", "/dis/k");
  EXPECT_EQ(refused.status(), 403);
  EXPECT_NE(refused.body.find("<Code>InvalidAccessKeyId</Code>"), std::string::npos) << refused.body;
  ASSERT_TRUE(stores_.identity->SetAccessKeyEnabled(reader.access_key, true).ok());
  ASSERT_EQ(As(reader, "GET", "/dis/k").status(), 200);
  ASSERT_TRUE(stores_.identity->SetUserEnabled("sleeper", false).ok());
  EXPECT_EQ(As(reader, "GET", "/dis/k").status(), 403);
}

TEST_F(S3AuthorizationTest, ConditionKeysReachThePolicy) {
  CreateBucket("home");
  Put("/home/alice/notes", "a");
  Put("/home/bob/notes", "b");
  AddPolicy("own-home",
            R"({"Version":"2012-10-17","Statement":[)"
            R"({"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::home/${aws:username}/*",)"
            R"("Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}},)"
            R"({"Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::home",)"
            R"("Condition":{"StringLike":{"s3:prefix":"${aws:username}/*"}}}]})");
  auth::Credentials alice = AddUser("alice", {"own-home"});
  remote_address_ = "10.1.2.3:5000";
  EXPECT_EQ(As(alice, "GET", "/home/alice/notes").body, "a");
  ExpectAccessDenied(As(alice, "GET", "/home/bob/notes"));
  EXPECT_EQ(As(alice, "GET", "/home", "list-type=2&prefix=alice%2F").status(), 200);
  ExpectAccessDenied(As(alice, "GET", "/home", "list-type=2&prefix=bob%2F"));
  ExpectAccessDenied(As(alice, "GET", "/home", "list-type=2"));
  remote_address_ = "192.168.1.1:5000";
  ExpectAccessDenied(As(alice, "GET", "/home/alice/notes"));
}

TEST_F(S3AuthorizationTest, SessionCredentialsStayInsideTheirGrant) {
  CreateBucket("whbkt");
  Put("/whbkt/ns/tbl/data/f.parquet", "rows");
  Put("/whbkt/ns/other/data/g.parquet", "other rows");
  auth::Credentials engine = AddUser("engine", {"readwrite"});
  auth::Credentials session = Vend(engine, "whbkt", "ns/tbl/", false, Now());
  ASSERT_FALSE(session.session_token.empty());

  auto inside = As(session, "GET", "/whbkt/ns/tbl/data/f.parquet");
  EXPECT_EQ(inside.status(), 200) << inside.body;
  EXPECT_EQ(inside.body, "rows");
  EXPECT_EQ(last_principal_, "engine");
  ExpectAccessDenied(As(session, "GET", "/whbkt/ns/other/data/g.parquet"));
  ExpectAccessDenied(As(session, "PUT", "/whbkt/ns/tbl/data/new.parquet", "", "x"));
  EXPECT_FALSE(Exists("/whbkt/ns/tbl/data/new.parquet"));

  // Presigned URLs carry the token in the query.
  auto presigned = PresignedGet(session, "/whbkt/ns/tbl/data/f.parquet");
  EXPECT_EQ(presigned.status(), 200) << presigned.body;
  EXPECT_EQ(presigned.body, "rows");
  ExpectAccessDenied(PresignedGet(session, "/whbkt/ns/other/data/g.parquet"));

  // Read-write credentials write inside only.
  auth::Credentials writer = Vend(engine, "whbkt", "ns/tbl/", true, Now());
  EXPECT_EQ(As(writer, "PUT", "/whbkt/ns/tbl/data/new.parquet", "", "x").status(), 200);
  EXPECT_TRUE(Exists("/whbkt/ns/tbl/data/new.parquet"));
  ExpectAccessDenied(As(writer, "PUT", "/whbkt/ns/other/data/new.parquet", "", "x"));
  EXPECT_FALSE(Exists("/whbkt/ns/other/data/new.parquet"));
}

TEST_F(S3AuthorizationTest, SessionOfAReadonlyParentCannotWrite) {
  CreateBucket("wh2");
  auth::Credentials reader = AddUser("viewer", {"readonly"});
  auth::Credentials session = Vend(reader, "wh2", "t/", true, Now());  // write asked, not granted
  ExpectAccessDenied(As(session, "PUT", "/wh2/t/x", "", "x"));
  EXPECT_FALSE(Exists("/wh2/t/x"));
}

TEST_F(S3AuthorizationTest, ExpiredOrForgedSessionTokenFails) {
  CreateBucket("exp");
  Put("/exp/t/f", "v");
  auth::Credentials engine = AddUser("engine2", {"readwrite"});
  auth::Credentials stale = Vend(engine, "exp", "t/", false, Now() - std::chrono::hours(3));
  auto expired = As(stale, "GET", "/exp/t/f");
  EXPECT_EQ(expired.status(), 400) << expired.body;
  EXPECT_NE(expired.body.find("<Code>ExpiredToken</Code>"), std::string::npos) << expired.body;
  auto expired_presigned = PresignedGet(stale, "/exp/t/f");
  EXPECT_NE(expired_presigned.body.find("<Code>ExpiredToken</Code>"), std::string::npos)
      << expired_presigned.body;

  auth::Credentials forged = Vend(engine, "exp", "t/", false, Now());
  char& inside_payload = forged.session_token.at(auth::kSessionTokenPrefix.size() + 4);
  inside_payload = inside_payload == 'A' ? 'B' : 'A';
  auto invalid = As(forged, "GET", "/exp/t/f");
  EXPECT_EQ(invalid.status(), 400) << invalid.body;
  EXPECT_NE(invalid.body.find("<Code>InvalidToken</Code>"), std::string::npos) << invalid.body;

  // Disabling the parent key revokes its sessions at once.
  auth::Credentials fresh = Vend(engine, "exp", "t/", false, Now());
  ASSERT_EQ(As(fresh, "GET", "/exp/t/f").status(), 200);
  ASSERT_TRUE(stores_.identity->SetAccessKeyEnabled(engine.access_key, false).ok());
  EXPECT_NE(As(fresh, "GET", "/exp/t/f").status(), 200);
}

}  // namespace
}  // namespace serac::s3
