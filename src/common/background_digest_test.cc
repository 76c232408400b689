#include "common/background_digest.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>

#include "common/hash.h"

namespace serac {
namespace {

std::string RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 generator(seed);
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(generator());
  return bytes;
}

TEST(BackgroundDigestTest, SameDigestAsInlineForAnySplit) {
  std::mt19937 generator(11);
  // Tiny stages mean a worker per few bytes, so they get a short input.
  for (auto [stage_bytes, input_bytes] : {std::pair<size_t, size_t>{1, 2'001},
                                          {7, 20'011},
                                          {4096, 1'000'003},
                                          {65536, 1'000'003},
                                          {2'000'000, 1'000'003}}) {
    const std::string input = RandomBytes(input_bytes, static_cast<uint32_t>(stage_bytes));
    Digest inline_md5(Digest::Algorithm::kMd5);
    inline_md5.Update(input.data(), input.size());
    const std::string expected = inline_md5.Finish();

    Digest md5(Digest::Algorithm::kMd5);
    BackgroundDigest background([&](const char* data, size_t size) { md5.Update(data, size); }, stage_bytes);
    size_t offset = 0;
    while (offset < input.size()) {
      size_t step = std::min<size_t>(input.size() - offset, generator() % (input_bytes / 3 + 1));
      background.Update(input.data() + offset, step);
      offset += step;
    }
    background.Drain();
    EXPECT_EQ(md5.Finish(), expected) << "stage_bytes=" << stage_bytes;
  }
}

TEST(BackgroundDigestTest, ConsumesOnAnotherThreadInOrder) {
  std::string seen;
  std::thread::id caller = std::this_thread::get_id();
  bool ran_elsewhere = true;
  {
    BackgroundDigest background(
        [&](const char* data, size_t size) {
          if (std::this_thread::get_id() == caller) ran_elsewhere = false;
          seen.append(data, size);
        },
        3);
    background.Update("abcdefgh", 8);
    background.Update("", 0);
    background.Update("ij", 2);
    background.Drain();
    EXPECT_EQ(seen, "abcdefghij");
    background.Update("kl", 2);
    background.Drain();
  }
  EXPECT_EQ(seen, "abcdefghijkl");
  EXPECT_TRUE(ran_elsewhere);
}

TEST(BackgroundDigestTest, AbandonedWithoutDrainStopsCleanly) {
  size_t consumed = 0;
  {
    BackgroundDigest background([&](const char*, size_t size) { consumed += size; }, 4);
    background.Update("0123456789", 10);  // two full stages handed over, two bytes still staged
  }
  EXPECT_EQ(consumed, 8u);
}

}  // namespace
}  // namespace serac
