// Helpers shared by the MetaStore tests: temporary directories and record builders.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "meta/meta_store.h"

namespace serac::meta::testing {

#define SERAC_EXPECT_OK(expr)                          \
  do {                                                 \
    const ::serac::Status serac_s_ = (expr);           \
    EXPECT_TRUE(serac_s_.ok()) << serac_s_.ToString(); \
  } while (0)
#define SERAC_ASSERT_OK(expr)                          \
  do {                                                 \
    const ::serac::Status serac_s_ = (expr);           \
    ASSERT_TRUE(serac_s_.ok()) << serac_s_.ToString(); \
  } while (0)

// A fresh directory removed again on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "serac-meta-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline ObjectRecord MakeObject(const std::string& bucket, const std::string& key, const std::string& etag,
                               std::vector<Segment> segments = {}) {
  ObjectRecord object;
  object.bucket = bucket;
  object.key = key;
  object.etag = etag;
  object.mtime_ms = 1700000000000;
  object.segments = std::move(segments);
  for (const Segment& segment : object.segments) object.size += segment.size;
  return object;
}

inline std::vector<std::string> KeysOf(const std::vector<ObjectRecord>& objects) {
  std::vector<std::string> keys;
  for (const ObjectRecord& object : objects) keys.push_back(object.key);
  return keys;
}

}  // namespace serac::meta::testing
