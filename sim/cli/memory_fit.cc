// Memory fit of a scenario's own layout (see memory_fit.h).
#include "sim/cli/memory_fit.h"

#include <ostream>
#include <vector>

#include "model/memory.h"
#include "schedules/factory.h"
#include "sim/units/format.h"

namespace mofasim::cli {

MemoryFit memory_fit(const scenario::LoadedScenario& s) {
  const std::vector<double> inflight = schedules::stage_inflight_microbatches(s.model, s.parallel, s.features);
  const model::MemoryReport report = model::memory_report(s.model, s.hardware, s.parallel, s.features, inflight);
  MemoryFit fit;
  fit.fits = report.fits();
  fit.worst_stage = report.worst_rank;
  fit.capacity_bytes = s.hardware.gpu_memory_bytes;
  fit.peak_bytes = report.peak_bytes();
  for (const model::StageMemory& st : report.stages) fit.stages_over += st.fits() ? 0 : 1;
  if (!report.stages.empty()) fit.excess_bytes = report.stages[static_cast<std::size_t>(report.worst_rank)].excess_bytes;
  return fit;
}

void warn_if_out_of_memory(const std::string& command, const MemoryFit& fit, std::ostream& err) {
  if (fit.fits) return;
  err << "mofasim " << command << ": warning: the scenario's layout does not fit in GPU memory: stage " << fit.worst_stage << " needs "
      << format_bytes(fit.peak_bytes) << " of " << format_bytes(fit.capacity_bytes) << " ("
      << format_bytes(fit.excess_bytes) << " over; " << fit.stages_over << (fit.stages_over == 1 ? " stage" : " stages")
      << " over; see mofasim memory)\n";
}

nlohmann::json to_json(const MemoryFit& fit) {
  return {{"fits", fit.fits},
          {"worst_stage", fit.worst_stage},
          {"stages_over", fit.stages_over},
          {"peak_bytes", fit.peak_bytes},
          {"capacity_bytes", fit.capacity_bytes},
          {"excess_bytes", fit.excess_bytes}};
}

}  // namespace mofasim::cli
