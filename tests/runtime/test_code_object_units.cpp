// The units container (code_object_units.h): what a GPU module compiled as several units is stored and loaded as.
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/code_object_units.h"

namespace hi {
namespace {

std::vector<char> bytes(const std::string& s) { return {s.begin(), s.end()}; }

std::vector<CodeObjectUnit> two_units() {
  return {{{"k0", "k1"}, bytes("\x7f" "ELF first part")}, {{"k2"}, bytes("\x7f" "ELF second")}};
}

TEST(CodeObjectUnits, RoundTripsEveryPartAndKernelInOrder) {
  std::vector<char> packed = pack_code_object_units(two_units());
  ASSERT_TRUE(is_code_object_units(packed));
  std::vector<CodeObjectUnit> parts = unpack_code_object_units(packed);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].kernels, (std::vector<std::string>{"k0", "k1"}));
  EXPECT_EQ(parts[1].kernels, (std::vector<std::string>{"k2"}));
  EXPECT_EQ(parts[0].binary, bytes("\x7f" "ELF first part"));
  EXPECT_EQ(parts[1].binary, bytes("\x7f" "ELF second"));
  // Plain code objects are never taken for a container.
  EXPECT_FALSE(is_code_object_units(bytes("\x7f" "ELF\x02\x01\x01")));
  EXPECT_FALSE(is_code_object_units(bytes("__CLANG_OFFLOAD_BUNDLE__")));
  EXPECT_FALSE(is_code_object_units(bytes("HIUNIT")));
  EXPECT_THROW(pack_code_object_units({}), std::invalid_argument);
}

TEST(CodeObjectUnits, DamagedContainersAreRejectedSayingWhy) {
  const std::vector<char> good = pack_code_object_units(two_units());
  auto problem = [](const std::vector<char>& b) {
    try {
      unpack_code_object_units(b);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  // Cut anywhere past the magic: truncated.
  for (size_t size = 8; size < good.size(); ++size)
    EXPECT_NE(problem(std::vector<char>(good.begin(), good.begin() + long(size))).find("truncated"),
              std::string::npos) << size;
  std::vector<char> trailing = good;
  trailing.push_back('x');
  EXPECT_NE(problem(trailing).find("after its last part"), std::string::npos);
  // A size that claims more than the file holds is not allocated, only reported.
  std::vector<char> huge = good;
  const uint64_t absurd = ~uint64_t{0};
  size_t first_size_at = 8 + 4 + 4 + (4 + 2) * 2;
  std::memcpy(huge.data() + first_size_at, &absurd, 8);
  EXPECT_NE(problem(huge).find("truncated"), std::string::npos);
  std::vector<char> no_parts = good;
  no_parts.resize(12);
  std::memset(no_parts.data() + 8, 0, 4);
  EXPECT_NE(problem(no_parts).find("no parts"), std::string::npos);
  EXPECT_NE(problem(pack_code_object_units({{{"k"}, bytes("a")}, {{"k"}, bytes("b")}})).find("twice"),
            std::string::npos);
  EXPECT_NE(problem(pack_code_object_units({{{"k"}, {}}})).find("empty"), std::string::npos);
  EXPECT_NE(problem(bytes("\x7f" "ELF")).find("magic"), std::string::npos);
}

}  // namespace
}  // namespace hi
