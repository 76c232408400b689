// Request header lookups and the BodyReader conveniences built on Read().
#include "http/http.h"

#include <algorithm>
#include <cctype>

#include "common/encoding.h"
#include "common/limits.h"

namespace serac::http {
namespace {

// Small enough to live on the stack; Read() callers see the same chunking either way.
constexpr size_t kDrainChunkBytes = 16 * 1024;

}  // namespace

const std::string* Request::FindHeader(std::string_view name) const {
  for (const Header& header : headers) {
    if (AsciiEqualsIgnoreCase(header.name, name)) return &header.value;
  }
  return nullptr;
}

std::string_view Request::HeaderOr(std::string_view name, std::string_view fallback) const {
  const std::string* value = FindHeader(name);
  return value != nullptr ? std::string_view(*value) : fallback;
}

std::vector<std::string_view> Request::FindHeaders(std::string_view name) const {
  std::vector<std::string_view> values;
  for (const Header& header : headers) {
    if (AsciiEqualsIgnoreCase(header.name, name)) values.emplace_back(header.value);
  }
  return values;
}

Result<std::string> BodyReader::ReadAll(uint64_t bytes_max) {
  std::optional<uint64_t> announced = content_length();
  if (announced && *announced > bytes_max) {
    return Error(ErrorCode::kLimitExceeded, "request body of " + std::to_string(*announced) +
                                                " bytes exceeds the limit of " + std::to_string(bytes_max) +
                                                " bytes");
  }
  std::string body;
  if (announced) body.reserve(static_cast<size_t>(*announced));
  size_t chunk_bytes = static_cast<size_t>(std::min<uint64_t>(limits::kIoBufferBytes, bytes_max + 1));
  // A body of known length needs room for itself and one more byte to see its end; zero-filling a
  // whole I/O buffer for every small (often empty) catalog request body costs more than reading it.
  if (announced) chunk_bytes = static_cast<size_t>(std::min<uint64_t>(chunk_bytes, *announced + 1));
  while (true) {
    size_t old_size = body.size();
    body.resize(old_size + chunk_bytes);
    Result<size_t> got = Read(body.data() + old_size, chunk_bytes);
    if (!got.ok()) return got.status();
    body.resize(old_size + *got);
    if (*got == 0) return body;
    if (body.size() > bytes_max) {
      return Error(ErrorCode::kLimitExceeded,
                   "request body exceeds the limit of " + std::to_string(bytes_max) + " bytes");
    }
  }
}

Status BodyReader::Drain() {
  char buffer[kDrainChunkBytes];
  while (true) {
    Result<size_t> got = Read(buffer, sizeof(buffer));
    if (!got.ok()) return got.status();
    if (*got == 0) return Status::Ok();
  }
}

}  // namespace serac::http
