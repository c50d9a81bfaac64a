// Checks on rendered HTML pages for tests: which fragments of markup a page holds.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace rdv_test {

inline bool Contains(std::string_view page, std::string_view fragment) {
  return page.find(fragment) != std::string_view::npos;
}

// Fails the test for each fragment of `present` that `page` lacks and each of `absent` it holds,
// naming the fragment.
inline void ExpectFragments(std::string_view page, std::initializer_list<std::string_view> present,
                            std::initializer_list<std::string_view> absent = {}) {
  for (std::string_view f : present) EXPECT_TRUE(Contains(page, f)) << "missing: " << f;
  for (std::string_view f : absent) EXPECT_FALSE(Contains(page, f)) << "present: " << f;
}

}  // namespace rdv_test
