// S3 XML: a small streaming writer for responses, and parsers for the request bodies S3 defines
// (CompleteMultipartUpload, Delete, Tagging). pugixml stays inside s3_xml.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/hash.h"
#include "common/status.h"

namespace serac::s3 {

inline constexpr std::string_view kS3Namespace = "http://s3.amazonaws.com/doc/2006-03-01/";

// Appends elements to one document; text is escaped. Open/Close must nest.
class XmlWriter {
 public:
  XmlWriter();
  // Opens an element; the root element of a response passes the S3 namespace.
  void Open(std::string_view name, std::string_view xmlns = {});
  void Close();
  void Element(std::string_view name, std::string_view text);
  void Element(std::string_view name, uint64_t number);
  void Bool(std::string_view name, bool value) { Element(name, value ? "true" : "false"); }
  std::string Finish();

 private:
  std::string out_;
  std::vector<std::string> open_;
};

// Every parser below is strict: exactly one root element of the expected name, nothing but
// whitespace (or comments) around it, no DOCTYPE and no entity references beyond XML's own.

struct CompletedPart {
  uint32_t part_number = 0;
  std::string etag;                                    // unquoted
  std::map<ChecksumAlgorithm, std::string> checksums;  // base64 values the client listed
};

// <CompleteMultipartUpload><Part><PartNumber/><ETag/>[<ChecksumCRC32/>...]</Part>...
// kMalformedDocument on bad XML, no parts, or a part without a valid number / ETag. Order is kept
// (the caller checks it).
Result<std::vector<CompletedPart>> ParseCompleteMultipartUpload(std::string_view xml);

struct DeleteTarget {
  std::string key;
  std::string version_id;  // "" when the <Object> names no VersionId
};
struct DeleteRequest {
  bool quiet = false;
  std::vector<DeleteTarget> objects;
};
// <Delete><Quiet/>?<Object><Key/>[<VersionId/>]</Object>...</Delete>; kMalformedDocument on bad XML,
// no objects, or more than limits::kKeysPerDeleteMax.
Result<DeleteRequest> ParseDeleteObjects(std::string_view xml);

using TagSet = std::vector<std::pair<std::string, std::string>>;
// <Tagging><TagSet><Tag><Key/><Value/></Tag>...</TagSet></Tagging>; kMalformedDocument on bad XML.
Result<TagSet> ParseTagging(std::string_view xml);

// Optional <CreateBucketConfiguration><LocationConstraint/>?</CreateBucketConfiguration>: returns
// the location constraint ("" when absent or the body is empty); kMalformedDocument on bad XML.
Result<std::string> ParseCreateBucketConfiguration(std::string_view xml);

}  // namespace serac::s3
