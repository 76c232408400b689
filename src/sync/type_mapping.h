// PostgreSQL column types as Iceberg types, exactly: what `serac sync` creates its tables with.
// Where Iceberg has the type, values keep it (numeric(p,s) up to 38 digits is decimal(p,s),
// timestamps are microseconds, uuid is uuid, bytea is binary, arrays are lists); where it has
// none, the value's PostgreSQL text is kept whole as a string, which loses nothing
// (unconstrained numeric and numeric beyond 38 digits, time with time zone, interval, json and
// jsonb, inet, cidr, macaddr, enums, ranges, geometric types, bit strings, xml). OLake maps numeric
// to double and date to a timestamp; serac does neither. The README lists the mapping.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "iceberg/schema/schema.h"

namespace serac::sync {

// A column's type as pg_type and pg_attribute describe it.
struct PgType {
  std::string name;      // pg_type.typname: "int4", "numeric", "_int4" (an array), "mood"
  char type_kind = 'b';  // pg_type.typtype: b base, d domain, e enum, c composite, r range, m multirange
  char category = 'U';   // pg_type.typcategory: A for arrays
  int32_t type_modifier = -1;  // pg_attribute.atttypmod: numeric(p,s), varchar(n), timestamp(p)
  // For an array: its element's type; for a domain: its base type (with the domain's modifier).
  std::string element_name;
  char element_kind = 'b';
};

struct MappedType {
  iceberg::Type type;
  // The value is PostgreSQL's text of it, kept whole (no Iceberg type holds it exactly).
  bool as_text = false;
};

Result<MappedType> IcebergTypeFor(const PgType& column);

}  // namespace serac::sync
