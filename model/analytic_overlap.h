// The closed forms of MoFa's overlap and memory-feature terms (§3.3), as pure functions of times in
// seconds, so each can be checked by hand. α is the time-increase coefficient of the compute side
// and β that of the communication (or copy) side while the two run together (both >= 1). Every overlap's
// α is at least the hardware's overlap interference (model/interference.h:
// sm_count / (sm_count − collective_sms), applied by the scenario seal); the replay uses the same.
//
// Reading of α and β: MoFa writes each overlapped window as max(α·X, β·C), which charges α over
// the whole window even when the communication ends early. Here α and β are the rates at which
// each side slows *while both run* (the replay's fluid semantics, sim/engine/fluid_model.h), so a
// window of compute X and communication C takes
//   overlap_window_seconds(X, C, α, β) = X + β·C·(1 − 1/α)   when β·C <= α·X (communication ends first)
//                                      = C + α·X·(1 − 1/β)   otherwise,
// which equals MoFa's max(α·X, β·C) when α = β = 1 or when the two end together (α·X = β·C), and is
// what both step models charge, so the closed form and the replay agree under interference.
#pragma once

namespace mofasim::model {

// One overlapped window (see above); max(X, C) when α = β = 1.
double overlap_window_seconds(double compute, double comm, double alpha, double beta);

// MoFa(20): a GEMM of `compute` seconds and its TP collective of `comm` seconds split into
// `chunks` pieces and pipelined. The first piece of one side and the last piece of the other stay
// exposed; the s−1 middle steps overlap:  X/s + C/s + (s−1)·window(X/s, C/s).
// chunks == 1 gives X + C (no overlap); large s tends to max(α·X, β·C).
double tp_overlap_seconds(double compute, double comm, int chunks, double alpha, double beta);

// MoFa(21): ring attention over a CP group of `cp` ranks. The attention core of `attention`
// seconds is split into cp block steps; step i's KV send/recv (`p2p_step` seconds) overlaps step
// i's attention:  Σ_{i=1..c−1} max(α·A/c, β·t_p2p) + A/c.  Without overlap: A + (c−1)·t_p2p.
double cp_ring_seconds(double attention, double p2p_step, int cp, bool overlap, double alpha, double beta);

// MoFa(22): one forward pass paired with another micro-batch's backward pass (DualPipe-style).
// The forward's compute hides the backward's all-to-all and vice versa:
//   window(F_comp, B_a2a) + window(B_comp, F_a2a).
double ep_pair_seconds(double forward_compute, double forward_a2a, double backward_compute, double backward_a2a,
                       double alpha, double beta);

// MoFa(22) with DualPipe's pairing of modules (DeepSeek-V3 report §3.2.1, Figure 4; the paper's
// sum runs over "the i-th EP communication and the i-th computation module participating"). A MoE
// layer's forward is pre (attention, router, shared experts) → dispatch → mid (routed experts) →
// combine → post; its backward (input and weight gradients, recompute) runs first (what follows
// the combine) → combine gradient → mid → dispatch gradient → last (pre's backward). DualPipe
// runs each all-to-all under the one module of the other pass it is paired with:
//   post + first + window(pre, B combine) + window(B mid, F dispatch)
//                + window(F mid, B dispatch) + window(last, F combine).
struct EpPairParts {
  double f_pre = 0, f_mid = 0, f_post = 0;        // forward compute of each module
  double f_dispatch = 0, f_combine = 0;           // forward all-to-alls
  double b_first = 0, b_mid = 0, b_last = 0;      // backward compute of each module
  double b_combine = 0, b_dispatch = 0;           // backward all-to-alls (combine gradient first)
};
double dualpipe_ep_pair_seconds(const EpPairParts& parts, double alpha, double beta);

// MoFa(23): a pipeline step whose PP send/recv overlaps the next compute: window(T, t_pp).
double pp_overlap_seconds(double step, double pp_hop, double alpha, double beta);

// MoFa(24): DP communication of `chunks` (= v) model chunks, each `comm_per_chunk` seconds,
// where chunk i's collective may hide under `compute_per_chunk` seconds of the pipeline's compute
// (the backward of the next chunk in the cool-down for gradient reduce-scatter, the forward of the
// previous chunk in the warm-up for the parameter all-gather). The last chunk's collective has
// nothing left to hide under. Exposed time beyond the compute:
//   c + Σ_{i=1..v−1} (window(W, c) − W).
double dp_overlap_exposed_seconds(double comm_per_chunk, double compute_per_chunk, int chunks, double alpha,
                                  double beta);

// MoFa(24) at v = 1 with gradient buckets: the last micro-batch's backward (`backward` seconds
// alone) closes the buckets one after the other, and each bucket's reduction is queued on the one
// DP stream in issue order (a bucket starts when it is ready and the one before it has ended), as
// the step simulation issues them (sim/executor/generate_dp.cc). A reduction first spends its
// latency (no interference, as in the replay's fluid model) and then its bandwidth term, during
// which the backward runs α times slower, and it runs β times slower while the backward runs.
// Replayed event by event (two streams, O(buckets)): the time from the backward's start until both
// the backward and the last reduction have ended (>= backward). With one bucket ready at the end
// it is backward + latency + bandwidth; with α = β = 1 and buckets that keep up with the backward
// only the last bucket shows.
struct DpBucket {
  double ready = 0;      // seconds of the backward (alone) done when the bucket is ready
  double latency = 0;    // seconds
  double bandwidth = 0;  // seconds alone
};
double bucketed_dp_overlap_seconds(const DpBucket* buckets, int count, double backward, double alpha, double beta);

// The same replay fed one bucket at a time in issue order (no storage): add() each bucket, then
// finish() returns what bucketed_dp_overlap_seconds returns.
class BucketedDpReplay {
 public:
  BucketedDpReplay(double backward, double alpha, double beta);
  void add(const DpBucket& bucket);
  double finish();
  // After finish(): when the backward ended (>= backward: its α slowdown included).
  [[nodiscard]] double compute_end() const { return compute_end_; }

 private:
  void run(double until);
  double backward_, alpha_, beta_, inv_alpha_, inv_beta_;
  double t_ = 0;
  double done_ = 0;  // backward seconds (alone) done
  double compute_end_;
  double latency_ = 0;  // what the running bucket has left of each term
  double bandwidth_ = 0;
  bool busy_ = false;
};

// MoFa(33) MoFa(34) MoFa(35): asynchronous activation offload of one layer. The forward's D2H copy of the
// layer's activation runs under the next layer's forward, the backward's H2D prefetch under the
// previous layer's backward: window(T_layer, t_copy).
double offload_seconds(double layer, double copy, double alpha, double beta);

}  // namespace mofasim::model
