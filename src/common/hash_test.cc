#include "common/hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>

#include "common/encoding.h"
#include "common/hash_crc_clmul_internal.h"

namespace serac {
namespace {

template <size_t N>
std::string Hex(const std::array<uint8_t, N>& digest) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), N));
}

std::string DigestHex(Digest::Algorithm algorithm, std::string_view data) {
  Digest digest(algorithm);
  digest.Update(data);
  return HexEncode(digest.Finish());
}

// Bit-at-a-time reference, deliberately independent of the table and hardware paths.
template <typename T>
T ReferenceReflectedCrc(std::string_view data, T poly) {
  T crc = ~T{0};
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ poly : crc >> 1;
  }
  return ~crc;
}

std::string RandomData(std::mt19937_64& rng, size_t size) {
  std::string data(size, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  return data;
}

constexpr std::string_view kCheckInput = "123456789";

TEST(HashTest, Md5KnownVectors) {
  EXPECT_EQ(Hex(Md5("")), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Hex(Md5("abc")), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(DigestHex(Digest::Algorithm::kMd5, "abc"), "900150983cd24fb0d6963f7d28e17f72");
}

TEST(HashTest, Sha1AndSha256KnownVectors) {
  EXPECT_EQ(DigestHex(Digest::Algorithm::kSha1, ""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(DigestHex(Digest::Algorithm::kSha1, "abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex(Sha256("abc")), Sha256Hex("abc"));
}

TEST(HashTest, DigestStreamsAndResetsAfterFinish) {
  Digest digest(Digest::Algorithm::kSha256);
  digest.Update("a");
  digest.Update("");
  digest.Update("bc");
  EXPECT_EQ(HexEncode(digest.Finish()), Sha256Hex("abc"));
  // Finish resets: the next digest starts from empty.
  EXPECT_EQ(HexEncode(digest.Finish()), Sha256Hex(""));
  Digest moved = std::move(digest);
  moved.Update("abc");
  EXPECT_EQ(HexEncode(moved.Finish()), Sha256Hex("abc"));
}

TEST(HashTest, HmacRfc4231AndRfc2202) {
  // RFC 4231 test cases 1 and 2.
  EXPECT_EQ(Hex(HmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(Hex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // RFC 2202 test case 2.
  EXPECT_EQ(HexEncode(HmacSha1("Jefe", "what do ya want for nothing?")),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
  // An empty key is legal and must not be confused with "reuse the previous key".
  EXPECT_EQ(Hex(HmacSha256("", "")), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  // Keys longer than the block are hashed first (RFC 4231 test case 6, RFC 2202 test case 6);
  // a key of exactly one block is not.
  const std::string block_size_test = "Test Using Larger Than Block-Size Key - Hash Key First";
  EXPECT_EQ(Hex(HmacSha256(std::string(131, '\xaa'), block_size_test)),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(HexEncode(HmacSha1(std::string(80, '\xaa'), block_size_test)),
            "aa4ae5e15272d00e95705637ce8a3b55ed402112");
  std::string counting_key;
  for (int i = 0; i < 65; ++i) counting_key.push_back(static_cast<char>(i));
  EXPECT_EQ(Hex(HmacSha256(counting_key.substr(0, 64), "exactly one block")),
            "6a0b99c9142782e19009e62b6ac5c4261cad2dddfa6f6a369a1414208408abd3");
  EXPECT_EQ(Hex(HmacSha256(counting_key, "one byte more")),
            "c5934a1c8e3975a085bf241e2f7955c6272ce3443bdbffdbf71aafd3843c3068");
}

TEST(HashTest, CrcCheckValues) {
  EXPECT_EQ(Crc32Update(0, kCheckInput.data(), kCheckInput.size()), 0xCBF43926u);
  EXPECT_EQ(Crc32cUpdate(0, kCheckInput.data(), kCheckInput.size()), 0xE3069283u);
  EXPECT_EQ(Crc64NvmeUpdate(0, kCheckInput.data(), kCheckInput.size()), 0xAE8B14860A799888ull);
  EXPECT_EQ(Crc32Update(0, "", 0), 0u);
  EXPECT_EQ(Crc32cUpdate(0, "", 0), 0u);
  EXPECT_EQ(Crc64NvmeUpdate(0, "", 0), 0u);
}

TEST(HashTest, CrcMatchesBitwiseReferenceOnAllLengthsAndAlignments) {
  std::mt19937_64 rng(7);
  std::string data = RandomData(rng, 4096 + 7);
  for (size_t offset : {0, 1, 3, 7}) {
    for (size_t length : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4096}) {
      std::string_view piece(data.data() + offset, length);
      ASSERT_EQ(Crc32Update(0, piece.data(), piece.size()),
                ReferenceReflectedCrc<uint32_t>(piece, 0xEDB88320u))
          << offset << "+" << length;
      ASSERT_EQ(Crc32cUpdate(0, piece.data(), piece.size()),
                ReferenceReflectedCrc<uint32_t>(piece, 0x82F63B78u))
          << offset << "+" << length;
      ASSERT_EQ(Crc64NvmeUpdate(0, piece.data(), piece.size()),
                ReferenceReflectedCrc<uint64_t>(piece, 0x9A6C9329AC4BC9B5ull))
          << offset << "+" << length;
    }
  }
}

TEST(HashTest, CrcUpdateIsIncremental) {
  std::mt19937_64 rng(11);
  std::string data = RandomData(rng, 10000);
  uint32_t crc32 = 0, crc32c = 0;
  uint64_t crc64 = 0;
  for (size_t pos = 0; pos < data.size();) {
    size_t step = std::min<size_t>(rng() % 300, data.size() - pos);
    crc32 = Crc32Update(crc32, data.data() + pos, step);
    crc32c = Crc32cUpdate(crc32c, data.data() + pos, step);
    crc64 = Crc64NvmeUpdate(crc64, data.data() + pos, step);
    pos += step;
  }
  EXPECT_EQ(crc32, Crc32Update(0, data.data(), data.size()));
  EXPECT_EQ(crc32c, Crc32cUpdate(0, data.data(), data.size()));
  EXPECT_EQ(crc64, Crc64NvmeUpdate(0, data.data(), data.size()));
}

TEST(HashTest, CombineEqualsCrcOfConcatenation) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 50; ++round) {
    std::string data = RandomData(rng, rng() % 5000);
    size_t split = data.empty() ? 0 : rng() % (data.size() + 1);
    std::string_view a(data.data(), split);
    std::string_view b(data.data() + split, data.size() - split);
    EXPECT_EQ(Crc32Combine(Crc32Update(0, a.data(), a.size()), Crc32Update(0, b.data(), b.size()), b.size()),
              Crc32Update(0, data.data(), data.size()));
    EXPECT_EQ(
        Crc32cCombine(Crc32cUpdate(0, a.data(), a.size()), Crc32cUpdate(0, b.data(), b.size()), b.size()),
        Crc32cUpdate(0, data.data(), data.size()));
    EXPECT_EQ(Crc64NvmeCombine(Crc64NvmeUpdate(0, a.data(), a.size()), Crc64NvmeUpdate(0, b.data(), b.size()),
                               b.size()),
              Crc64NvmeUpdate(0, data.data(), data.size()));
  }
}

TEST(HashTest, CombineHandlesLongSecondPartWithoutReadingIt) {
  // 1 MiB of zero bytes: compare against a direct computation.
  std::string zeros(1 << 20, '\0');
  uint64_t a = Crc64NvmeUpdate(0, "abc", 3);
  uint64_t b = Crc64NvmeUpdate(0, zeros.data(), zeros.size());
  std::string joined = "abc" + zeros;
  EXPECT_EQ(Crc64NvmeCombine(a, b, zeros.size()), Crc64NvmeUpdate(0, joined.data(), joined.size()));
  uint32_t c = Crc32cUpdate(0, "abc", 3);
  uint32_t d = Crc32cUpdate(0, zeros.data(), zeros.size());
  EXPECT_EQ(Crc32cCombine(c, d, zeros.size()), Crc32cUpdate(0, joined.data(), joined.size()));
  uint32_t e = Crc32Update(0, "abc", 3);
  uint32_t f = Crc32Update(0, zeros.data(), zeros.size());
  EXPECT_EQ(Crc32Combine(e, f, zeros.size()), Crc32Update(0, joined.data(), joined.size()));
}

// The carry-less multiply path (hash_crc_clmul.cc) against the portable one (zlib for CRC32,
// slice-by-8 for CRC64NVME). Both are reachable through the private header; the public functions
// pick one per CPU.

TEST(HashTest, CrcBothPathsGiveCheckValues) {
  EXPECT_EQ(hash_internal::Crc32Portable(0, kCheckInput.data(), kCheckInput.size()), 0xCBF43926u);
  EXPECT_EQ(hash_internal::Crc64NvmePortable(0, kCheckInput.data(), kCheckInput.size()),
            0xAE8B14860A799888ull);
  if (!hash_internal::CpuHasClmul()) GTEST_SKIP() << "no PCLMULQDQ/SSE4.1 on this CPU";
  EXPECT_EQ(hash_internal::Crc32Clmul(0, kCheckInput.data(), kCheckInput.size()), 0xCBF43926u);
  EXPECT_EQ(hash_internal::Crc64NvmeClmul(0, kCheckInput.data(), kCheckInput.size()), 0xAE8B14860A799888ull);
  // Long enough for the folding kernel: the check string repeated, against the bitwise reference.
  std::string repeated;
  for (int i = 0; i < 57; ++i) repeated += kCheckInput;
  EXPECT_EQ(hash_internal::Crc32Clmul(0, repeated.data(), repeated.size()),
            ReferenceReflectedCrc<uint32_t>(repeated, 0xEDB88320u));
  EXPECT_EQ(hash_internal::Crc64NvmeClmul(0, repeated.data(), repeated.size()),
            ReferenceReflectedCrc<uint64_t>(repeated, 0x9A6C9329AC4BC9B5ull));
}

TEST(HashTest, CrcClmulMatchesPortablePathOnEveryLength) {
  if (!hash_internal::CpuHasClmul()) GTEST_SKIP() << "no PCLMULQDQ/SSE4.1 on this CPU";
  std::mt19937_64 rng(2024);
  std::string data = RandomData(rng, 4096 + 64);
  for (size_t length = 0; length <= 4096; ++length) {
    const char* piece = data.data() + rng() % 64;  // every alignment
    const uint64_t start = rng();                  // any running value, not just 0
    ASSERT_EQ(hash_internal::Crc32Clmul(static_cast<uint32_t>(start), piece, length),
              hash_internal::Crc32Portable(static_cast<uint32_t>(start), piece, length))
        << "length " << length;
    ASSERT_EQ(hash_internal::Crc64NvmeClmul(start, piece, length),
              hash_internal::Crc64NvmePortable(start, piece, length))
        << "length " << length;
  }
}

TEST(HashTest, CrcClmulMatchesBitwiseReference) {
  if (!hash_internal::CpuHasClmul()) GTEST_SKIP() << "no PCLMULQDQ/SSE4.1 on this CPU";
  std::mt19937_64 rng(5);
  std::string data = RandomData(rng, 70000);
  for (size_t length : {64, 65, 79, 80, 127, 128, 129, 191, 192, 255, 256, 257, 1000, 4111, 65536 + 13}) {
    std::string_view piece(data.data() + length % 13, length);
    ASSERT_EQ(hash_internal::Crc32Clmul(0, piece.data(), piece.size()),
              ReferenceReflectedCrc<uint32_t>(piece, 0xEDB88320u))
        << length;
    ASSERT_EQ(hash_internal::Crc64NvmeClmul(0, piece.data(), piece.size()),
              ReferenceReflectedCrc<uint64_t>(piece, 0x9A6C9329AC4BC9B5ull))
        << length;
  }
}

TEST(HashTest, CrcClmulIsIncrementalAtRandomSplits) {
  if (!hash_internal::CpuHasClmul()) GTEST_SKIP() << "no PCLMULQDQ/SSE4.1 on this CPU";
  std::mt19937_64 rng(99);
  std::string data = RandomData(rng, 300000);
  for (int round = 0; round < 200; ++round) {
    const size_t offset = rng() % 64;
    const size_t length = rng() % (round < 150 ? 3000 : data.size() - offset);
    std::string_view whole(data.data() + offset, length);
    uint32_t crc32 = 0;
    uint64_t crc64 = 0;
    for (size_t pos = 0; pos < whole.size();) {
      // Mostly short and odd pieces, sometimes long ones.
      size_t step = (rng() % 4 == 0) ? rng() % 20000 : rng() % 200;
      step = std::min(step, whole.size() - pos);
      crc32 = hash_internal::Crc32Clmul(crc32, whole.data() + pos, step);
      crc64 = hash_internal::Crc64NvmeClmul(crc64, whole.data() + pos, step);
      pos += step;
    }
    ASSERT_EQ(crc32, hash_internal::Crc32Portable(0, whole.data(), whole.size())) << round;
    ASSERT_EQ(crc64, hash_internal::Crc64NvmePortable(0, whole.data(), whole.size())) << round;
    ASSERT_EQ(crc32, Crc32Update(0, whole.data(), whole.size())) << round;
    ASSERT_EQ(crc64, Crc64NvmeUpdate(0, whole.data(), whole.size())) << round;
  }
}

TEST(HashTest, CrcCombineAgreesWithClmulPath) {
  if (!hash_internal::CpuHasClmul()) GTEST_SKIP() << "no PCLMULQDQ/SSE4.1 on this CPU";
  std::mt19937_64 rng(31);
  std::string data = RandomData(rng, 200000);
  for (int round = 0; round < 30; ++round) {
    const size_t split = rng() % (data.size() + 1);
    const char* b = data.data() + split;
    const size_t length_b = data.size() - split;
    EXPECT_EQ(Crc32Combine(hash_internal::Crc32Clmul(0, data.data(), split),
                           hash_internal::Crc32Clmul(0, b, length_b), length_b),
              hash_internal::Crc32Portable(0, data.data(), data.size()));
    EXPECT_EQ(Crc64NvmeCombine(hash_internal::Crc64NvmeClmul(0, data.data(), split),
                               hash_internal::Crc64NvmeClmul(0, b, length_b), length_b),
              hash_internal::Crc64NvmePortable(0, data.data(), data.size()));
  }
}

// Not a pass/fail check: prints the throughput of each path on 64 MiB, in CPU time so that other
// load on the machine does not count.
// A measurement, not a check: run with --gtest_also_run_disabled_tests.
TEST(HashTest, DISABLED_CrcThroughput) {
  std::mt19937_64 rng(1);
  const std::string data = RandomData(rng, size_t{64} << 20);
  auto measure = [&](const char* name, auto&& run) {
    volatile uint64_t sink = run();  // warm-up
    double best_seconds = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
      const std::clock_t start = std::clock();
      sink = sink + run();
      best_seconds = std::min(best_seconds, static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC);
    }
    std::printf("  %-22s %6.0f MB/s\n", name,
                static_cast<double>(data.size()) / 1e6 / std::max(best_seconds, 1e-6));
  };
  measure("CRC32 portable",
          [&] { return uint64_t{hash_internal::Crc32Portable(0, data.data(), data.size())}; });
  measure("CRC64NVME portable",
          [&] { return hash_internal::Crc64NvmePortable(0, data.data(), data.size()); });
  if (hash_internal::CpuHasClmul()) {
    measure("CRC32 clmul", [&] { return uint64_t{hash_internal::Crc32Clmul(0, data.data(), data.size())}; });
    measure("CRC64NVME clmul", [&] { return hash_internal::Crc64NvmeClmul(0, data.data(), data.size()); });
  }
  measure("CRC32C (sse4.2)", [&] { return uint64_t{Crc32cUpdate(0, data.data(), data.size())}; });
}

TEST(HashTest, ChecksummerReturnsBigEndianDigests) {
  Checksummer crc32(ChecksumAlgorithm::kCrc32);
  crc32.Update(kCheckInput.data(), 4);
  crc32.Update(kCheckInput.data() + 4, kCheckInput.size() - 4);
  EXPECT_EQ(HexEncode(crc32.Finish()), "cbf43926");

  Checksummer crc32c(ChecksumAlgorithm::kCrc32c);
  crc32c.Update(kCheckInput.data(), kCheckInput.size());
  EXPECT_EQ(HexEncode(crc32c.Finish()), "e3069283");

  Checksummer crc64(ChecksumAlgorithm::kCrc64Nvme);
  crc64.Update(kCheckInput.data(), kCheckInput.size());
  EXPECT_EQ(HexEncode(crc64.Finish()), "ae8b14860a799888");

  Checksummer sha1(ChecksumAlgorithm::kSha1);
  sha1.Update("abc", 3);
  EXPECT_EQ(HexEncode(sha1.Finish()), "a9993e364706816aba3e25717850c26c9cd0d89d");

  Checksummer sha256(ChecksumAlgorithm::kSha256);
  sha256.Update("abc", 3);
  Checksummer moved = std::move(sha256);
  EXPECT_EQ(moved.algorithm(), ChecksumAlgorithm::kSha256);
  EXPECT_EQ(HexEncode(moved.Finish()), Sha256Hex("abc"));
}

TEST(HashTest, ChecksumAlgorithmNamesRoundTrip) {
  for (ChecksumAlgorithm algorithm :
       {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kCrc64Nvme,
        ChecksumAlgorithm::kSha1, ChecksumAlgorithm::kSha256}) {
    EXPECT_EQ(ParseChecksumAlgorithm(ChecksumAlgorithmName(algorithm)), algorithm);
    EXPECT_EQ(ParseChecksumAlgorithm(AsciiLower(ChecksumAlgorithmName(algorithm))), algorithm);
  }
  EXPECT_EQ(ParseChecksumAlgorithm("Crc32C"), ChecksumAlgorithm::kCrc32c);
  EXPECT_EQ(ParseChecksumAlgorithm("md5"), std::nullopt);
  EXPECT_EQ(ParseChecksumAlgorithm("crc"), std::nullopt);
  EXPECT_EQ(ParseChecksumAlgorithm(""), std::nullopt);
}

TEST(HashTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace serac
