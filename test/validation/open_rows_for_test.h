// Small open-set CSV texts for the unit tests: one header and rows built from a base row (shaped
// after InternLM-7B on 16 A100-SXM4 GPUs over 4x 100 Gb RoCE, O-ILM-02) with named cells replaced.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/analysis/measured_open_reader.h"
#include "sim/analysis/measured_reader.h"

namespace mofasim::analysis::test {

inline std::map<std::string, std::string> base_open_row() {
  return {{"id", "O-ILM-02"},
          {"source", "a unit test's row"},  // names no framework: the id's group decides
          {"gpu", "A100-SXM4-80GB"},
          {"gpus", "16"},
          {"gpus_per_node", "8"},
          {"interconnect", "8x A100-SXM4-80GB per node (NVLink/NVSwitch); inter-node 4x 100 Gb RoCE per node"},
          {"model", "InternLM-7B"},
          {"layers", "32"},
          {"hidden", "4096"},
          {"heads", "32"},
          {"kv_heads", "32"},
          {"ffn_hidden", "11008"},
          {"vocab", "103168"},
          {"seq", "2048"},
          {"moe_experts", ""},
          {"moe_topk", ""},
          {"moe_ffn_hidden", ""},
          {"shared_experts", ""},
          {"tp", "1"},
          {"pp", "1"},
          {"vpp", "1"},
          {"cp", "1"},
          {"ep", "1"},
          {"dp", "16"},
          {"micro_batch", "2"},
          {"global_batch", "128"},
          {"recompute", "none (checkpoint=False)"},
          {"precision", "bf16"},
          {"optimizer_sharding", "ZeRO-1 over all DP ranks (zero1=-1)"},
          {"measured_quantity", "tokens_per_s_per_gpu"},
          {"measured_value", "3842"},
          {"flops_convention", ""},
          {"notes", "derived step_s=4.264"}};
}

inline std::string csv_quoted(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The header and one line per row; each row is the base row with `changes` applied.
inline std::string open_csv(const std::vector<std::map<std::string, std::string>>& changes) {
  std::string text;
  for (const std::string& c : open_run_columns()) text += (text.empty() ? "" : ",") + c;
  text += "\n";
  for (const auto& change : changes) {
    std::map<std::string, std::string> row = base_open_row();
    for (const auto& [k, v] : change) row[k] = v;
    std::string line;
    for (const std::string& c : open_run_columns()) line += (c == "id" ? "" : ",") + csv_quoted(row.at(c));
    text += line + "\n";
  }
  return text;
}

// The one row of open_csv({change}).
inline OpenRun open_row(const std::map<std::string, std::string>& change = {}) {
  return parse_open_runs_csv(open_csv({change}), "runs.csv").at(0);
}

}  // namespace mofasim::analysis::test
