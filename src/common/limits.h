// Every limit serac enforces, in one place, each named with its unit. Handlers cite these names in
// their error messages so a client learns which limit it hit.
#pragma once

#include <chrono>
#include <cstdint>

namespace serac::limits {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;
inline constexpr uint64_t kGiB = 1024 * kMiB;
inline constexpr uint64_t kTiB = 1024 * kGiB;

// HTTP.
inline constexpr uint64_t kRequestHeaderBytesMax = 16 * kKiB;    // request line + all header lines
inline constexpr uint32_t kRequestHeaderCountMax = 100;          // header fields per request
inline constexpr uint64_t kRequestTargetBytesMax = 8 * kKiB;     // method-independent URL length
inline constexpr uint64_t kXmlRequestBodyBytesMax = 2 * kMiB;    // DeleteObjects, CompleteMultipartUpload
inline constexpr uint64_t kJsonRequestBodyBytesMax = 16 * kMiB;  // catalog requests
inline constexpr uint32_t kConnectionsMax = 4096;                // open client connections
inline constexpr auto kIdleConnectionTimeout = std::chrono::seconds(60);   // keep-alive wait for next request
inline constexpr auto kHeaderReadTimeout = std::chrono::seconds(30);       // first byte to end of headers
inline constexpr auto kBodyStallTimeout = std::chrono::seconds(60);        // no body progress for this long
inline constexpr auto kResponseStallTimeout = std::chrono::seconds(60);    // client reads nothing for this long
inline constexpr auto kShutdownGracePeriod = std::chrono::seconds(30);     // in-flight requests on SIGTERM
inline constexpr uint64_t kIoBufferBytes = 256 * kKiB;                     // per-request streaming buffer

// S3 objects.
inline constexpr uint64_t kObjectKeyBytesMax = 1024;               // UTF-8 bytes of an object key
inline constexpr uint64_t kObjectBytesMax = 5 * kTiB;              // one object (multipart)
inline constexpr uint64_t kSinglePutBytesMax = 5 * kGiB;           // one PutObject or UploadPart body
inline constexpr uint64_t kPartBytesMin = 5 * kMiB;                // every multipart part but the last
inline constexpr uint32_t kPartNumberMax = 10000;                  // part numbers 1..10000
inline constexpr uint32_t kPartsPerUploadMax = 10000;
inline constexpr uint32_t kKeysPerListMax = 1000;                  // max-keys / max-uploads / max-parts cap
inline constexpr uint32_t kKeysPerDeleteMax = 1000;                // DeleteObjects batch
inline constexpr uint64_t kUserMetadataBytesMax = 2 * kKiB;        // all x-amz-meta-* names and values
inline constexpr uint64_t kInlineObjectBytesMax = 64 * kKiB;       // objects this small live in the MetaStore row
inline constexpr uint32_t kBucketNameBytesMin = 3;
inline constexpr uint32_t kBucketNameBytesMax = 63;

// Authentication.
inline constexpr auto kClockSkewMax = std::chrono::minutes(15);
inline constexpr auto kPresignedExpiryMax = std::chrono::seconds(604800);  // 7 days
inline constexpr uint64_t kAwsChunkSizeMin = 8 * kKiB;            // non-final aws-chunked chunk
inline constexpr uint64_t kAwsChunkHeaderBytesMax = 4 * kKiB;      // "<hex>;chunk-signature=...\r\n"
inline constexpr uint64_t kAwsTrailerBytesMax = 16 * kKiB;         // all trailer lines

}  // namespace serac::limits
