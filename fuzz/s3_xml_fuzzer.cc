// Fuzzes every S3 XML request body serac reads. The first byte picks the parser:
//   'c' CompleteMultipartUpload   'd' Delete (DeleteObjects)
//   't' Tagging                   'b' CreateBucketConfiguration
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "s3/s3_xml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return -1;
  const std::string_view xml(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0]) {
    case 'c':
      (void)serac::s3::ParseCompleteMultipartUpload(xml);
      return 0;
    case 'd':
      (void)serac::s3::ParseDeleteObjects(xml);
      return 0;
    case 't':
      (void)serac::s3::ParseTagging(xml);
      return 0;
    case 'b':
      (void)serac::s3::ParseCreateBucketConfiguration(xml);
      return 0;
    default:
      return -1;
  }
}
