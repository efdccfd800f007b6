// Row quantities and FLOP conventions of the open set (see measured_open_quantity.h).
#include "sim/analysis/measured_open_quantity.h"

#include <regex>
#include <stdexcept>

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
  if (std::regex_search(text, kNarayanan)) return FlopConvention::kNarayanan;
  if (std::regex_search(text, kKorthikanti)) return FlopConvention::kKorthikantiModel;
  return std::nullopt;
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
  }
  return 0;
}

std::optional<std::string> quantity_not_comparable(const OpenRun& run) {
  if (run.quantity == OpenQuantity::kMfu) {
    return "measured_quantity mfu: the CSV does not give the peak the source divides by";
  }
  if (run.quantity == OpenQuantity::kTflopsPerGpu && !recognised_flop_convention(run.flops_convention)) {
    std::string name = run.flops_convention.substr(0, run.flops_convention.find_first_of("(;"));
    while (!name.empty() && name.back() == ' ') name.pop_back();
    return "tflops_per_gpu under a FLOP convention whose formula the row does not state (" + name + ")";
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
    case OpenQuantity::kMfu: break;
  }
  throw std::invalid_argument(run.id + ": measured_quantity mfu is not compared");
}

double measured_step_seconds(const OpenRun& run, model::RecomputeKind recompute) {
  // Each quantity is step_s or inversely proportional to it, so inverting is one division.
  if (run.quantity == OpenQuantity::kStepSeconds) return run.measured_value;
  return predicted_quantity(run, 1.0, recompute) / run.measured_value;
}

}  // namespace mofasim::analysis
