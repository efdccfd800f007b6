// Background traffic the step replay runs beside the step's own tasks: the asynchronous
// checkpoint drain (sim/fault/checkpoint_io.h times it on an idle network; here it shares the
// NICs with the step's DP/PP/EP traffic).
//
// Each simulated GPU sends bytes_by_gpu[gpu] from host memory out through its NIC rail's tx link
// (the GPU with local index i uses rail i*k/g, as the step's own traffic does), then through its
// node's storage client limit and the storage tier's limit shared by every node, in `streams`
// equal flows that start `start_s` into the step. A flow streams through its whole path at one
// rate (cut-through); rates are max-min fair with every other activity on those links, so a
// drain and an all-reduce on one NIC each get half of it. The flows run in no contention domain
// (a host-to-NIC DMA slows no kernel) and do not cross the spine (storage sits beside the rails).
//
// Folded fidelity simulates some GPUs only. By symmetry every unsimulated GPU drains like the
// simulated one it mirrors (which needs equal bytes on the GPUs of one pipeline stage, as
// checkpoint shards are), so a simulated flow stands for world / simulated flows on the shared
// limit and for (node's GPUs) / (node's simulated GPUs) flows on its node's limit: its weight on
// those resources (progressive filling gives k identical flows the rate of one flow of weight k).
#pragma once

#include <cstdint>
#include <vector>

namespace mofasim::executor {

struct BackgroundEgress {
  std::vector<double> bytes_by_gpu{};  // by GPU id; 0: that GPU sends nothing
  int streams = 1;                     // flows per GPU, each of bytes / streams (>= 1)
  double start_s = 0;                  // into the step (>= 0)
  double node_limit = 0;               // bytes/s per node (0: not a limit)
  double shared_limit = 0;             // bytes/s, all nodes together (0: not a limit)
};

// What the replay reports about it. Times are from the step's start.
struct BackgroundOutcome {
  double end_s = 0;                        // the last flow's end (after the step when it outlives it)
  // By GPU: bytes not yet sent when the step's last task ended. Unsimulated GPUs read 0: their
  // flows exist only as the fold weights of the simulated ones.
  std::vector<double> left_at_step_end{};
};

}  // namespace mofasim::executor
