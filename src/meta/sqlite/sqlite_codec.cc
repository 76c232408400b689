#include <nlohmann/json.hpp>
#include <utility>

#include "meta/sqlite/sqlite_codec_internal.h"

namespace serac::meta::sqlite {
namespace {

using nlohmann::json;

// Field names of the header object; short because they are stored in every row.
constexpr const char* kContentType = "ct";
constexpr const char* kContentEncoding = "ce";
constexpr const char* kContentLanguage = "cl";
constexpr const char* kContentDisposition = "cd";
constexpr const char* kCacheControl = "cc";
constexpr const char* kExpires = "ex";
constexpr const char* kUserMetadata = "meta";
constexpr const char* kTags = "tags";

using Pairs = std::vector<std::pair<std::string, std::string>>;

void PutIfSet(json& out, const char* name, const std::string& value) {
  if (!value.empty()) out[name] = value;
}

void PutPairsIfAny(json& out, const char* name, const Pairs& pairs) {
  if (pairs.empty()) return;
  json list = json::array();
  for (const auto& [key, value] : pairs) list.push_back(json::array({key, value}));
  out[name] = std::move(list);
}

std::string GetString(const json& in, const char* name) {
  auto found = in.find(name);
  return found == in.end() ? std::string() : found->get<std::string>();
}

Pairs GetPairs(const json& in, const char* name) {
  Pairs pairs;
  auto found = in.find(name);
  if (found == in.end()) return pairs;
  for (const json& pair : *found) {
    pairs.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
  }
  return pairs;
}

Status Corrupt(const char* what, const std::exception& error) {
  return Error(ErrorCode::kInternal, std::string("stored ") + what + " are malformed: " + error.what());
}

}  // namespace

std::string EncodeHeaders(const ObjectHeaders& headers) {
  json out = json::object();
  PutIfSet(out, kContentType, headers.content_type);
  PutIfSet(out, kContentEncoding, headers.content_encoding);
  PutIfSet(out, kContentLanguage, headers.content_language);
  PutIfSet(out, kContentDisposition, headers.content_disposition);
  PutIfSet(out, kCacheControl, headers.cache_control);
  PutIfSet(out, kExpires, headers.expires);
  PutPairsIfAny(out, kUserMetadata, headers.user_metadata);
  PutPairsIfAny(out, kTags, headers.tags);
  if (out.empty()) return {};
  // Header values come from clients and need not be valid UTF-8; replace rather than throw.
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<ObjectHeaders> DecodeHeaders(const std::string& text) {
  ObjectHeaders headers;
  if (text.empty()) return headers;
  try {
    json in = json::parse(text);
    headers.content_type = GetString(in, kContentType);
    headers.content_encoding = GetString(in, kContentEncoding);
    headers.content_language = GetString(in, kContentLanguage);
    headers.content_disposition = GetString(in, kContentDisposition);
    headers.cache_control = GetString(in, kCacheControl);
    headers.expires = GetString(in, kExpires);
    headers.user_metadata = GetPairs(in, kUserMetadata);
    headers.tags = GetPairs(in, kTags);
  } catch (const std::exception& error) {
    return Corrupt("headers", error);
  }
  return headers;
}

std::string EncodeSegments(const std::vector<Segment>& segments) {
  json list = json::array();
  for (const Segment& segment : segments) list.push_back(json::array({segment.blob_id, segment.size}));
  return list.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<std::vector<Segment>> DecodeSegments(const std::string& text) {
  std::vector<Segment> segments;
  if (text.empty()) return segments;
  try {
    json list = json::parse(text);
    segments.reserve(list.size());
    for (const json& entry : list) {
      segments.push_back(Segment{entry.at(0).get<std::string>(), entry.at(1).get<uint64_t>()});
    }
  } catch (const std::exception& error) {
    return Corrupt("segments", error);
  }
  return segments;
}

// Each piece is [size] (inline) or [size, shared_id].
std::string EncodePieces(const StoredPieces& stored) {
  json list = json::array();
  for (const StoredPiece& piece : stored.pieces) {
    list.push_back(piece.shared_id == 0 ? json::array({piece.size})
                                        : json::array({piece.size, piece.shared_id}));
  }
  if (stored.inline_encoding == InlineEncoding::kPlain) return list.dump();
  return json{{"inline", "zstd"}, {"pieces", std::move(list)}}.dump();
}

Result<StoredPieces> DecodePieces(const std::string& text) {
  StoredPieces stored;
  if (text.empty()) return stored;
  try {
    json parsed = json::parse(text);
    const json* list = &parsed;
    if (parsed.is_object()) {
      const std::string encoding = parsed.at("inline").get<std::string>();
      if (encoding != "zstd")
        return Error(ErrorCode::kInternal, "stored pieces name an unknown encoding: " + encoding);
      stored.inline_encoding = InlineEncoding::kZstd;
      list = &parsed.at("pieces");
    }
    stored.pieces.reserve(list->size());
    for (const json& entry : *list) {
      StoredPiece piece{entry.at(0).get<uint64_t>(), 0};
      if (entry.size() > 1) piece.shared_id = entry.at(1).get<int64_t>();
      stored.pieces.push_back(piece);
    }
  } catch (const std::exception& error) {
    return Corrupt("pieces", error);
  }
  return stored;
}

}  // namespace serac::meta::sqlite
