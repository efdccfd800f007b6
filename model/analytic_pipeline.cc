// The closed form's 1F1B pipeline replay (see analytic_pipeline.h).
#include "model/analytic_pipeline.h"

#include <cmath>

namespace mofasim::model {

// MoFa(9) MoFa(10) MoFa(11) MoFa(12), exact for per-stage pass costs: the replay of the 1F1B schedule
// (schedules/one_f_one_b.h: min(p−1−r, m) warm-up forwards on stage r, then F/B pairs, then the
// drain) with stage r's forward costing f[r] and its backward b[r], and `hop` seconds on every
// dependency between stages. Step i runs F(r, i) on every stage (top down) and then
// B(r, i − w_r) (bottom up, w_r the warm-up count), which is each stage's own order, so the
// state between steps is the end of each stage's last backward: `last_end[r]` on return (the
// pipeline's makespan is its maximum). O(p) memory; O(p·(p + transient)) time: once the steady
// steps repeat with one period on every stage (a max-plus system with constant costs), the rest
// of the steady phase is added in one go.
void one_f_one_b_stage_ends(int p, int m, const StageBuffer& f, const StageBuffer& b, double hop,
                            StageBuffer& last_end) {
  StageBuffer b_end_even(p);  // end of stage r's backward in the latest even / odd step
  StageBuffer b_end_odd(p);
  StageBuffer stage_free(p);  // end of the last op on stage r
  StageBuffer prev_free(p);
  auto warmup = [&](int r) { return std::min(p - 1 - r, m); };
  auto b_end_at = [&](int r, int step) -> double& { return (step & 1) != 0 ? b_end_odd[r] : b_end_even[r]; };
  const int last_step = m - 1 + warmup(0);
  for (int i = 0; i <= last_step; ++i) {
    if (i < m) {
      double prev_f = 0;
      for (int r = 0; r < p; ++r) {  // F(r, i) after F(r−1, i)
        const double start = std::max(stage_free[r], r > 0 ? prev_f + hop : 0.0);
        prev_f = start + f[r];
        stage_free[r] = prev_f;
      }
    }
    for (int r = p - 1; r >= 0; --r) {  // B(r, k) after B(r+1, k), which ran at step k + w_{r+1}
      const int k = i - warmup(r);
      if (k < 0 || k >= m) continue;
      const double after = r + 1 < p ? b_end_at(r + 1, k + warmup(r + 1)) + hop : 0.0;
      const double end = std::max(stage_free[r], after) + b[r];
      b_end_at(r, i) = end;
      stage_free[r] = end;
    }
    // Steady steps (every stage runs one F and one B) all apply the same max-plus map; when two
    // in a row advance every stage by the same period, so will the rest.
    const bool steady = i >= p && i + 1 < m;
    if (steady) {
      const double period = stage_free[0] - prev_free[0];
      bool periodic = true;
      for (int r = 1; r < p && periodic; ++r) {
        periodic = std::abs(stage_free[r] - prev_free[r] - period) <= 1e-12 * stage_free[r];
      }
      if (periodic) {
        const int skip = m - 2 - i;  // steady steps left after this one, minus the last
        for (int r = 0; r < p && skip > 0; ++r) {
          const double now = b_end_at(r, i) + skip * period;
          const double before = b_end_at(r, i - 1) + skip * period;
          b_end_at(r, i + skip) = now;
          b_end_at(r, i + skip - 1) = before;
          stage_free[r] += skip * period;
        }
        i += std::max(skip, 0);
      }
    }
    for (int r = 0; r < p; ++r) prev_free[r] = stage_free[r];
  }
  for (int r = 0; r < p; ++r) last_end[r] = stage_free[r];
}

}  // namespace mofasim::model
