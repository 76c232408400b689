#include "s3/s3_xml.h"

#include <gtest/gtest.h>

#include <functional>

namespace serac::s3 {
namespace {

TEST(XmlWriter, EscapesAndNests) {
  XmlWriter xml;
  xml.Open("Root", kS3Namespace);
  xml.Element("Key", "a<b>&\"c'");
  xml.Element("Size", uint64_t{42});
  xml.Bool("IsTruncated", false);
  std::string out = xml.Finish();  // closes Root
  EXPECT_NE(out.find("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"), std::string::npos);
  EXPECT_NE(out.find("<Root xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"), std::string::npos);
  EXPECT_NE(out.find("<Key>a&lt;b&gt;&amp;&quot;c&apos;</Key>"), std::string::npos);
  EXPECT_NE(out.find("<Size>42</Size><IsTruncated>false</IsTruncated></Root>"), std::string::npos);
}

TEST(CompleteXml, ParsesPartsInOrder) {
  auto parts = ParseCompleteMultipartUpload(
      "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Part><ETag>\"aaa\"</ETag><PartNumber>1</PartNumber><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part>"
      "<Part><PartNumber>3</PartNumber><ETag>bbb</ETag></Part>"
      "<Part><PartNumber>2</PartNumber><ETag>&quot;ccc&quot;</ETag></Part>"
      "</CompleteMultipartUpload>");
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_EQ((*parts)[0].part_number, 1u);
  EXPECT_EQ((*parts)[0].etag, "aaa");
  EXPECT_EQ((*parts)[0].checksums.at(ChecksumAlgorithm::kCrc32), "AAAAAA==");
  EXPECT_EQ((*parts)[1].part_number, 3u);
  EXPECT_EQ((*parts)[1].etag, "bbb");
  EXPECT_EQ((*parts)[2].etag, "ccc");
}

TEST(CompleteXml, RejectsMalformed) {
  for (const char* body : {
           "",
           "not xml",
           "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>a</ETag></Part>",  // unclosed
           "<Other><Part><PartNumber>1</PartNumber><ETag>a</ETag></Part></Other>",
           "<CompleteMultipartUpload></CompleteMultipartUpload>",
           "<CompleteMultipartUpload><Part><PartNumber>x</PartNumber><ETag>a</ETag></Part></"
           "CompleteMultipartUpload>",
           "<CompleteMultipartUpload><Part><PartNumber>0</PartNumber><ETag>a</ETag></Part></"
           "CompleteMultipartUpload>",
           "<CompleteMultipartUpload><Part><PartNumber>10001</PartNumber><ETag>a</ETag></Part></"
           "CompleteMultipartUpload>",
           "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>",
       }) {
    auto parts = ParseCompleteMultipartUpload(body);
    ASSERT_FALSE(parts.ok()) << body;
    EXPECT_EQ(parts.status().code(), ErrorCode::kMalformedDocument) << body;
  }
}

std::vector<std::string> KeysOf(const DeleteRequest& request) {
  std::vector<std::string> keys;
  for (const DeleteTarget& target : request.objects) keys.push_back(target.key);
  return keys;
}

TEST(DeleteXml, ParsesKeysAndQuiet) {
  auto request = ParseDeleteObjects(
      "<Delete><Quiet>true</Quiet><Object><Key>a b</Key></Object><Object><Key> </Key>"
      "<VersionId>null</VersionId></Object><Object><Key>x&amp;y</Key></Object></Delete>");
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_TRUE(request->quiet);
  ASSERT_EQ(request->objects.size(), 3u);
  EXPECT_EQ(request->objects[0].key, "a b");
  EXPECT_EQ(request->objects[1].key, " ");
  EXPECT_EQ(request->objects[2].key, "x&y");
  EXPECT_EQ(request->objects[0].version_id, "");
  EXPECT_EQ(request->objects[1].version_id, "null");
  EXPECT_EQ(request->objects[2].version_id, "");
  auto loud = ParseDeleteObjects("<Delete><Object><Key>k</Key></Object></Delete>");
  ASSERT_TRUE(loud.ok());
  EXPECT_FALSE(loud->quiet);
}

TEST(DeleteXml, RejectsMalformedAndTooMany) {
  EXPECT_EQ(ParseDeleteObjects("<Delete>").status().code(), ErrorCode::kMalformedDocument);
  EXPECT_EQ(ParseDeleteObjects("<Delete></Delete>").status().code(), ErrorCode::kMalformedDocument);
  EXPECT_EQ(ParseDeleteObjects("<Delete><Object></Object></Delete>").status().code(),
            ErrorCode::kMalformedDocument);
  std::string many = "<Delete>";
  for (int i = 0; i < 1001; ++i) many += "<Object><Key>k" + std::to_string(i) + "</Key></Object>";
  many += "</Delete>";
  EXPECT_EQ(ParseDeleteObjects(many).status().code(), ErrorCode::kMalformedDocument);
}

TEST(TaggingXml, Parses) {
  auto tags = ParseTagging(
      "<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag>"
      "<Tag><Key>b</Key><Value></Value></Tag></TagSet></Tagging>");
  ASSERT_TRUE(tags.ok());
  ASSERT_EQ(tags->size(), 2u);
  EXPECT_EQ((*tags)[0], (std::pair<std::string, std::string>("a", "1")));
  EXPECT_EQ((*tags)[1].second, "");
  EXPECT_FALSE(ParseTagging("<Tagging></Tagging>").ok());
  EXPECT_FALSE(ParseTagging("<Tagging><TagSet><Tag><Value>1</Value></Tag></TagSet></Tagging>").ok());
}

// Every request body is parsed strictly, so a document a lenient parser would half-read (keeping
// the first element and skipping the rest) is refused before anything happens.
TEST(StrictXml, RefusesTrailingContentDoctypeAndEntities) {
  const std::string delete_body = "<Delete><Object><Key>k</Key></Object></Delete>";
  const std::string tagging_body =
      "<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tagging>";
  const std::string complete_body =
      "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>a</ETag></Part></"
      "CompleteMultipartUpload>";
  const std::string bucket_body =
      "<CreateBucketConfiguration><LocationConstraint>eu-west-1</LocationConstraint>"
      "</CreateBucketConfiguration>";
  auto all_refuse = [&](const std::function<std::string(const std::string&)>& mutate, const char* what) {
    EXPECT_EQ(ParseDeleteObjects(mutate(delete_body)).status().code(), ErrorCode::kMalformedDocument) << what;
    EXPECT_EQ(ParseTagging(mutate(tagging_body)).status().code(), ErrorCode::kMalformedDocument) << what;
    EXPECT_EQ(ParseCompleteMultipartUpload(mutate(complete_body)).status().code(),
              ErrorCode::kMalformedDocument)
        << what;
    EXPECT_EQ(ParseCreateBucketConfiguration(mutate(bucket_body)).status().code(),
              ErrorCode::kMalformedDocument)
        << what;
  };
  all_refuse([](const std::string& body) { return body + "<trailing/>"; }, "second root element");
  all_refuse([](const std::string& body) { return body + "junk"; }, "trailing text");
  all_refuse([](const std::string& body) { return "junk" + body; }, "leading text");
  all_refuse([](const std::string& body) { return "<!DOCTYPE x [<!ENTITY e \"v\">]>" + body; }, "DOCTYPE");
  all_refuse([](const std::string& body) { return "<Wrapper>" + body + "</Wrapper>"; }, "wrong root");
  all_refuse([](const std::string& body) { return "<Other/>" + body; }, "element before the root");
  EXPECT_EQ(ParseDeleteObjects("<Delete><Object><Key>&e;</Key></Object></Delete>").status().code(),
            ErrorCode::kMalformedDocument);
  EXPECT_EQ(ParseDeleteObjects("<Delete><Object><Key>a & b</Key></Object></Delete>").status().code(),
            ErrorCode::kMalformedDocument);

  // Whitespace, comments and the XML declaration around the root stay fine, as do predefined and
  // numeric references and '&' inside CDATA.
  auto fine = ParseDeleteObjects(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- a & b -->\n"
      "<Delete><Object><Key>&lt;&#65;&#x42;</Key></Object><Object><Key><![CDATA[&c]]></Key></Object>"
      "</Delete>\n\r\n");
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ(KeysOf(*fine), (std::vector<std::string>{"<AB", "&c"}));
}

TEST(CreateBucketXml, OptionalBodyAndLocation) {
  EXPECT_EQ(ParseCreateBucketConfiguration("").value(), "");
  EXPECT_EQ(ParseCreateBucketConfiguration(" \n").value(), "");
  EXPECT_EQ(ParseCreateBucketConfiguration(
                "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                "<LocationConstraint>eu-west-1</LocationConstraint>"
                "</CreateBucketConfiguration>")
                .value(),
            "eu-west-1");
  EXPECT_EQ(ParseCreateBucketConfiguration("<CreateBucketConfiguration/>").value(), "");
  EXPECT_FALSE(ParseCreateBucketConfiguration("<CreateBucketConfiguration>").ok());
}

}  // namespace
}  // namespace serac::s3
