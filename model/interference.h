// Overlap interference: a communication kernel (an NCCL collective or send/recv) runs on SMs, so
// compute that overlaps it keeps only the SMs the kernel leaves free. For compute-bound kernels
// spread over every SM, the compute slows by
//     α = sm_count / (sm_count − collective_sms).
// H100 (132 SMs) with a 24-CTA NCCL all-gather (contention.csv, NVIDIA forum report): α = 1.222;
// A100 (108 SMs), 24 SMs: α = 1.286. The one public measurement of the aggregate effect
// (contention.csv, Lee et al. arXiv:2507.03114: compute overlapped with communication runs 18.9 %
// slower on average, 40 % at most, on 4x A100 / 4x H100 / MI250 / MI210) lies between 1 and these.
// Not modelled: the HBM bandwidth the communication kernel also takes from memory-bound kernels, and
// the wave-quantisation tail of one-wave GEMMs (up to 2x in the same forum report).
#pragma once

#include "model/spec.h"

namespace mofasim::model {

// α above for this hardware; 1 when sm_count or collective_sms is 0 (unknown) or the switch is off.
// Inline: the scenario seal and the replay both call it without linking the cost model.
inline double overlap_interference_alpha(const HardwareSpec& hardware, bool enabled = true) {
  const int sms = hardware.kernels.sm_count;
  const int taken = hardware.collective_sms;
  if (!enabled || sms <= 0 || taken <= 0 || taken >= sms) return 1.0;
  return static_cast<double>(sms) / static_cast<double>(sms - taken);
}

}  // namespace mofasim::model
