// The JSON-text API of iceberg/iceberg.h, on top of the typed model.
#include "iceberg/iceberg.h"
#include "iceberg/metadata/metadata_internal.h"

namespace serac::iceberg {

Result<std::string> CreateTableMetadataJson(std::string_view create_request_json, std::string_view location,
                                            std::string_view table_uuid, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(Json body, ParseJson(create_request_json));
  SERAC_ASSIGN_OR_RETURN(CreateTableRequest request, ParseCreateTableRequest(body));
  SERAC_ASSIGN_OR_RETURN(TableModel metadata, NewTableMetadata(request, location, table_uuid, now_ms));
  return TableMetadataToJson(metadata).dump();
}

Result<JsonCommitResult> CommitTableJson(const std::optional<std::string>& current_metadata_json,
                                         std::string_view requirements_json, std::string_view updates_json,
                                         const CommitOptions& options) {
  std::optional<TableModel> current;
  if (current_metadata_json) {
    SERAC_ASSIGN_OR_RETURN(Json json, ParseJson(*current_metadata_json));
    SERAC_ASSIGN_OR_RETURN(current, ParseTableMetadata(json));
  }
  SERAC_ASSIGN_OR_RETURN(TableChanges changes, TableChanges::Parse(requirements_json, updates_json));
  SERAC_ASSIGN_OR_RETURN(TableCommitOutcome outcome,
                         ApplyTableCommit(current ? &*current : nullptr, changes, options));
  return JsonCommitResult{TableMetadataToJson(outcome.metadata).dump(), outcome.changed};
}

Result<std::string> CreateViewMetadataJson(std::string_view create_request_json, std::string_view location,
                                           std::string_view view_uuid) {
  SERAC_ASSIGN_OR_RETURN(Json body, ParseJson(create_request_json));
  SERAC_ASSIGN_OR_RETURN(CreateViewRequest request, ParseCreateViewRequest(body));
  SERAC_ASSIGN_OR_RETURN(ViewModel metadata, NewViewMetadata(request, location, view_uuid));
  return ViewMetadataToJson(metadata).dump();
}

Result<JsonCommitResult> CommitViewJson(std::string_view current_metadata_json,
                                        std::string_view requirements_json, std::string_view updates_json,
                                        int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(Json json, ParseJson(current_metadata_json));
  SERAC_ASSIGN_OR_RETURN(ViewModel current, ParseViewMetadata(json));
  SERAC_ASSIGN_OR_RETURN(Json requirements, ParseJson(requirements_json));
  SERAC_ASSIGN_OR_RETURN(Json updates, ParseJson(updates_json));
  SERAC_ASSIGN_OR_RETURN(ViewCommitOutcome outcome, ApplyViewCommit(current, requirements, updates, now_ms));
  return JsonCommitResult{ViewMetadataToJson(outcome.metadata).dump(), outcome.changed};
}

}  // namespace serac::iceberg
