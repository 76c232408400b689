// PostgreSQL types to Iceberg types: exact where Iceberg has the type, whole text otherwise; checked
// on the catalog entries of a real PostgreSQL's columns when SERAC_TEST_PG is set (tests/test_sync.py).
#include "sync/type_mapping.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "sync/postgres.h"
#include "sync/test_postgres_internal.h"

namespace serac::sync {
namespace {

std::string Mapped(PgType type) {
  auto mapped = IcebergTypeFor(type);
  EXPECT_TRUE(mapped.ok()) << mapped.status().ToString();
  if (!mapped.ok()) return "?";
  std::string name = mapped->type.id == iceberg::TypeId::kList
                         ? "list<" + mapped->type.fields[0].type.Name() + ">"
                         : mapped->type.Name();
  return name + (mapped->as_text ? " (text)" : "");
}

PgType Base(const char* name, int32_t modifier = -1) { return PgType{name, 'b', 'N', modifier, "", 'b'}; }
int32_t NumericModifier(int precision, int scale) { return ((precision << 16) | (scale & 0xFFFF)) + 4; }

TEST(TypeMappingTest, ExactWhereIcebergHasTheTypeAndWholeTextElsewhere) {
  EXPECT_EQ(Mapped(Base("int2")), "int");
  EXPECT_EQ(Mapped(Base("int8")), "long");
  EXPECT_EQ(Mapped(Base("float4")), "float");
  EXPECT_EQ(Mapped(Base("numeric", NumericModifier(12, 2))), "decimal(12, 2)");
  EXPECT_EQ(Mapped(Base("numeric", NumericModifier(38, 0))), "decimal(38, 0)");
  EXPECT_EQ(Mapped(Base("numeric", NumericModifier(39, 2))), "string (text)");  // beyond Iceberg's 38 digits
  EXPECT_EQ(Mapped(Base("numeric", NumericModifier(5, -2))), "string (text)");  // negative scale
  EXPECT_EQ(Mapped(Base("numeric")), "string (text)");                          // unconstrained
  EXPECT_EQ(Mapped(Base("money")), "decimal(19, 2)");
  EXPECT_EQ(Mapped(Base("date")), "date");
  EXPECT_EQ(Mapped(Base("timestamptz", 3)), "timestamptz");
  EXPECT_EQ(Mapped(Base("timetz")), "string (text)");
  EXPECT_EQ(Mapped(Base("interval")), "string (text)");
  EXPECT_EQ(Mapped(Base("jsonb")), "string (text)");
  EXPECT_EQ(Mapped(Base("uuid")), "uuid");
  EXPECT_EQ(Mapped(Base("bytea")), "binary");
  EXPECT_EQ(Mapped(Base("varchar", 24)), "string");
  EXPECT_EQ(Mapped(PgType{"mood", 'e', 'E', -1, "", 'b'}), "string (text)");
  EXPECT_EQ(Mapped(PgType{"positive", 'd', 'N', NumericModifier(10, 3), "numeric", 'b'}), "decimal(10, 3)");
  EXPECT_EQ(Mapped(PgType{"_int4", 'b', 'A', -1, "int4", 'b'}), "list<int>");
  EXPECT_EQ(Mapped(PgType{"_numeric", 'b', 'A', NumericModifier(8, 1), "numeric", 'b'}),
            "list<decimal(8, 1)>");
  EXPECT_EQ(Mapped(PgType{"_mood", 'b', 'A', -1, "mood", 'e'}), "list<string> (text)");
  EXPECT_FALSE(IcebergTypeFor(PgType{"_x", 'b', 'A', -1, "", 'b'}).ok());
}

TEST(TypeMappingTest, ColumnsOfARealPostgres) {
  std::optional<PostgresSource> found = TestPostgres();
  if (!found) GTEST_SKIP() << "SERAC_TEST_PG is not set (tests/test_sync.py sets it)";
  const PostgresSource source = *found;
  auto connection = PgConnection::Connect(source);
  ASSERT_TRUE(connection.ok()) << connection.status().ToString();
  for (const char* sql :
       {"DROP TABLE IF EXISTS mapped", "DROP DOMAIN IF EXISTS price", "DROP TYPE IF EXISTS feeling",
        "CREATE TYPE feeling AS ENUM ('sad', 'happy')",
        "CREATE DOMAIN price AS numeric(10, 2) CHECK (VALUE > 0)",
        "CREATE TABLE mapped (a smallint, b bigint, c numeric(20, 4), d numeric, e timestamptz(3), f date, "
        "g time, h timetz, i uuid, j jsonb, k bytea, l int4[], m text[], n feeling, o price, p interval, "
        "q inet, r money, s varchar(5), t real)"}) {
    auto done = connection->Query(sql);
    ASSERT_TRUE(done.ok()) << sql << ": " << done.status().ToString();
  }
  auto columns = connection->Query(
      // A domain's modifier is its own (pg_type.typtypmod), not the column's.
      "SELECT a.attname, t.typname, t.typtype, t.typcategory, "
      "CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END, "
      "coalesce(e.typname, b.typname, ''), coalesce(e.typtype, b.typtype, 'b') "
      "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
      "LEFT JOIN pg_type e ON e.oid = t.typelem AND t.typcategory = 'A' "
      "LEFT JOIN pg_type b ON b.oid = t.typbasetype AND t.typtype = 'd' "
      "WHERE a.attrelid = 'mapped'::regclass AND a.attnum > 0 ORDER BY a.attnum");
  ASSERT_TRUE(columns.ok()) << columns.status().ToString();
  std::string got;
  for (const auto& row : columns->rows) {
    PgType type{*row[1], (*row[2])[0], (*row[3])[0], std::stoi(*row[4]), *row[5], (*row[6])[0]};
    got += *row[0] + "=" + Mapped(type) + "; ";
  }
  EXPECT_EQ(
      got,
      "a=int; b=long; c=decimal(20, 4); d=string (text); e=timestamptz; f=date; g=time; h=string (text); "
      "i=uuid; j=string (text); k=binary; l=list<int>; m=list<string>; n=string (text); o=decimal(10, 2); "
      "p=string (text); q=string (text); r=decimal(19, 2); s=string; t=float; ");
}

}  // namespace
}  // namespace serac::sync
