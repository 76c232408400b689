// The checksum of a completed multipart object from its parts' checksums: composite (hash of the
// part digests, "-N") or full-object (CRCs combined with part lengths, no re-read). Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "meta/meta_store.h"

namespace serac::s3 {

// nullopt when the upload has no algorithm or some part lacks a checksum (AWS is lenient there).
std::optional<meta::ChecksumRecord> MultipartChecksum(const std::string& algorithm_name,
                                                      const std::string& type,
                                                      const std::vector<meta::PartRecord>& parts);

}  // namespace serac::s3
