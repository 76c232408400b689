#include "s3/s3_multipart_checksum.h"

#include "common/encoding.h"
#include "common/hash.h"

namespace serac::s3 {

namespace {

// Big-endian digest bytes ↔ integer, as x-amz-checksum-crc* values are encoded.
std::optional<uint64_t> DigestToInteger(const std::string& raw, size_t width) {
  if (raw.size() != width) return std::nullopt;
  uint64_t value = 0;
  for (unsigned char byte : raw) value = (value << 8) | byte;
  return value;
}

std::string IntegerToDigest(uint64_t value, size_t width) {
  std::string raw(width, '\0');
  for (size_t i = 0; i < width; ++i) raw[width - 1 - i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  return raw;
}

std::optional<std::string> CombineFullObject(ChecksumAlgorithm algorithm,
                                             const std::vector<std::string>& digests,
                                             const std::vector<meta::PartRecord>& parts) {
  size_t width = algorithm == ChecksumAlgorithm::kCrc64Nvme ? 8 : 4;
  uint64_t combined = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    auto crc = DigestToInteger(digests[i], width);
    if (!crc) return std::nullopt;
    if (i == 0) {
      combined = *crc;
    } else if (algorithm == ChecksumAlgorithm::kCrc32) {
      combined = Crc32Combine(static_cast<uint32_t>(combined), static_cast<uint32_t>(*crc), parts[i].size);
    } else if (algorithm == ChecksumAlgorithm::kCrc32c) {
      combined = Crc32cCombine(static_cast<uint32_t>(combined), static_cast<uint32_t>(*crc), parts[i].size);
    } else if (algorithm == ChecksumAlgorithm::kCrc64Nvme) {
      combined = Crc64NvmeCombine(combined, *crc, parts[i].size);
    } else {
      return std::nullopt;  // SHA digests cannot be combined
    }
  }
  return Base64Encode(IntegerToDigest(combined, width));
}

}  // namespace

std::optional<meta::ChecksumRecord> MultipartChecksum(const std::string& algorithm_name,
                                                      const std::string& type,
                                                      const std::vector<meta::PartRecord>& parts) {
  if (algorithm_name.empty() || parts.empty()) return std::nullopt;
  auto algorithm = ParseChecksumAlgorithm(algorithm_name);
  if (!algorithm) return std::nullopt;
  std::vector<std::string> digests;
  for (const meta::PartRecord& part : parts) {
    auto raw = Base64Decode(part.checksum_value);
    if (part.checksum_value.empty() || !raw) return std::nullopt;
    digests.push_back(std::move(*raw));
  }
  meta::ChecksumRecord record;
  record.algorithm = std::string(ChecksumAlgorithmName(*algorithm));
  record.type = type.empty() ? "COMPOSITE" : type;
  if (record.type == "FULL_OBJECT") {
    auto value = CombineFullObject(*algorithm, digests, parts);
    if (!value) return std::nullopt;
    record.value = std::move(*value);
    return record;
  }
  Checksummer of_digests(*algorithm);
  for (const std::string& digest : digests) of_digests.Update(digest.data(), digest.size());
  record.value = Base64Encode(of_digests.Finish()) + "-" + std::to_string(parts.size());
  return record;
}

}  // namespace serac::s3
