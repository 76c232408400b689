// Where tables and views keep their files. Every table and view owns the keys below its location
// in its warehouse's bucket, and what one owns no other may own: no two entities' locations are
// equal or one below the other, and no namespace's default location (where its tables go) is at
// or below an entity's. Every CatalogStore back end refuses, in the transaction that would make it,
// a create, register or location change that breaks this; the catalog then confines every
// server-side read and delete of a table's files to what the table owns.
// Pure functions, shared by the catalog and the back ends; thread-safe.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "meta/catalog_store.h"

namespace serac::meta {

// The key of `location` ("s3://BUCKET/KEY", also s3a:// and s3n://) inside bucket `warehouse`,
// without trailing '/': what the entity at that location owns is this key and every key below it.
// nullopt when the location is in another bucket or none, names the bucket itself, or has an
// empty, "." or ".." segment (object keys are literal, while a client's path library would
// normalise them and write somewhere else).
inline std::optional<std::string> LocationKeyIn(std::string_view warehouse, std::string_view location) {
  static constexpr std::array<std::string_view, 3> kSchemes = {"s3://", "s3a://", "s3n://"};
  for (std::string_view scheme : kSchemes) {
    if (location.substr(0, scheme.size()) != scheme) continue;
    std::string_view rest = location.substr(scheme.size());
    if (rest.size() <= warehouse.size() || rest.substr(0, warehouse.size()) != warehouse ||
        rest[warehouse.size()] != '/') {
      return std::nullopt;
    }
    std::string_view key = rest.substr(warehouse.size() + 1);
    while (!key.empty() && key.back() == '/') key.remove_suffix(1);
    if (key.empty()) return std::nullopt;
    size_t start = 0;
    while (true) {
      const size_t slash = key.find('/', start);
      const std::string_view segment =
          key.substr(start, slash == std::string_view::npos ? key.npos : slash - start);
      if (segment.empty() || segment == "." || segment == "..") return std::nullopt;
      if (slash == std::string_view::npos) break;
      start = slash + 1;
    }
    return std::string(key);
  }
  return std::nullopt;
}

// One namespace level (or table name) as a location segment: a '/' inside it becomes '_', and a
// level of dots only ("." or "..") gets a leading '_', so that the segment is never one a path
// library would resolve.
inline std::string LocationSegment(std::string_view level) {
  std::string segment(level);
  bool dots_only = true;
  for (char& c : segment) {
    if (c == '/') c = '_';
    dots_only = dots_only && c == '.';
  }
  if (dots_only) segment.insert(segment.begin(), '_');
  return segment;
}

// The key below which a namespace's tables are placed by default: its levels as segments, joined
// by '/'.
inline std::string NamespaceLocationKey(const NamespaceLevels& levels) {
  std::string key;
  for (const std::string& level : levels) {
    if (!key.empty()) key.push_back('/');
    key += LocationSegment(level);
  }
  return key;
}

// True when `key` is `owner` or lies below it: "a/b" is below "a", "ab" is not.
inline bool KeyAtOrBelow(std::string_view key, std::string_view owner) {
  if (key.size() < owner.size() || key.substr(0, owner.size()) != owner) return false;
  return key.size() == owner.size() || key[owner.size()] == '/';
}

}  // namespace serac::meta
