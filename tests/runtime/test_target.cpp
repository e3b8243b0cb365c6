#include <gtest/gtest.h>

#include <stdexcept>

#include "codegen/target.h"

namespace hi {
namespace {

TEST(ParseTarget, AmdWithoutFeatures) {
  Target target = parse_target("gfx90a");
  EXPECT_EQ(target.kind, TargetKind::Amd);
  EXPECT_EQ(target.arch, "gfx90a");
  EXPECT_TRUE(target.features.empty());
  EXPECT_EQ(target.warp_size, 64);
  EXPECT_EQ(target.id(), "gfx90a");
}

TEST(ParseTarget, AmdWithFeaturesRoundTrips) {
  Target target = parse_target("gfx942:sramecc+:xnack-");
  EXPECT_EQ(target.arch, "gfx942");
  EXPECT_EQ(target.features, (std::vector<std::string>{"sramecc+", "xnack-"}));
  EXPECT_EQ(target.warp_size, 64);
  EXPECT_EQ(target.id(), "gfx942:sramecc+:xnack-");
  EXPECT_EQ(target.file_tag(), "gfx942_sramecc+_xnack-");
  EXPECT_EQ(parse_target(target.id()).id(), target.id());
}

TEST(ParseTarget, RdnaRunsWave32) {
  EXPECT_EQ(parse_target("gfx1100").warp_size, 32);
  EXPECT_EQ(parse_target("gfx1030").warp_size, 32);
  EXPECT_EQ(parse_target("gfx1151").warp_size, 32);
  EXPECT_EQ(parse_target("gfx908").warp_size, 64);
  EXPECT_EQ(parse_target("gfx803").warp_size, 64);
}

TEST(ParseTarget, Nvidia) {
  for (const char* name : {"sm_80", "sm_90", "sm_90a", "sm_100a"}) {
    Target target = parse_target(name);
    EXPECT_EQ(target.kind, TargetKind::Nvidia) << name;
    EXPECT_EQ(target.arch, name);
    EXPECT_EQ(target.warp_size, 32);
    EXPECT_EQ(target.id(), name);
  }
}

TEST(ParseTarget, Cpu) {
  Target cpu = parse_target("cpu");
  EXPECT_EQ(cpu.kind, TargetKind::Cpu);
  EXPECT_EQ(cpu.warp_size, 32);
  EXPECT_EQ(cpu.id(), "cpu");
  Target wide = parse_target("cpu-w64");
  EXPECT_EQ(wide.kind, TargetKind::Cpu);
  EXPECT_EQ(wide.arch, "cpu");
  EXPECT_EQ(wide.warp_size, 64);
  EXPECT_EQ(wide.id(), "cpu-w64");
}

TEST(ParseTarget, RejectsInvalidNamesWithTheTextAndTheAcceptedForms) {
  for (const char* name : {"", "gfx", "gfx9", "gfx90a:", "gfx90a:xnack", "gfx90a:xnack+:xnack-", "gfx942:Sramecc+",
                           "GFX90A", "gfx90g", "sm_9", "sm_90b", "sm90", "cpu-w32", "cuda", " gfx90a",
                           "sm_90:xnack+"}) {
    try {
      parse_target(name);
      ADD_FAILURE() << "accepted '" << name << "'";
    } catch (const std::invalid_argument& error) {
      std::string message = error.what();
      EXPECT_NE(message.find("'" + std::string(name) + "'"), std::string::npos) << message;
      EXPECT_NE(message.find("gfx942:sramecc+:xnack-"), std::string::npos) << message;
      EXPECT_NE(message.find("cpu-w64"), std::string::npos) << message;
    }
  }
}

// Names of the right form that no compiler knows, and features a processor does not have: refused by name before any
// compiler sees them (HIPRTC aborts or crashes on them).
TEST(ParseTarget, RejectsUnknownProcessorsAndFeaturesNamingTheOneAtFault) {
  const std::pair<const char*, const char*> cases[] = {
      {"gfx999", "unknown AMD processor 'gfx999'"},
      {"gfx9000", "unknown AMD processor 'gfx9000'"},
      {"gfx1109", "unknown AMD processor 'gfx1109'"},
      {"gfx1201", "unknown AMD processor 'gfx1201'"},
      {"gfx942:bogus+", "unknown feature 'bogus' for gfx942"},
      {"gfx942:sramecc+:bogus-", "unknown feature 'bogus' for gfx942"},
      {"gfx1100:xnack+", "unknown feature 'xnack' for gfx1100"},
      {"gfx900:sramecc+", "unknown feature 'sramecc' for gfx900"},
      {"sm_9", "NVIDIA targets are sm_ followed by the compute capability"},
      {"sm_90b", "NVIDIA targets are sm_ followed by the compute capability"},
  };
  for (const auto& [name, why] : cases) {
    try {
      parse_target(name);
      ADD_FAILURE() << "accepted '" << name << "'";
    } catch (const std::invalid_argument& error) {
      std::string message = error.what();
      EXPECT_NE(message.find("'" + std::string(name) + "'"), std::string::npos) << message;
      EXPECT_NE(message.find(why), std::string::npos) << message;
    }
  }
  for (const char* name : {"gfx906:sramecc-:xnack+", "gfx90a:xnack+", "gfx1010:xnack-", "gfx1151", "sm_120a"})
    EXPECT_EQ(parse_target(name).id(), name);
}

}  // namespace
}  // namespace hi
