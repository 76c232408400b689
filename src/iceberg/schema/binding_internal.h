// Binding partition specs and sort orders to a schema before they are stored or used: every
// source column exists, is a primitive reached only through structs, and suits its transform —
// the checks the reference makes (PartitionSpec.checkCompatibility, SortOrder.checkCompatibility)
// when a spec or order is added and, for the default ones, on every commit. A spec or order that
// fails them makes the table unloadable for Java engines, so serac refuses it with
// kInvalidArgument (400) and the reference's wording. Pure and thread-safe.
#pragma once

#include "iceberg/metadata/metadata_internal.h"

namespace serac::iceberg {

Status CheckSpecCompatible(const Json& spec, const Json& schema);
// A partition field may not take the name of a schema column other than its source (the
// reference's check when a spec is added; specs read from files are not held to it).
Status CheckSpecFieldNames(const Json& spec, const Json& schema);
Status CheckSortOrderCompatible(const Json& order, const Json& schema);
// Whether `full_name` (dot-joined, "a.b", a list's "l.element", a map's "m.key"/"m.value") names a
// field of the schema, as the reference's Schema.findField resolves names.
bool SchemaHasField(const Json& schema, const std::string& full_name);

}  // namespace serac::iceberg
