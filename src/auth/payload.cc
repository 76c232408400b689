#include "auth/payload.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "auth/sigv4_internal.h"
#include "common/background_digest.h"
#include "common/encoding.h"
#include "common/limits.h"

namespace serac::auth {
namespace {

using internal::FindHeader;

constexpr std::string_view kChecksumHeaderPrefix = "x-amz-checksum-";

bool IsStreaming(PayloadMode mode) {
  return mode == PayloadMode::kStreamingSigned || mode == PayloadMode::kStreamingSignedTrailer ||
         mode == PayloadMode::kStreamingUnsignedTrailer;
}

bool HasChunkSignatures(PayloadMode mode) {
  return mode == PayloadMode::kStreamingSigned || mode == PayloadMode::kStreamingSignedTrailer;
}

bool CarriesTrailer(PayloadMode mode) {
  return mode == PayloadMode::kStreamingSignedTrailer || mode == PayloadMode::kStreamingUnsignedTrailer;
}

size_t ChecksumBytes(ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::kCrc32:
    case ChecksumAlgorithm::kCrc32c:
      return 4;
    case ChecksumAlgorithm::kCrc64Nvme:
      return 8;
    case ChecksumAlgorithm::kSha1:
      return 20;
    case ChecksumAlgorithm::kSha256:
      return 32;
  }
  return 0;
}

Result<std::string> DecodeChecksumValue(ChecksumAlgorithm algorithm, std::string_view value) {
  std::optional<std::string> raw = Base64Decode(TrimWhitespace(value));
  if (!raw || raw->size() != ChecksumBytes(algorithm)) {
    return Error(ErrorCode::kInvalidArgument,
                 "Value for " + std::string(ChecksumHeaderName(algorithm)) + " header is invalid.");
  }
  return std::move(*raw);
}

std::optional<uint64_t> ParseHexSize(std::string_view text) {
  if (text.empty() || text.size() > 16) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) return std::nullopt;
    value = value * 16 + static_cast<uint64_t>(digit);
  }
  return value;
}

Status MalformedChunked(std::string_view detail) {
  return Error(ErrorCode::kInvalidArgument, "Malformed aws-chunked body: " + std::string(detail));
}

// Buffered access to the raw body, for parsing aws-chunked framing. Chunk data is copied straight
// from the raw reader into the caller's buffer when nothing is buffered.
class RawInput {
 public:
  explicit RawInput(http::BodyReader& raw) : raw_(raw) {}

  // Up to `max` bytes of data; 0 at the end of the body.
  Result<size_t> ReadData(char* out, size_t max) {
    if (begin_ < end_) {
      size_t count = std::min(max, end_ - begin_);
      std::memcpy(out, buffer_.data() + begin_, count);
      begin_ += count;
      return count;
    }
    return raw_.Read(out, max);
  }

  // The next line without "\n" or "\r\n"; nullopt at the end of the body. A last line without a
  // terminator is returned as is. Lines longer than `bytes_max` are refused.
  Result<std::optional<std::string>> ReadLine(size_t bytes_max) {
    while (true) {
      std::string_view unread(buffer_.data() + begin_, end_ - begin_);
      size_t newline = unread.find('\n');
      if (newline != std::string_view::npos) {
        if (newline > bytes_max) return LineTooLong();
        std::string line(unread.substr(0, newline));
        begin_ += newline + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return std::optional<std::string>(std::move(line));
      }
      if (unread.size() > bytes_max) return LineTooLong();
      SERAC_ASSIGN_OR_RETURN(bool more, Fill());
      if (!more) {
        if (begin_ == end_) return std::optional<std::string>();
        std::string line(buffer_.data() + begin_, end_ - begin_);
        begin_ = end_;
        return std::optional<std::string>(std::move(line));
      }
    }
  }

 private:
  static Status LineTooLong() {
    return Error(ErrorCode::kLimitExceeded,
                 "An aws-chunked header or trailer line exceeds limits::kAwsChunkHeaderBytesMax / "
                 "kAwsTrailerBytesMax");
  }

  // Appends raw bytes to the buffer; false at the end of the body.
  Result<bool> Fill() {
    if (buffer_.empty()) buffer_.resize(kBufferBytes);
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == buffer_.size()) return Error(ErrorCode::kInternal, "aws-chunked line buffer full");
    SERAC_ASSIGN_OR_RETURN(size_t count, raw_.Read(buffer_.data() + end_, buffer_.size() - end_));
    end_ += count;
    return count > 0;
  }

  // Big enough for the longest line we accept, so a full buffer always holds a complete line.
  static constexpr size_t kBufferBytes =
      2 * std::max(limits::kAwsChunkHeaderBytesMax, limits::kAwsTrailerBytesMax);

  http::BodyReader& raw_;
  std::vector<char> buffer_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace

std::string_view ChecksumHeaderName(ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::kCrc32:
      return "x-amz-checksum-crc32";
    case ChecksumAlgorithm::kCrc32c:
      return "x-amz-checksum-crc32c";
    case ChecksumAlgorithm::kCrc64Nvme:
      return "x-amz-checksum-crc64nvme";
    case ChecksumAlgorithm::kSha1:
      return "x-amz-checksum-sha1";
    case ChecksumAlgorithm::kSha256:
      return "x-amz-checksum-sha256";
  }
  return "";
}

std::optional<ChecksumAlgorithm> ChecksumAlgorithmOfHeader(std::string_view name) {
  if (name.size() <= kChecksumHeaderPrefix.size() ||
      !AsciiEqualsIgnoreCase(name.substr(0, kChecksumHeaderPrefix.size()), kChecksumHeaderPrefix)) {
    return std::nullopt;
  }
  return ParseChecksumAlgorithm(name.substr(kChecksumHeaderPrefix.size()));
}

struct VerifyingBodyReader::Impl {
  enum class State { kChunkHeader, kChunkData, kChunkEnd, kTrailers, kDone };

  Impl(http::BodyReader& raw_reader, const VerifiedRequest& verified_request,
       const PayloadOptions& payload_options)
      : raw(raw_reader), input(raw_reader), verified(verified_request), options(payload_options) {}

  http::BodyReader& raw;
  RawInput input;
  VerifiedRequest verified;
  PayloadOptions options;

  std::optional<uint64_t> decoded_length;  // x-amz-decoded-content-length (aws-chunked)
  uint64_t limit = std::numeric_limits<uint64_t>::max();
  uint64_t bytes_out = 0;
  bool finished = false;
  Status failure;

  std::unique_ptr<Digest> body_sha256;  // kSignedHex; not for a body known to be empty
  bool body_known_empty = false;        // kSignedHex with Content-Length: 0
  std::unique_ptr<Digest> md5;
  std::string md5_result;  // raw, after the end
  std::optional<std::string> expected_md5;
  std::optional<Checksummer> checksummer;
  std::optional<std::string> expected_checksum;  // raw digest from the header or the trailer
  bool checksum_in_trailer = false;              // x-amz-trailer announced it
  std::string checksum_result;                   // raw, after the end
  // MD5 and the checksum of a large body run here, beside receiving and storing it. Declared
  // after the digests it feeds so it stops before they are destroyed.
  std::unique_ptr<BackgroundDigest> background_digests;

  // aws-chunked parser.
  State state = State::kChunkHeader;
  uint64_t chunk_remaining = 0;
  bool previous_chunk_short = false;
  std::string chunk_signature;     // claimed for the chunk being read
  std::string previous_signature;  // chain: seed, then each verified chunk
  std::unique_ptr<Digest> chunk_sha256;

  Status Setup(const http::Request& request);
  Status SetupContentMd5(const http::Request& request);
  Status SetupChecksums(const http::Request& request);
  void SetupBackgroundDigests();
  void UpdateDigests(const char* data, size_t size);

  Result<size_t> ReadPlain(char* buffer, size_t capacity);
  Result<size_t> ReadChunked(char* buffer, size_t capacity);
  Status ReadChunkHeader();
  Status EndChunk();
  Status VerifyChunkSignature(std::string_view chunk_sha256_hex);
  Status ReadTrailers();
  Status ApplyTrailers(const std::vector<std::pair<std::string, std::string>>& trailers);
  Status Consume(const char* data, size_t size);
  Status Finish();
  Status FinishSignature();
  Status FinishDigests();
};

// ---------------------------------------------------------------------------------------------
// Set-up from the request head

Status VerifyingBodyReader::Impl::Setup(const http::Request& request) {
  PayloadMode mode = verified.payload_mode;
  if (IsStreaming(mode)) {
    const std::string* decoded = FindHeader(request, "x-amz-decoded-content-length");
    if (decoded == nullptr) {
      return Error(ErrorCode::kMissingContentLength,
                   "aws-chunked uploads require x-amz-decoded-content-length");
    }
    decoded_length = ParseUint64(TrimWhitespace(*decoded));
    if (!decoded_length)
      return Error(ErrorCode::kInvalidArgument, "x-amz-decoded-content-length is not a number");
    previous_signature = verified.seed_signature;
    if (HasChunkSignatures(mode)) chunk_sha256 = std::make_unique<Digest>(Digest::Algorithm::kSha256);
  }
  // Most catalog requests carry no body; its hash is known without hashing.
  body_known_empty = mode == PayloadMode::kSignedHex && raw.content_length() == 0;
  if (mode == PayloadMode::kSignedHex && !body_known_empty) {
    body_sha256 = std::make_unique<Digest>(Digest::Algorithm::kSha256);
  }
  SERAC_RETURN_IF_ERROR(SetupContentMd5(request));
  SERAC_RETURN_IF_ERROR(SetupChecksums(request));
  SetupBackgroundDigests();
  return Status::Ok();
}

void VerifyingBodyReader::Impl::SetupBackgroundDigests() {
  std::optional<uint64_t> length = IsStreaming(verified.payload_mode) ? decoded_length : raw.content_length();
  if (!length || *length < limits::kBackgroundDigestBodyBytesMin || (!md5 && !checksummer)) return;
  background_digests =
      std::make_unique<BackgroundDigest>([this](const char* data, size_t size) { UpdateDigests(data, size); },
                                         limits::kBackgroundDigestStageBytes);
}

void VerifyingBodyReader::Impl::UpdateDigests(const char* data, size_t size) {
  if (md5) md5->Update(data, size);
  if (checksummer) checksummer->Update(data, size);
}

Status VerifyingBodyReader::Impl::SetupContentMd5(const http::Request& request) {
  if (const std::string* content_md5 = FindHeader(request, "content-md5")) {
    std::optional<std::string> raw_md5 = Base64Decode(TrimWhitespace(*content_md5));
    if (!raw_md5 || raw_md5->size() != 16) {
      return Error(ErrorCode::kInvalidArgument, "InvalidDigest: The Content-MD5 you specified is not valid.");
    }
    expected_md5 = std::move(*raw_md5);
  }
  if (options.compute_md5 || expected_md5) md5 = std::make_unique<Digest>(Digest::Algorithm::kMd5);
  return Status::Ok();
}

Status VerifyingBodyReader::Impl::SetupChecksums(const http::Request& request) {
  static constexpr std::string_view kSingleChecksum =
      "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.";
  std::optional<ChecksumAlgorithm> client_algorithm;
  for (const http::Header& header : request.headers) {
    std::optional<ChecksumAlgorithm> algorithm = ChecksumAlgorithmOfHeader(header.name);
    if (!algorithm) continue;
    if (client_algorithm) return Error(ErrorCode::kInvalidArgument, std::string(kSingleChecksum));
    client_algorithm = algorithm;
    SERAC_ASSIGN_OR_RETURN(expected_checksum, DecodeChecksumValue(*algorithm, header.value));
  }
  if (const std::string* trailer = FindHeader(request, "x-amz-trailer")) {
    for (std::string_view name : internal::SplitList(*trailer)) {
      std::optional<ChecksumAlgorithm> algorithm = ChecksumAlgorithmOfHeader(name);
      if (!algorithm) continue;
      if (client_algorithm) return Error(ErrorCode::kInvalidArgument, std::string(kSingleChecksum));
      if (!CarriesTrailer(verified.payload_mode)) {
        return Error(ErrorCode::kInvalidArgument, "x-amz-trailer requires a STREAMING-...-TRAILER payload");
      }
      client_algorithm = algorithm;
      checksum_in_trailer = true;
    }
  }
  if (const std::string* sdk_algorithm = FindHeader(request, "x-amz-sdk-checksum-algorithm")) {
    std::optional<ChecksumAlgorithm> announced = ParseChecksumAlgorithm(TrimWhitespace(*sdk_algorithm));
    if (client_algorithm && announced != client_algorithm) {
      return Error(ErrorCode::kInvalidArgument,
                   "x-amz-sdk-checksum-algorithm does not match the checksum the request carries");
    }
  }
  std::optional<ChecksumAlgorithm> algorithm = client_algorithm ? client_algorithm : options.default_checksum;
  if (algorithm) checksummer.emplace(*algorithm);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Reading

Status VerifyingBodyReader::Impl::Consume(const char* data, size_t size) {
  bytes_out += size;
  if (bytes_out > limit) {
    return Error(ErrorCode::kLimitExceeded, "The request body exceeds the size allowed for this request");
  }
  if (decoded_length && bytes_out > *decoded_length) {
    return Error(ErrorCode::kInvalidArgument,
                 "The aws-chunked body is longer than x-amz-decoded-content-length");
  }
  if (body_known_empty && size > 0) {
    return Error(ErrorCode::kPayloadHashMismatch, "The request body is longer than its Content-Length");
  }
  if (body_sha256) body_sha256->Update(data, size);
  if (chunk_sha256) chunk_sha256->Update(data, size);
  if (background_digests) {
    background_digests->Update(data, size);
  } else {
    UpdateDigests(data, size);
  }
  return Status::Ok();
}

Result<size_t> VerifyingBodyReader::Impl::ReadPlain(char* buffer, size_t capacity) {
  SERAC_ASSIGN_OR_RETURN(size_t count, raw.Read(buffer, capacity));
  if (count == 0) {
    SERAC_RETURN_IF_ERROR(Finish());
    return size_t{0};
  }
  SERAC_RETURN_IF_ERROR(Consume(buffer, count));
  return count;
}

Result<size_t> VerifyingBodyReader::Impl::ReadChunked(char* buffer, size_t capacity) {
  while (true) {
    switch (state) {
      case State::kChunkHeader:
        SERAC_RETURN_IF_ERROR(ReadChunkHeader());
        break;
      case State::kChunkData: {
        if (chunk_remaining == 0) {
          state = State::kChunkEnd;
          break;
        }
        size_t wanted = static_cast<size_t>(std::min<uint64_t>(capacity, chunk_remaining));
        SERAC_ASSIGN_OR_RETURN(size_t count, input.ReadData(buffer, wanted));
        if (count == 0) return Error(ErrorCode::kIncompleteBody, "The aws-chunked body ended inside a chunk");
        chunk_remaining -= count;
        SERAC_RETURN_IF_ERROR(Consume(buffer, count));
        return count;
      }
      case State::kChunkEnd:
        SERAC_RETURN_IF_ERROR(EndChunk());
        break;
      case State::kTrailers:
        SERAC_RETURN_IF_ERROR(ReadTrailers());
        SERAC_RETURN_IF_ERROR(Finish());
        state = State::kDone;
        return size_t{0};
      case State::kDone:
        return size_t{0};
    }
  }
}

Status VerifyingBodyReader::Impl::ReadChunkHeader() {
  SERAC_ASSIGN_OR_RETURN(std::optional<std::string> line, input.ReadLine(limits::kAwsChunkHeaderBytesMax));
  if (!line) return Error(ErrorCode::kIncompleteBody, "The aws-chunked body ended before its final chunk");
  std::string_view text = TrimWhitespace(*line);
  size_t semicolon = text.find(';');
  std::optional<uint64_t> size = ParseHexSize(TrimWhitespace(text.substr(0, semicolon)));
  if (!size) return MalformedChunked("bad chunk size");
  if (HasChunkSignatures(verified.payload_mode)) {
    static constexpr std::string_view kSignatureKey = "chunk-signature=";
    std::string_view extension =
        semicolon == std::string_view::npos ? std::string_view() : TrimWhitespace(text.substr(semicolon + 1));
    if (extension.substr(0, kSignatureKey.size()) != kSignatureKey)
      return MalformedChunked("missing chunk-signature");
    chunk_signature = AsciiLower(TrimWhitespace(extension.substr(kSignatureKey.size())));
    if (!internal::IsLowerHex(chunk_signature, 64)) return MalformedChunked("bad chunk-signature");
    if (*size > 0 && previous_chunk_short) {
      return Error(ErrorCode::kInvalidArgument,
                   "Only the last chunk is allowed to have a size less than 8192 bytes");
    }
  }
  if (*size == 0) {
    if (HasChunkSignatures(verified.payload_mode))
      SERAC_RETURN_IF_ERROR(VerifyChunkSignature(internal::kEmptySha256Hex));
    state = State::kTrailers;
    return Status::Ok();
  }
  previous_chunk_short = *size < limits::kAwsChunkSizeMin;
  chunk_remaining = *size;
  state = State::kChunkData;
  return Status::Ok();
}

Status VerifyingBodyReader::Impl::EndChunk() {
  SERAC_ASSIGN_OR_RETURN(std::optional<std::string> line, input.ReadLine(limits::kAwsChunkHeaderBytesMax));
  if (!line) return Error(ErrorCode::kIncompleteBody, "The aws-chunked body ended after chunk data");
  if (!line->empty()) return MalformedChunked("chunk data is not followed by CRLF");
  if (chunk_sha256) SERAC_RETURN_IF_ERROR(VerifyChunkSignature(HexEncode(chunk_sha256->Finish())));
  state = State::kChunkHeader;
  return Status::Ok();
}

Status VerifyingBodyReader::Impl::VerifyChunkSignature(std::string_view chunk_sha256_hex) {
  std::string tail = previous_signature;
  tail.append("\n").append(internal::kEmptySha256Hex).append("\n").append(chunk_sha256_hex);
  std::string expected = internal::SignatureHex(
      verified.signing_key,
      internal::StringToSign(internal::kChunkAlgorithm, verified.amz_date, verified.scope, tail));
  if (!internal::SignaturesEqual(expected, chunk_signature)) {
    return Error(ErrorCode::kSignatureMismatch, std::string(internal::kSignatureMismatchMessage));
  }
  previous_signature = std::move(expected);
  return Status::Ok();
}

// Trailer lines "name:value" until the end of the body; blank lines, "\n" or "\r\n" endings and
// whitespace around ':' are tolerated because clients differ in exactly these details.
Status VerifyingBodyReader::Impl::ReadTrailers() {
  std::vector<std::pair<std::string, std::string>> trailers;
  std::optional<std::string> trailer_signature;
  std::string canonical;  // what the trailer signature covers
  uint64_t budget = limits::kAwsTrailerBytesMax;
  while (true) {
    SERAC_ASSIGN_OR_RETURN(std::optional<std::string> line, input.ReadLine(budget));
    if (!line) break;
    if (line->size() + 1 > budget)
      return Error(ErrorCode::kLimitExceeded, "aws-chunked trailer exceeds limits::kAwsTrailerBytesMax");
    budget -= line->size() + 1;
    std::string_view text = TrimWhitespace(*line);
    if (text.empty()) continue;
    size_t colon = text.find(':');
    if (colon == std::string_view::npos) return MalformedChunked("trailer line without ':'");
    std::string name = AsciiLower(TrimWhitespace(text.substr(0, colon)));
    std::string value(TrimWhitespace(text.substr(colon + 1)));
    if (name == "x-amz-trailer-signature") {
      trailer_signature = AsciiLower(value);
      continue;
    }
    canonical.append(name).append(":").append(value).append("\n");
    trailers.emplace_back(std::move(name), std::move(value));
  }
  if (verified.payload_mode == PayloadMode::kStreamingSigned && (!trailers.empty() || trailer_signature)) {
    return MalformedChunked("trailers are not allowed with STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
  }
  if (verified.payload_mode == PayloadMode::kStreamingSignedTrailer &&
      (!trailers.empty() || trailer_signature)) {
    std::string tail = previous_signature + "\n" + Sha256Hex(canonical);
    std::string expected = internal::SignatureHex(
        verified.signing_key,
        internal::StringToSign(internal::kTrailerAlgorithm, verified.amz_date, verified.scope, tail));
    if (!trailer_signature || !internal::SignaturesEqual(expected, *trailer_signature)) {
      return Error(ErrorCode::kSignatureMismatch, std::string(internal::kSignatureMismatchMessage));
    }
  }
  return ApplyTrailers(trailers);
}

Status VerifyingBodyReader::Impl::ApplyTrailers(
    const std::vector<std::pair<std::string, std::string>>& trailers) {
  for (const auto& [name, value] : trailers) {
    std::optional<ChecksumAlgorithm> algorithm = ChecksumAlgorithmOfHeader(name);
    // A checksum trailer the head did not announce can only be checked if it is the one computed.
    if (!algorithm || !checksummer || checksummer->algorithm() != *algorithm) continue;
    if (!checksum_in_trailer && expected_checksum) continue;  // the header value rules
    SERAC_ASSIGN_OR_RETURN(expected_checksum, DecodeChecksumValue(*algorithm, value));
  }
  if (checksum_in_trailer && !expected_checksum) {
    return Error(ErrorCode::kInvalidArgument, "The checksum trailer announced in x-amz-trailer was not sent");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// End-of-body checks

Status VerifyingBodyReader::Impl::Finish() {
  if (decoded_length && bytes_out != *decoded_length) {
    return Error(ErrorCode::kIncompleteBody,
                 "The aws-chunked body is shorter than x-amz-decoded-content-length");
  }
  SERAC_RETURN_IF_ERROR(FinishSignature());
  SERAC_RETURN_IF_ERROR(FinishDigests());
  finished = true;
  return Status::Ok();
}

Status VerifyingBodyReader::Impl::FinishSignature() {
  if (!body_sha256 && !body_known_empty) return Status::Ok();
  std::string body_hex =
      body_known_empty ? std::string(internal::kEmptySha256Hex) : HexEncode(body_sha256->Finish());
  if (!ConstantTimeEquals(body_hex, verified.payload_sha256_hex)) {
    return Error(ErrorCode::kPayloadHashMismatch,
                 "The provided 'x-amz-content-sha256' header does not match what was computed.");
  }
  return Status::Ok();
}

Status VerifyingBodyReader::Impl::FinishDigests() {
  if (background_digests) background_digests->Drain();
  if (md5) {
    md5_result = md5->Finish();
    if (expected_md5 && !ConstantTimeEquals(md5_result, *expected_md5)) {
      return Error(ErrorCode::kBadDigest, "The Content-MD5 you specified did not match what we received.");
    }
  }
  if (checksummer) {
    checksum_result = checksummer->Finish();
    if (expected_checksum && !ConstantTimeEquals(checksum_result, *expected_checksum)) {
      return Error(ErrorCode::kBadDigest, "The " +
                                              std::string(ChecksumAlgorithmName(checksummer->algorithm())) +
                                              " you specified did not match the calculated checksum.");
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Public surface

Result<std::unique_ptr<VerifyingBodyReader>> VerifyingBodyReader::Create(const http::Request& request,
                                                                         const VerifiedRequest& verified,
                                                                         http::BodyReader& raw,
                                                                         const PayloadOptions& options) {
  auto impl = std::make_unique<Impl>(raw, verified, options);
  SERAC_RETURN_IF_ERROR(impl->Setup(request));
  return std::unique_ptr<VerifyingBodyReader>(new VerifyingBodyReader(std::move(impl)));
}

VerifyingBodyReader::VerifyingBodyReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VerifyingBodyReader::~VerifyingBodyReader() = default;

Result<size_t> VerifyingBodyReader::Read(char* buffer, size_t capacity) {
  Impl& self = *impl_;
  if (!self.failure.ok()) return self.failure;
  if (self.finished) return size_t{0};
  if (capacity == 0) return Error(ErrorCode::kInternal, "Read with zero capacity");
  Result<size_t> result = IsStreaming(self.verified.payload_mode) ? self.ReadChunked(buffer, capacity)
                                                                  : self.ReadPlain(buffer, capacity);
  if (!result.ok()) self.failure = result.status();  // sticky: never hand out bytes after a failure
  return result;
}

std::optional<uint64_t> VerifyingBodyReader::content_length() const {
  if (IsStreaming(impl_->verified.payload_mode)) return impl_->decoded_length;
  return impl_->raw.content_length();
}

void VerifyingBodyReader::SetLimit(uint64_t bytes_max) {
  impl_->limit = bytes_max;
  if (!IsStreaming(impl_->verified.payload_mode)) {
    impl_->raw.SetLimit(bytes_max);
  } else if (impl_->decoded_length && *impl_->decoded_length > bytes_max && impl_->failure.ok()) {
    impl_->failure =
        Error(ErrorCode::kLimitExceeded, "The request body exceeds the size allowed for this request");
  }
}

uint64_t VerifyingBodyReader::bytes_read() const { return impl_->bytes_out; }

std::string VerifyingBodyReader::md5_hex() const {
  if (!impl_->finished || impl_->md5_result.empty()) return "";
  return HexEncode(impl_->md5_result);
}

std::optional<std::pair<ChecksumAlgorithm, std::string>> VerifyingBodyReader::checksum() const {
  if (!impl_->finished || !impl_->checksummer) return std::nullopt;
  return std::make_pair(impl_->checksummer->algorithm(), Base64Encode(impl_->checksum_result));
}

}  // namespace serac::auth
