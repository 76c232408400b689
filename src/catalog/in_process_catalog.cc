// iceberg::TableCatalog on the catalog's own commit path (CommitTableChange, which the REST route
// also commits through): the server's writers load and commit tables without HTTP, a signature or
// a policy check, and lose races, retry and find unknown outcomes exactly as REST clients do.
#include "catalog/catalog_commit_internal.h"
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_metadata_io_internal.h"
#include "iceberg/write/table_catalog.h"

namespace serac::catalog {
namespace {

// The Status a TableCatalog caller acts on (iceberg/write/table_catalog.h) for the error a REST client
// would have been answered with.
Status StatusFromIcebergError(const IcebergError& error) {
  if (error.type == "CommitStateUnknownException") return Error(ErrorCode::kOutcomeUnknown, error.message);
  if (error.type == "CommitFailedException") return Error(ErrorCode::kConflict, error.message);
  if (error.type == "AlreadyExistsException") return Error(ErrorCode::kAlreadyExists, error.message);
  if (error.type == "ValidationException") return Error(ErrorCode::kValidationFailed, error.message);
  switch (error.http_status) {
    case 400:
      return Error(ErrorCode::kInvalidArgument, error.message);
    case 404:
      return Error(ErrorCode::kNotFound, error.message);
    case 406:
      return Error(ErrorCode::kNotImplemented, error.message);
    case 413:
      return Error(ErrorCode::kLimitExceeded, error.message);
    case 503:
      return Error(ErrorCode::kUnavailable, error.message);
    default:
      return Error(ErrorCode::kInternal, error.type + ": " + error.message);
  }
}

class InProcessTableCatalog final : public iceberg::TableCatalog {
 public:
  InProcessTableCatalog(Backend& backend, std::string warehouse)
      : backend_(backend), warehouse_(std::move(warehouse)) {}

  Result<iceberg::TableMetadata> LoadTable(const iceberg::TableRef& table) override {
    auto entity = backend_.catalog().GetEntity(Id(table));
    if (!entity.ok()) {
      if (entity.status().code() == ErrorCode::kNotFound) {
        return Error(ErrorCode::kNotFound, "Table does not exist: " + table.DisplayName());
      }
      return entity.status();
    }
    SERAC_ASSIGN_OR_RETURN(std::shared_ptr<const iceberg::TableMetadata> metadata,
                           LoadTableMetadata(backend_, entity->metadata_location));
    return *metadata;
  }

  Status CommitTable(const iceberg::TableRef& table, const iceberg::TableChanges& changes) override {
    ReleasedVersions released;
    CommittedTable committed;
    if (auto error = CommitTableChange(backend_, Id(table), changes, released, committed)) {
      return StatusFromIcebergError(*error);
    }
    return Status::Ok();
  }

 private:
  meta::EntityId Id(const iceberg::TableRef& table) const {
    return {warehouse_, table.namespace_levels, table.name, meta::EntityKind::kTable};
  }

  Backend& backend_;
  const std::string warehouse_;
};

}  // namespace

std::unique_ptr<iceberg::TableCatalog> MakeInProcessTableCatalog(Backend& backend, std::string warehouse) {
  return std::make_unique<InProcessTableCatalog>(backend, std::move(warehouse));
}

}  // namespace serac::catalog
