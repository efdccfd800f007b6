// TraceFilter: which part of a replayed step `--trace` writes (`--trace-stages`, `--trace-ranks`,
// `--trace-window`, `--trace-microbatch`), and the parsers of those option values. A trace shows
// the replica-0 rank of every stage (one process each); the filters only ever remove:
//   stages / ranks  keep the processes of the listed stages / of the listed (replica-0) ranks;
//   window          keep the spans that overlap [from, to) (whole, not clipped), and counter
//                   samples inside it;
//   microbatch      keep the spans of that micro-batch (per-step work such as DP and the
//                   optimizer has none, so it goes);
//   link_kinds      which kinds of link of the traced ranks' nodes get utilisation counters.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/executor/workload.h"

namespace mofasim::executor {

struct TraceFilter {
  std::vector<int> stages{};  // empty: every stage
  std::vector<int> ranks{};   // empty: every traced rank
  std::int64_t from_ns = 0;
  std::int64_t to_ns = std::numeric_limits<std::int64_t>::max();
  std::optional<std::uint32_t> microbatch{};
  // Link kinds whose utilisation the Perfetto trace records (perfetto_links.h): bit 1 << LinkKind.
  // By default the scale-out links (NICs and spine ports, 0x3C): NVLink counters follow every TP
  // collective and outweigh the rest of the trace (llama3-405b-h100-2048: 203 MB without links,
  // 204 MB with NIC and spine, 1.3 GB and 1.8 GB of memory with NVLink too).
  std::uint8_t link_kinds = 0x3C;

  [[nodiscard]] bool keeps_span(const Workload& w, TaskId t, std::int64_t start_ns, std::int64_t end_ns) const {
    if (microbatch && w.microbatch(t) != *microbatch) return false;
    // A zero-length span at the window's start still counts as inside.
    return end_ns >= from_ns && start_ns < to_ns && (end_ns > from_ns || start_ns == from_ns);
  }
};

// A filter that names what the step has not; `option()` is "stages" or "ranks".
class TraceFilterError : public std::invalid_argument {
 public:
  TraceFilterError(std::string option, const std::string& message)
      : std::invalid_argument(message), option_(std::move(option)) {}
  [[nodiscard]] const std::string& option() const { return option_; }

 private:
  std::string option_;
};

// The stages the trace shows, ascending; `stage_ranks[s]` is stage s's replica-0 rank. Throws
// TraceFilterError naming the first listed stage that does not exist or listed rank that is no
// stage's replica-0 rank (with the ranks that are), so a filter never silently selects nothing.
std::vector<int> traced_stages(const TraceFilter& f, std::span<const int> stage_ranks);

// "0,2,5-7" -> {0, 2, 5, 6, 7} (sorted, unique). Throws std::invalid_argument with a message
// naming the bad part.
std::vector<int> parse_index_list(std::string_view text);

// "START:END" with each a duration with unit ns, us, ms or s ("120ms:0.5s"; either side may be
// empty: from the step's start / to its end) -> {from_ns, to_ns}. Throws std::invalid_argument.
std::pair<std::int64_t, std::int64_t> parse_time_window(std::string_view text);

}  // namespace mofasim::executor
