#include "service/query_params.h"

#include <gtest/gtest.h>

namespace serac::service {
namespace {

TEST(QueryParamsTest, DecodesKeepsOrderAndFirstValueWins) {
  QueryParams query = QueryParams::Parse("b=2&a=x%2Fy+z&flag&&a=second&empty=&%ZZ=%E");
  EXPECT_EQ(query.Get("a"), "x/y z");
  EXPECT_TRUE(query.Has("flag"));
  EXPECT_EQ(query.Get("flag", "fallback"), "");
  EXPECT_EQ(query.Get("empty", "fallback"), "");
  EXPECT_EQ(query.Get("missing", "fallback"), "fallback");
  EXPECT_EQ(query.Find("missing"), nullptr);
  // What does not decode stays as sent, for the handler to judge.
  EXPECT_EQ(query.Get("%ZZ"), "%E");
  ASSERT_EQ(query.entries().size(), 6u);
  EXPECT_EQ(query.entries()[0].first, "b");
  EXPECT_EQ(query.entries()[3].second, "second");
  EXPECT_TRUE(QueryParams::Parse("").entries().empty());
}

}  // namespace
}  // namespace serac::service
