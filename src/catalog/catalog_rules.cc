// Pure request rules: query strings, namespace paths, names, locations, page tokens, ETags.
#include <algorithm>
#include <array>

#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "common/encoding.h"
#include "common/limits.h"
#include "common/random.h"
#include "meta/catalog_locations.h"
#include "service/bucket_name.h"

namespace serac::catalog {
namespace {

constexpr char kNamespaceSeparator = '\x1F';

}  // namespace

std::optional<bool> ParseBoolean(std::string_view text) {
  if (AsciiEqualsIgnoreCase(text, "true")) return true;
  if (AsciiEqualsIgnoreCase(text, "false")) return false;
  return std::nullopt;
}

std::optional<meta::NamespaceLevels> SplitNamespace(std::string_view decoded) {
  meta::NamespaceLevels levels;
  while (true) {
    size_t separator = decoded.find(kNamespaceSeparator);
    levels.emplace_back(decoded.substr(0, separator));
    if (levels.back().empty()) return std::nullopt;
    if (separator == std::string_view::npos) break;
    decoded.remove_prefix(separator + 1);
  }
  return levels;
}

std::string NamespaceDisplayName(const meta::NamespaceLevels& levels) {
  std::string name;
  for (const std::string& level : levels) {
    if (!name.empty()) name += '.';
    name += level;
  }
  return name;
}

std::optional<std::string> NamespaceProblem(const meta::NamespaceLevels& levels) {
  if (levels.empty()) return "namespace must have at least one level";
  for (const std::string& level : levels) {
    if (level.empty()) return "namespace levels must not be empty";
    if (level.find(kNamespaceSeparator) != std::string::npos) return "namespace levels must not contain 0x1F";
    if (!IsValidUtf8(level)) return "namespace levels must be UTF-8";
  }
  return std::nullopt;
}

std::optional<std::string> EntityNameProblem(std::string_view name) {
  if (name.empty()) return "name must not be empty";
  if (!IsValidUtf8(name)) return "name must be UTF-8";
  if (name.size() > limits::kObjectKeyBytesMax / 4) return "name is too long";
  return std::nullopt;
}

bool IsReservedPrefixWord(std::string_view segment) {
  static constexpr std::array<std::string_view, 7> kWords = {
      "namespaces", "tables", "views", "transactions", "config", "oauth", "warehouses"};
  for (std::string_view word : kWords) {
    if (segment == word) return true;
  }
  return false;
}

std::optional<std::string> WarehouseNameProblem(std::string_view name) {
  // A warehouse is a bucket, so bucket naming rules apply first.
  if (auto problem = service::BucketNameProblem(name)) return problem;
  if (IsReservedPrefixWord(name)) return "warehouse name is reserved by the catalog API";
  return std::nullopt;
}

std::optional<S3Location> ParseS3Location(std::string_view location) {
  static constexpr std::array<std::string_view, 3> kSchemes = {"s3://", "s3a://", "s3n://"};
  for (std::string_view scheme : kSchemes) {
    if (location.substr(0, scheme.size()) != scheme) continue;
    std::string_view rest = location.substr(scheme.size());
    size_t slash = rest.find('/');
    S3Location parsed;
    parsed.bucket = std::string(rest.substr(0, slash));
    if (parsed.bucket.empty()) return std::nullopt;
    if (slash != std::string_view::npos) parsed.key = std::string(rest.substr(slash + 1));
    return parsed;
  }
  return std::nullopt;
}

std::string DefaultNamespaceLocation(std::string_view warehouse, const meta::NamespaceLevels& levels) {
  return "s3://" + std::string(warehouse) + "/" + meta::NamespaceLocationKey(levels);
}

std::string DefaultEntityLocation(std::string_view warehouse, const meta::NamespaceLevels& levels,
                                  std::string_view name) {
  return DefaultNamespaceLocation(warehouse, levels) + "/" + meta::LocationSegment(name) + "-" +
         RandomHexId(16);
}

HandlerResult OwnedKey(std::string_view warehouse, std::string_view what, const std::string& location,
                       std::string& key) {
  std::optional<std::string> owned = meta::LocationKeyIn(warehouse, location);
  if (!owned) {
    return BadRequest(std::string(what) + " " + location + " is not a place inside warehouse " +
                      std::string(warehouse) + ": it must be s3://" + std::string(warehouse) +
                      "/KEY, without empty, \".\" or \"..\" segments");
  }
  key = std::move(*owned);
  return kHandled;
}

HandlerResult RequireLocationsOwned(std::string_view warehouse, const std::string& owned_key,
                                    std::string_view display_name, const iceberg::TableMetadata* before,
                                    const iceberg::TableMetadata& after) {
  for (const iceberg::TableMetadata::NamedLocation& named : after.LocationsAddedSince(before)) {
    // A place outside serac's storage (a client's file:/ path, as Java's test kits write) names
    // nothing any table owns here, and no read or delete of the server's reaches it
    // (MakeTableFileIO refuses it); every place in serac's buckets must be the table's own.
    if (!ParseS3Location(named.location)) continue;
    std::optional<std::string> key = meta::LocationKeyIn(warehouse, named.location);
    if (key && meta::KeyAtOrBelow(*key, owned_key)) continue;
    return BadRequest(named.what + " " + named.location + " is outside table " + std::string(display_name) +
                      "'s location s3://" + std::string(warehouse) + "/" + owned_key +
                      ": a table's files are kept at or below its location, which it alone owns");
  }
  return kHandled;
}

std::optional<std::string> ClientLocationInWarehouse(std::string_view location, std::string_view warehouse) {
  while (!location.empty() && location.back() == '/') location.remove_suffix(1);
  auto parsed = ParseS3Location(location);
  if (!parsed || parsed->bucket != warehouse || parsed->key.empty()) return std::nullopt;
  return std::string(location);
}

std::string EncodePageToken(std::string_view last_name) { return Base64Encode(last_name); }

std::optional<std::string> DecodePageToken(std::string_view token) { return Base64Decode(token); }

bool IfNoneMatchMatches(std::string_view header, std::string_view etag) {
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view candidate = TrimWhitespace(header.substr(0, comma));
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    if (candidate == "*") return true;
    if (candidate.substr(0, 2) == "W/") candidate.remove_prefix(2);
    if (candidate == etag) return true;
  }
  return false;
}

}  // namespace serac::catalog
