// The importer behind import_megatron (megatron_import.h), shared by its source files: the flags
// of one launch, last occurrence winning, and the scenario sections they produce. Internal to
// sim/interop: megatron_import.cc holds the model and the YAML, megatron_import_layout.cc the
// parallel layout, batch and cluster, megatron_import_features.cc recompute, precision, the
// optimizer and the overlaps.
#pragma once

#include <algorithm>
#include <charconv>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/interop/megatron_flags.h"
#include "sim/interop/megatron_import.h"
#include "sim/interop/megatron_script.h"

namespace mofasim::interop::detail {

std::string cli_error(std::string_view option, std::string_view message);

struct Entry {
  std::string key, value, comment;
};

class Importer {
 public:
  Importer(const std::string& text, const MegatronImportOptions& options) : opt_(options) {
    for (FlagOccurrence& f : collect_flags(script_words(text), megatron_flag_arity)) {
      const MegatronFlag* known = find_megatron_flag(f.name);
      if (known == nullptr) {
        note(out_.unknown, f, "not a flag the importer knows");
      } else if (known->use == FlagUse::kIgnored) {
        note(out_.ignored, f, std::string(known->reason));
      } else if (known->use == FlagUse::kUnsupported) {
        note(out_.unsupported, f, std::string(known->reason));
      } else {
        flags_[f.name] = std::move(f);
      }
    }
  }


  MegatronImport run() {
    model();
    parallelism();
    optimizations();
    training();
    cluster();
    for (auto* list : {&out_.ignored, &out_.unsupported, &out_.unknown}) {
      std::stable_sort(list->begin(), list->end(), [](const MegatronFlagNote& a, const MegatronFlagNote& b) {
        return a.line != b.line ? a.line < b.line : a.col < b.col;
      });
    }
    out_.yaml = render();
    return std::move(out_);
  }


 private:
  // ------------------------------------------------------------------ flag access
  [[nodiscard]] bool has(const std::string& flag) const { return flags_.count(flag) != 0; }
  [[nodiscard]] const FlagOccurrence& at(const std::string& flag) const { return flags_.at(flag); }

  [[noreturn]] void bad(const std::string& flag, const std::string& message) const {
    const FlagOccurrence& f = at(flag);
    throw ImportError(opt_.source_name + ":" + std::to_string(f.at.line) + ":" + std::to_string(f.at.col) + ": " +
                      flag + ": " + message);
  }

  [[nodiscard]] std::string word(const std::string& flag) const {
    const FlagOccurrence& f = at(flag);
    if (f.values.empty()) bad(flag, "expects a value");
    return f.values.front();
  }

  [[nodiscard]] long long integer(const std::string& flag, long long min = 1) const {
    const std::string w = word(flag);
    long long v = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size()) {
      if (!w.empty() && w[0] == '$') bad(flag, "value '" + w + "' is a variable the script never sets");
      bad(flag, "expected an integer, got '" + w + "'");
    }
    if (v < min) bad(flag, "must be >= " + std::to_string(min) + ", got " + w);
    if (v > 2147483647LL) bad(flag, "too large: " + w);
    return v;
  }

  [[nodiscard]] int int_or(const std::string& flag, int fallback) const {
    return has(flag) ? static_cast<int>(integer(flag)) : fallback;
  }

  void note(std::vector<MegatronFlagNote>& list, const FlagOccurrence& f, std::string reason) {
    std::string value;
    for (const std::string& v : f.values) value += (value.empty() ? "" : " ") + v;
    list.push_back({.flag = f.name, .value = value, .reason = std::move(reason), .line = f.at.line, .col = f.at.col});
  }
  void unsupported_value(const std::string& flag, std::string reason) { note(out_.unsupported, at(flag), std::move(reason)); }

  [[nodiscard]] std::string from(const std::string& flag) const { return flag + " " + word(flag); }

  void set(const std::string& section, const std::string& key, const std::string& value, const std::string& why) {
    sections_[section].push_back({key, value, why});
  }

  // megatron_import.cc
  void model();
  void vocab();
  void norm_and_position();
  void attention();
  void window();
  void moe();
  void moe_layer_freq();
  [[nodiscard]] std::string render() const;
  // megatron_import_layout.cc
  void parallelism();
  void context_parallel();
  void pipeline_split();
  void training();
  void cluster();
  // megatron_import_features.cc
  void optimizations();
  void recompute();
  void precision();
  void optimizer();
  void overlaps();

  const MegatronImportOptions& opt_;
  std::map<std::string, FlagOccurrence> flags_;
  std::map<std::string, std::vector<Entry>> sections_;
  MegatronImport out_;
  std::string params_dtype_ = "bf16", params_dtype_why_;  // precision() -> optimizer()
  int layers_ = 0, hidden_ = 0, heads_ = 0, seq_ = 0, ffn_ = 0, tp_ = 1, pp_ = 1, cp_ = 1, micro_ = 1, vpp_ = 1;
};

}  // namespace mofasim::interop::detail
