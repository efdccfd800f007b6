// vtrain_kernel_report VTRAIN.CSV...: the vTrain A100 rows (validate --measured's default campaign)
// predicted with compute_model kernel instead of the fitted roofline, to decide whether the kernel
// model may become the presets' default (docs/validation-measured.md). Two device variants:
//   "kernel, preset": the a100-80gb preset's kernels section as shipped (no fitting at all);
//   "kernel + vTrain host floor": the same plus the per-op dispatch floor of the stored vTrain fit
//     (97 us, fitted on the single-node rows only: a property of that campaign's eager
//     Megatron-DeepSpeed host, not of the kernels).
// Prints MAPE per subset for the simulated and analytic predictors. A tool, not a test.
#include <cstdio>
#include <string>
#include <vector>

#include "sim/analysis/measured_calibration.h"
#include "sim/analysis/measured_validate.h"

int main(int argc, char** argv) {
  using namespace mofasim;
  if (argc < 2) {
    std::fprintf(stderr, "usage: vtrain_kernel_report VTRAIN.CSV...\n");
    return 2;
  }
  const std::vector<std::string> files(argv + 1, argv + argc);
  model::HardwareSpec preset = analysis::hardware_from_preset("a100-80gb");
  preset.op_dispatch_seconds = 0;
  model::HardwareSpec with_floor = preset;
  with_floor.op_dispatch_seconds = analysis::vtrain_a100_fit().op_dispatch_seconds;
  struct Variant {
    const char* name;
    model::HardwareSpec hw;
  };
  for (const Variant& v : {Variant{"kernel, preset", preset}, Variant{"kernel + vTrain host floor", with_floor}}) {
    analysis::MeasuredConditions c = analysis::vtrain_a100_conditions(v.hw);
    c.hardware.compute_model = model::ComputeModelKind::kKernel;
    for (auto predictor : {analysis::MeasuredPredictorKind::kSimulated, analysis::MeasuredPredictorKind::kAnalytic}) {
      analysis::MeasuredValidateOptions options;
      options.measured = files;
      options.predictor = predictor;
      options.conditions = c;
      const analysis::MeasuredValidation result = analysis::run_measured_validation(options);
      for (const analysis::SubsetStats& s : result.stats) {
        std::printf("%-28s %-9s %-22s rows %5zu  MAPE %6.2f %%  signed %+6.2f %%\n", v.name,
                    predictor == analysis::MeasuredPredictorKind::kSimulated ? "simulated" : "analytic",
                    s.name.c_str(), static_cast<std::size_t>(s.stats.count), s.stats.mape,
                    s.stats.mean_signed);
      }
    }
  }
  return 0;
}
