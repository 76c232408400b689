#include "common/json_nesting.h"

#include <gtest/gtest.h>

#include <string>

namespace serac {
namespace {

std::string Nested(size_t levels, char open, char close) {
  return std::string(levels, open) + std::string(levels, close);
}

TEST(JsonNestingTest, CountsArraysAndObjectsTogether) {
  EXPECT_TRUE(JsonNestingWithin("", 0));
  EXPECT_TRUE(JsonNestingWithin("42", 0));
  EXPECT_FALSE(JsonNestingWithin("[]", 0));
  EXPECT_TRUE(JsonNestingWithin("[]", 1));
  EXPECT_TRUE(JsonNestingWithin(R"({"a":[{"b":[]}]})", 4));
  EXPECT_FALSE(JsonNestingWithin(R"({"a":[{"b":[]}]})", 3));
  EXPECT_TRUE(JsonNestingWithin(R"([[],[],[[]]])", 3));
  EXPECT_FALSE(JsonNestingWithin(R"([[],[],[[[]]]])", 3));
}

TEST(JsonNestingTest, BracketsInStringsDoNotCount) {
  EXPECT_TRUE(JsonNestingWithin(R"({"k":"[[[[{{{{"})", 1));
  EXPECT_TRUE(JsonNestingWithin(R"(["a\"[[[[", "\\"])", 1));
  // An escaped backslash ends the escape: the quote after it closes the string.
  EXPECT_FALSE(JsonNestingWithin(R"(["\\", [[]]])", 2));
}

TEST(JsonNestingTest, DeepBodiesAreRefusedWithoutRecursion) {
  EXPECT_FALSE(JsonNestingWithin(Nested(1000000, '[', ']'), 1000));
  EXPECT_TRUE(JsonNestingWithin(Nested(1000, '{', '}'), 1000));
  // Unbalanced or invalid text is only measured, never rejected here.
  EXPECT_TRUE(JsonNestingWithin("]]]]}}}[", 1));
}

}  // namespace
}  // namespace serac
