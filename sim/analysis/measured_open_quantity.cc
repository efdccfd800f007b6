// Row quantities and FLOP conventions of the open set (see measured_open_quantity.h).
#include "sim/analysis/measured_open_quantity.h"

#include <initializer_list>
#include <regex>
#include <stdexcept>

#include "sim/analysis/measured_open_text.h"
#include "sim/units/check.h"

namespace mofasim::analysis {
namespace {

double tokens_per_step(const OpenRun& run) { return static_cast<double>(run.global_batch) * run.seq; }

// B·s·L·h², the factor the Megatron papers' GPT formulas share.
double gpt_bslh2(const OpenRun& run) {
  return tokens_per_step(run) * run.layers * static_cast<double>(run.hidden) * run.hidden;
}

// Only rows that quantity_not_comparable() let through reach here, so an unknown convention is
// an internal error, not a row to report.
FlopConvention convention_of(const OpenRun& run) {
  const auto c = recognised_flop_convention(run.flops_convention);
  MOFASIM_CHECK(c.has_value(), run.id + ": a tflops_per_gpu row under a FLOP convention with no formula here ('" +
                                   run.flops_convention + "') reached the prediction; quantity_not_comparable lists such rows");
  return *c;
}

}  // namespace

std::optional<FlopConvention> recognised_flop_convention(const std::string& text) {
  if (text.starts_with("InternLM get_megatron_flops")) return FlopConvention::kInternLmMegatron;
  // Bounded patterns: the text is at most kMaxOpenCellChars (measured_open_reader.h).
  static const std::regex kNarayanan(R"(narayanan|ptd-p|96\s?(?:·|\*|x)?\s?b\s?(?:·|\*)?\s?s\s?(?:·|\*)?\s?l)", std::regex::icase);
  static const std::regex kKorthikanti(R"(korthikanti|72\s?(?:·|\*|x)?\s?b\s?(?:·|\*)?\s?s\s?(?:·|\*)?\s?l)", std::regex::icase);
  static const std::regex kSixN(R"(\b6\s?(?:·|\*|x)?\s?n(?![a-z0-9]))", std::regex::icase);  // "6*N", "6·N_nonembedding"
  static const std::regex kAttention(R"(12\s?(?:·|\*)?\s?l\s?(?:·|\*)?\s?h\s?(?:·|\*)?\s?q\s?(?:·|\*)?\s?t)", std::regex::icase);
  if (std::regex_search(text, kNarayanan)) return FlopConvention::kNarayanan;
  if (std::regex_search(text, kKorthikanti)) return FlopConvention::kKorthikantiModel;
  if (std::regex_search(text, kSixN) && std::regex_search(text, kAttention)) return FlopConvention::kSixNPlusAttention;
  return std::nullopt;
}

std::optional<double> six_n_parameters(const OpenRun& run) {
  if (run.is_moe() || !run.kv_heads || !run.ffn_hidden || run.heads < 1 || run.hidden % run.heads != 0) return std::nullopt;
  const double h = run.hidden;
  const double q = static_cast<double>(run.hidden / run.heads);
  const double attention = h * run.heads * q * 2 + h * *run.kv_heads * q * 2;  // wq, wo; wk, wv
  const double mlp = 3 * h * *run.ffn_hidden;                                  // w1, w2, w3
  const double layer = attention + mlp + 2 * h;                                // + attention / ffn norms
  return run.layers * layer + h + static_cast<double>(run.vocab) * h;           // + final norm, output
}

std::optional<double> mfu_peak_flops(const OpenRun& run) {
  const std::string text = run.flops_convention + "; " + run.notes;
  // One peak the text states: "MFU vs 989 TF", "of 312 TFLOPS peak". Several (a source's per-GPU
  // list) leave it to the GPU.
  static const std::regex kPeak(R"((\d{2,5}(?:\.\d{1,3})?)\s?TF(?:LOPS)?\b)");
  std::optional<std::string> stated;
  bool several = false;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kPeak); it != std::sregex_iterator(); ++it) {
    const std::string value = (*it)[1].str();
    if (stated && *stated != value) several = true;
    stated = value;
  }
  if (stated && !several) return std::stod(*stated) * 1e12;
  const auto named = [&](std::initializer_list<const char*> words) { return has_any(run.gpu, words); };
  double bf16 = 0;
  if (named({"gb300", "gb200"})) {
    bf16 = 2500e12;
  } else if (named({"b300", "b200"})) {
    bf16 = 2250e12;
  } else if (named({"h100", "h200", "h800"}) && !named({"pcie", "h100 nvl", "h100-nvl"})) {
    bf16 = 989e12;
  } else if (named({"a100"})) {
    bf16 = 312e12;
  }
  if (bf16 == 0) return std::nullopt;
  return has(text, "fp8 peak") ? 2 * bf16 : bf16;
}

double convention_flops_per_step(const OpenRun& run, FlopConvention convention, model::RecomputeKind recompute) {
  switch (convention) {
    case FlopConvention::kInternLmMegatron: {
      if (!run.ffn_hidden) throw std::invalid_argument(run.id + ": the InternLM FLOP convention needs ffn_hidden");
      const double f = recompute == model::RecomputeKind::kFull ? 4 : 3;
      const double B = run.global_batch;
      const double s = run.seq;
      const double h = run.hidden;
      // InternLM passes its config's mlp_ratio (8/3 for SwiGLU), not the width it rounds up to a
      // multiple of 256 (11008 for h = 4096): recover 8/3 when the row's width is that rounding.
      const long long swiglu_width = (8LL * run.hidden / 3 + 255) / 256 * 256;
      const double r = *run.ffn_hidden == swiglu_width ? 8.0 / 3.0 : static_cast<double>(*run.ffn_hidden) / h;
      return f * ((8 + 4 * 1.5 * r) * B * s * h * h + 4 * B * s * s * h) * run.layers + 6 * B * s * h * run.vocab;
    }
    case FlopConvention::kNarayanan:
      return 96 * gpt_bslh2(run) * (1 + run.seq / (6.0 * run.hidden) + run.vocab / (16.0 * run.layers * run.hidden));
    case FlopConvention::kKorthikantiModel:
      return 72 * gpt_bslh2(run) * (1 + run.seq / (6.0 * run.hidden) + run.vocab / (12.0 * run.hidden * run.layers));
    case FlopConvention::kSixNPlusAttention: {
      const auto n = six_n_parameters(run);
      if (!n) throw std::invalid_argument(run.id + ": the 6·N convention needs a dense row with kv_heads and ffn_hidden");
      const double attention = 12.0 * run.layers * run.heads * (static_cast<double>(run.hidden) / run.heads) * run.seq;
      return (6 * *n + attention) * tokens_per_step(run);
    }
  }
  return 0;
}

std::optional<std::string> quantity_not_comparable(const OpenRun& run) {
  if (run.quantity != OpenQuantity::kTflopsPerGpu && run.quantity != OpenQuantity::kMfu) return std::nullopt;
  const std::string quantity(open_quantity_name(run.quantity));
  const auto convention = recognised_flop_convention(run.flops_convention);
  if (!convention) {
    std::string name = run.flops_convention.substr(0, run.flops_convention.find_first_of("(;"));
    while (!name.empty() && name.back() == ' ') name.pop_back();
    return quantity + " under a FLOP convention whose formula the row does not state (" + (name.empty() ? "none given" : name) + ")";
  }
  if (*convention == FlopConvention::kSixNPlusAttention && !six_n_parameters(run)) {
    return quantity + " under the 6·N + 12·L·H·Q·T convention on a row whose N is not counted here (MoE, or no kv_heads / ffn_hidden)";
  }
  if (run.quantity == OpenQuantity::kMfu && !mfu_peak_flops(run)) {
    return "measured_quantity mfu: neither the row nor its GPU gives the peak the source divides by";
  }
  return std::nullopt;
}

bool is_throughput(OpenQuantity q) { return q != OpenQuantity::kStepSeconds; }

double predicted_quantity(const OpenRun& run, double step_s, model::RecomputeKind recompute) {
  if (!(step_s > 0)) throw std::invalid_argument(run.id + ": predicted step time must be > 0");
  switch (run.quantity) {
    case OpenQuantity::kStepSeconds: return step_s;
    case OpenQuantity::kTokensPerSecondPerGpu: return tokens_per_step(run) / (step_s * run.gpus);
    case OpenQuantity::kTflopsPerGpu:
      return convention_flops_per_step(run, convention_of(run), recompute) / (step_s * run.gpus) / 1e12;
    case OpenQuantity::kMfu: {
      const auto peak = mfu_peak_flops(run);
      MOFASIM_CHECK(peak.has_value(), run.id + ": an mfu row without a peak reached the prediction; quantity_not_comparable lists such rows");
      return convention_flops_per_step(run, convention_of(run), recompute) / (step_s * run.gpus) / *peak;
    }
  }
  throw std::invalid_argument(run.id + ": unknown measured_quantity");
}

double measured_step_seconds(const OpenRun& run, model::RecomputeKind recompute) {
  // Each quantity is step_s or inversely proportional to it, so inverting is one division.
  if (run.quantity == OpenQuantity::kStepSeconds) return run.measured_value;
  return predicted_quantity(run, 1.0, recompute) / run.measured_value;
}

}  // namespace mofasim::analysis
