#include "common/json_reads.h"

#include <gtest/gtest.h>

namespace serac {
namespace {

TEST(ParseJsonTest, MalformedTextNamesTheLineAndColumnAsAnEditorDoes) {
  auto parsed = ParseJson("{\n  \"host\": \"db\",\n  \"port\": 5432,\n}\n");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "malformed JSON at line 4, column 1");

  parsed = ParseJson("{\"a\": 1,\n \"b\": tru }");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(), "malformed JSON at line 2, column 10");

  parsed = ParseJson("{\"password\": \"secret-value");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message().find("secret"), std::string::npos);
  EXPECT_NE(parsed.status().message().find("line 1"), std::string::npos);

  // A number no JSON number type holds fails without a position, and without throwing.
  parsed = ParseJson("{\"n\": 1e99999}");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message().rfind("malformed JSON", 0), 0u);
}

}  // namespace
}  // namespace serac
