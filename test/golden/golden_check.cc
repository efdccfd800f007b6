// golden_check: runs one mofasim command and compares its JSON output with a committed expected
// result, field by field, within the tolerance tolerances.txt gives that field.
//
//   golden_check EXPECTED.json TOLERANCES.txt MOFASIM ARGS...
//
// Exit 0 when every field matches, 1 with one line per differing field otherwise, 2 when the
// command fails or prints something that is not JSON. With MOFASIM_GOLDEN_UPDATE=1 in the
// environment it writes the output to EXPECTED.json instead (test/golden/regenerate.sh).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

// A field's tolerance: |got - expected| <= rel * max(|got|, |expected|) + abs.
struct Tolerance {
  std::string suffix;  // matches a field path ending with it ("*" matches every field)
  double rel = 0;
  double abs = 0;
};

std::vector<Tolerance> read_tolerances(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<Tolerance> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Tolerance t;
    if (!(fields >> t.suffix >> t.rel >> t.abs) || t.rel < 0 || t.abs < 0) {
      throw std::runtime_error(path + ":" + std::to_string(n) + ": expected 'FIELD REL ABS' with REL, ABS >= 0");
    }
    out.push_back(t);
  }
  return out;
}

// The last matching line wins, so specific fields follow the "*" default in the file.
Tolerance tolerance_for(const std::vector<Tolerance>& all, const std::string& path) {
  Tolerance found{.suffix = "*", .rel = 0, .abs = 0};
  for (const Tolerance& t : all) {
    const bool ends = path.size() >= t.suffix.size() && path.compare(path.size() - t.suffix.size(), t.suffix.size(), t.suffix) == 0;
    if (t.suffix == "*" || ends) found = t;
  }
  return found;
}

void compare(const json& want, const json& got, const std::string& path, const std::vector<Tolerance>& tol,
             std::vector<std::string>& diffs) {
  if (want.is_number() && got.is_number()) {
    const double w = want.get<double>();
    const double g = got.get<double>();
    const Tolerance t = tolerance_for(tol, path);
    if (!(std::abs(g - w) <= t.rel * std::max(std::abs(g), std::abs(w)) + t.abs)) {
      std::ostringstream s;
      s.precision(17);
      s << path << ": expected " << w << ", got " << g << " (tolerance rel " << t.rel << ", abs " << t.abs << ")";
      diffs.push_back(s.str());
    }
    return;
  }
  if (want.type() != got.type()) {
    diffs.push_back(path + ": expected " + want.dump() + ", got " + got.dump());
    return;
  }
  if (want.is_object()) {
    for (const auto& [key, value] : want.items()) {
      if (!got.contains(key)) {
        diffs.push_back(path + "." + key + ": missing");
      } else {
        compare(value, got[key], path + "." + key, tol, diffs);
      }
    }
    for (const auto& [key, value] : got.items()) {
      if (!want.contains(key)) diffs.push_back(path + "." + key + ": not in the expected result");
    }
    return;
  }
  if (want.is_array()) {
    if (want.size() != got.size()) {
      diffs.push_back(path + ": expected " + std::to_string(want.size()) + " entries, got " + std::to_string(got.size()));
      return;
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      // Name array entries by their "name" field when they have one (validate's fields).
      const std::string label = want[i].is_object() && want[i].contains("name") ? want[i]["name"].get<std::string>()
                                                                                : std::to_string(i);
      compare(want[i], got[i], path + "[" + label + "]", tol, diffs);
    }
    return;
  }
  if (want != got) diffs.push_back(path + ": expected " + want.dump() + ", got " + got.dump());
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: golden_check EXPECTED.json TOLERANCES.txt MOFASIM ARGS...\n";
    return 2;
  }
  const std::string expected_path = argv[1];
  try {
    const std::vector<Tolerance> tol = read_tolerances(argv[2]);
    std::string command;
    for (int i = 3; i < argc; ++i) command += (i > 3 ? " " : "") + quote(argv[i]);
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
    std::string output;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
    const int status = pclose(pipe);
    if (status != 0) throw std::runtime_error(command + " exited with status " + std::to_string(status));
    const json got = json::parse(output);
    const char* update = std::getenv("MOFASIM_GOLDEN_UPDATE");
    if (update != nullptr && std::string(update) == "1") {
      std::ofstream out(expected_path);
      out << got.dump(2) << "\n";
      if (!out) throw std::runtime_error("cannot write " + expected_path);
      std::cout << "updated " << expected_path << "\n";
      return 0;
    }
    std::ifstream in(expected_path);
    if (!in) throw std::runtime_error("cannot read " + expected_path + " (run test/golden/regenerate.sh)");
    const json want = json::parse(in);
    std::vector<std::string> diffs;
    compare(want, got, "$", tol, diffs);
    if (diffs.empty()) return 0;
    std::cout << command << "\n  differs from " << expected_path << ":\n";
    for (const std::string& d : diffs) std::cout << "  " << d << "\n";
    std::cout << "If the change is intended, run test/golden/regenerate.sh and commit the new results.\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "golden_check: " << e.what() << "\n";
    return 2;
  }
}
