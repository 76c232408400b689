#include "common/zstd.h"

#include <gtest/gtest.h>

#include <string>

namespace serac::zstd {
namespace {

TEST(ZstdTest, AFrameComesBackAsTheBytesItHolds) {
  std::string text;
  for (int i = 0; i < 500; ++i)
    text += R"({"metadata-file":"s3://w/t/metadata/)" + std::to_string(i) + R"(.json"},)";
  std::string frame = Compress(text, 1);
  EXPECT_LT(frame.size() * 4, text.size());  // repetitive JSON shrinks several times over
  Result<std::string> back = Decompress(frame, text.size());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, text);
  Result<std::string> empty = Decompress(Compress("", 1), 0);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(*empty, "");
}

TEST(ZstdTest, AWrongSizeOrDamagedFrameIsAnError) {
  const std::string text(4096, 'a');
  std::string frame = Compress(text, 1);
  EXPECT_EQ(Decompress(frame, text.size() - 1).status().code(), ErrorCode::kInternal);
  EXPECT_EQ(Decompress("not a frame", text.size()).status().code(), ErrorCode::kInternal);
  std::string cut = frame.substr(0, frame.size() - 2);
  EXPECT_EQ(Decompress(cut, text.size()).status().code(), ErrorCode::kInternal);
}

}  // namespace
}  // namespace serac::zstd
