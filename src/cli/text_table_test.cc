#include "cli/text_table.h"

#include <gtest/gtest.h>

namespace serac::cli {
namespace {

TEST(TextTableTest, PadsColumnsToTheWidestCell) {
  EXPECT_EQ(FormatTable({"NAME", "STATUS"}, {{"alice", "enabled"}, {"bo", "disabled"}}),
            "NAME   STATUS\n"
            "alice  enabled\n"
            "bo     disabled\n");
}

TEST(TextTableTest, ShortRowsAndEmptyTables) {
  EXPECT_EQ(FormatTable({"A", "B", "C"}, {{"x"}, {"y", "", "z"}}),
            "A  B  C\n"
            "x\n"
            "y     z\n");
  EXPECT_EQ(FormatTable({"NAME"}, {}), "NAME\n");
}

}  // namespace
}  // namespace serac::cli
