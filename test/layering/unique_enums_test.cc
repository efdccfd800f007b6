// One enum per concept: scans the product sources for enum definitions and fails when a name is
// defined twice (in any namespace), when an enum has the name of a class or struct, or when a
// concept several parts share lives anywhere but its one owner header (docs/layering.rules,
// part vocabulary). It once had three Phase enums, three collective enums and CommGroup as both
// an enum (model/) and a class (topology/).
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

// Where each enum and each class / struct name is defined ("path:line").
struct Definitions {
  std::map<std::string, std::vector<std::string>> enums;
  std::map<std::string, std::vector<std::string>> classes;

  void scan(const std::string& path, std::istream& in) {
    // enum, enum class, enum struct with a name (an anonymous enum names no concept).
    static const std::regex kEnum(R"re(^\s*enum\s+(?:class\s+|struct\s+)?([A-Za-z_]\w*))re");
    // A class or struct definition (not a forward declaration "class X;").
    static const std::regex kClass(R"re(^\s*(?:class|struct)\s+(?:alignas\(\w+\)\s+)?([A-Za-z_]\w*)\b(?!\s*;))re");
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      std::smatch m;
      if (std::regex_search(line, m, kEnum)) enums[m[1].str()].push_back(path + ":" + std::to_string(n));
      else if (std::regex_search(line, m, kClass)) classes[m[1].str()].push_back(path + ":" + std::to_string(n));
    }
  }

  // One message per name defined twice or shared by an enum and a class; empty when none.
  [[nodiscard]] std::vector<std::string> problems() const {
    std::vector<std::string> out;
    for (const auto& [name, where] : enums) {
      if (where.size() > 1) {
        std::string list;
        for (const std::string& w : where) list += (list.empty() ? "" : ", ") + w;
        out.push_back("enum " + name + " is defined " + std::to_string(where.size()) + " times: " + list);
      }
      if (const auto c = classes.find(name); c != classes.end()) {
        out.push_back("enum " + name + " (" + where[0] + ") has the name of a class (" + c->second[0] + ")");
      }
    }
    return out;
  }
};

Definitions scan_sources() {
  const fs::path root(MOFASIM_SOURCE_DIR);
  Definitions d;
  for (const char* dir : {"model", "schedules", "topology", "sim"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
      std::ifstream in(entry.path());
      d.scan(fs::relative(entry.path(), root).generic_string(), in);
    }
  }
  return d;
}

TEST(UniqueEnums, EveryEnumNameIsDefinedOnceAndNamesNoClass) {
  const Definitions d = scan_sources();
  EXPECT_GT(d.enums.size(), 50U);  // 60 enums when written: the scan sees the sources
  EXPECT_GT(d.classes.size(), 200U);
  for (const std::string& p : d.problems()) ADD_FAILURE() << p;
}

TEST(UniqueEnums, SharedConceptsLiveInTheirOwnerHeader) {
  const Definitions d = scan_sources();
  // The vocabulary several parts share, each in a header of its own with no dependencies.
  const std::map<std::string, std::string> kOwner = {
      {"Phase", "schedules/phase.h"},                   // a pass: F, B, Bi, W
      {"CollectiveKind", "topology/collective_kind.h"},  // every collective the op table, plan and tasks name
      {"ScheduleKind", "schedules/schedule_kind.h"},
  };
  for (const auto& [name, owner] : kOwner) {
    ASSERT_TRUE(d.enums.contains(name)) << name;
    for (const std::string& where : d.enums.at(name)) {
      EXPECT_EQ(where.substr(0, where.find(':')), owner) << name << " defined outside its owner: " << where;
    }
  }
  // Names retired for the ones above: a new enum under them would be a second collective kind.
  for (const char* retired : {"Collective", "CommGroup"}) {
    EXPECT_FALSE(d.enums.contains(retired)) << "enum " << retired << " at " << d.enums.at(retired)[0];
  }
}

TEST(UniqueEnums, ReportsASecondDefinitionAndAnEnumNamedLikeAClass) {
  Definitions d;
  std::istringstream schedules("#pragma once\nenum class Phase : std::uint8_t { kForward, kBackward };\n");
  std::istringstream model("namespace m {\n  enum class Phase { kForward };\nenum class CommGroup { kTp };\n}\n");
  std::istringstream topology("class CommGroup {\n public:\n};\nclass Forward;\nstruct alignas(64) Slot {};\n");
  d.scan("schedules/phase.h", schedules);
  d.scan("model/op_table.h", model);
  d.scan("topology/comm_group.h", topology);
  const std::vector<std::string> expected = {
      "enum CommGroup (model/op_table.h:3) has the name of a class (topology/comm_group.h:1)",
      "enum Phase is defined 2 times: schedules/phase.h:2, model/op_table.h:2",
  };
  EXPECT_EQ(d.problems(), expected);
  EXPECT_FALSE(d.classes.contains("Forward"));  // a forward declaration defines nothing
  EXPECT_TRUE(d.classes.contains("Slot"));
}

}  // namespace
