// OLake's filter text read as OLake's grammar reads it, and the SQL it becomes.
#include "sync/stream_filter.h"

#include <gtest/gtest.h>

namespace serac::sync {
namespace {

std::string Sql(const char* text) {
  auto filter = ParseFilterText(text, "streams.json: stream public.t: filter");
  EXPECT_TRUE(filter.ok()) << text << ": " << filter.status().message();
  return filter.ok() ? filter->Sql() : "";
}

TEST(StreamFilterTest, OlakesDocumentedFormsBecomeSql) {
  EXPECT_EQ(Sql("city = \"London\""), "\"city\" = 'London'");
  EXPECT_EQ(Sql("  age > 20 and name = \"x\"  "), "\"age\" > 20 AND \"name\" = 'x'");
  EXPECT_EQ(Sql("a=1 OR b=null"), "\"a\" = 1 OR \"b\" IS NULL");
  EXPECT_EQ(Sql("b != NULL"), "\"b\" IS NOT NULL");
  EXPECT_EQ(Sql("x = 1e5"), "\"x\" = 1e5");
  EXPECT_EQ(Sql("x >= -9.5 and y < .5"), "\"x\" >= -9.5 AND \"y\" < .5");
  EXPECT_EQ(Sql("status = active"), "\"status\" = 'active'");
  EXPECT_EQ(Sql("flag = TRUE"), "\"flag\" = TRUE");
  EXPECT_EQ(Sql("\"Mixed Case\" <= \"it's\""), "\"Mixed Case\" <= 'it''s'");
}

TEST(StreamFilterTest, OtherSyntaxIsRefusedNamingWhere) {
  for (const char* text : {"city = 'London'", "a>1 AND b=2 or c=3", "age<>5", "x < null", "= 5", "a = \"open",
                           "a = 1 xor b = 2", "a = 5; DROP TABLE t"}) {
    auto filter = ParseFilterText(text, "streams.json: stream public.t: filter");
    ASSERT_FALSE(filter.ok()) << text;
    EXPECT_EQ(filter.status().message().rfind("streams.json: stream public.t: filter: ", 0), 0u)
        << filter.status().message();
  }
  auto quoted = ParseFilterText("city = 'London'", "f");
  EXPECT_NE(quoted.status().message().find("double quotes"), std::string::npos) << quoted.status().message();
}

}  // namespace
}  // namespace serac::sync
