// Answers in the REST protocol's JSON (catalog_service.cc): paging, bodies read and sent, documents
// sent as the text they already are, the storage configuration clients are told.
// Private to catalog/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "iceberg/metadata/table_metadata.h"

namespace serac::catalog {

// List paging: a client that sends no pageToken gets everything (the spec's rule); with one
// (even empty) it gets pages of pageSize (capped by limits::kCatalogPageSizeMax).
struct Paging {
  bool paged = false;
  uint32_t page_size = 0;
  std::string start_after;  // decoded from pageToken
};
HandlerResult ReadPaging(RequestContext& ctx, Paging& paging);

// The paged listing shared by warehouses, namespaces, tables and views.
// Builds {field: [...], "next-page-token": ...}. `fetch(start_after, limit)` returns one store page;
// `key(record)` is the name paging resumes after.
// `visible(record)` hides what the caller may not see; a page may then hold fewer entries than
// its size (its token still moves on).
template <typename Fetch, typename Key, typename ToJson, typename Visible>
HandlerResult CollectListing(const char* field, const Paging& paging, Fetch fetch, Key key, ToJson to_json,
                             Visible visible, const IcebergError& not_found, Json& out) {
  Json items = Json::array();
  Json next = nullptr;
  std::string start_after = paging.start_after;
  while (true) {
    const uint32_t limit = paging.paged ? paging.page_size + 1 : limits::kCatalogPageSizeMax;
    auto page = fetch(start_after, limit);
    if (!page.ok()) return ErrorFromStatus(page.status(), not_found);
    if (paging.paged) {
      for (size_t i = 0; i < page->size() && i < paging.page_size; ++i) {
        if (visible((*page)[i])) items.push_back(to_json((*page)[i]));
      }
      if (page->size() > paging.page_size) next = EncodePageToken(key((*page)[paging.page_size - 1]));
      break;
    }
    for (const auto& record : *page) {
      if (visible(record)) items.push_back(to_json(record));
    }
    if (page->size() < limit) break;
    start_after = key(page->back());
  }
  out = Json{{field, items}, {"next-page-token", next}};
  return kHandled;
}

// Parses ctx.body as a JSON object (400 BadRequestException otherwise).
HandlerResult ParseJsonObject(RequestContext& ctx, Json& out);
HandlerResult SendJson(RequestContext& ctx, const Json& body, int status = 200);
// `body`'s members and then `"name":`, ready for a member whose value is already JSON text.
std::string RawMemberHead(const Json& body, std::string_view name);
// Sends `head` (an object's text up to a member's colon, as RawMemberHead gives) followed by that
// member's JSON text (a metadata document that is cached or was just written as text) and the
// closing brace, so large documents are not rebuilt as a Json tree.
HandlerResult SendJsonAfterHead(RequestContext& ctx, std::string head, std::string_view raw_json,
                                int status = 200);
// The same with the member's JSON given in pieces (iceberg::TableMetadata::ToJsonPieces), written
// one after the other without joining them (or in one copy when small).
HandlerResult SendJsonAfterHead(RequestContext& ctx, const std::string& head,
                                const std::vector<iceberg::MetadataTextPiece>& raw_json, int status = 200);
// SendJsonAfterHead(RawMemberHead(body, name), raw_json).
HandlerResult SendJsonWithRawMember(RequestContext& ctx, const Json& body, std::string_view name,
                                    std::string_view raw_json, int status = 200);
HandlerResult SendNoContent(RequestContext& ctx);
// The S3 endpoint clients should use for data: the configured one, else scheme://Host.
std::string AdvertisedS3Endpoint(const RequestContext& ctx);
// FileIO settings for LoadTableResult/LoadViewResult "config" and the catalog config defaults.
Json StorageConfig(const RequestContext& ctx);
// The same object as JSON text, appended to `out` (for answers written without a Json tree).
void AppendStorageConfigText(const RequestContext& ctx, std::string& out);
// Every "<VERB> <template>" the service answers, for /v1/config "endpoints".
std::vector<std::string> AdvertisedEndpoints();

}  // namespace serac::catalog
