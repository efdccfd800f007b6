// The closed form's pipeline replay for 1F1B, MoFa(9) MoFa(10) MoFa(11) MoFa(12): where each stage's
// last backward ends given per-stage pass costs, in O(p) memory, plus the per-stage scratch buffer
// the step model uses so that re-timing a prepared layout does not allocate.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <new>
#include <type_traits>
#include <vector>

namespace mofasim::model {

// Scratch on the stack for up to kInline entries (the heap beyond that); the first n are
// value-initialised (zero for double). The inline slots are raw storage: a std::array<T, kInline>
// would construct all kInline entries of a T with member initialisers (for the step model's
// ChunkTime, 21 KB zeroed per call whatever n is).
template <typename T>
class InlineBuffer {
  static_assert(std::is_trivially_destructible_v<T> && std::is_trivially_copyable_v<T>,
                "InlineBuffer never destroys its entries");

 public:
  static constexpr int kInline = 128;
  explicit InlineBuffer(int n) : n_(n) {
    if (n > kInline) {
      heap_.assign(static_cast<std::size_t>(n), T{});
    } else {
      for (int i = 0; i < n; ++i) ::new (static_cast<void*>(inline_ + i * sizeof(T))) T{};
    }
  }
  InlineBuffer(const InlineBuffer&) = delete;
  InlineBuffer& operator=(const InlineBuffer&) = delete;
  T& operator[](int i) { return data()[i]; }
  const T& operator[](int i) const { return data()[i]; }

 private:
  [[nodiscard]] T* data() { return n_ > kInline ? heap_.data() : std::launder(reinterpret_cast<T*>(inline_)); }
  [[nodiscard]] const T* data() const {
    return n_ > kInline ? heap_.data() : std::launder(reinterpret_cast<const T*>(inline_));
  }
  int n_;
  alignas(T) std::byte inline_[kInline * sizeof(T)];  // NOLINT: only the first n_ are constructed, above
  std::vector<T> heap_;
};
using StageBuffer = InlineBuffer<double>;  // per pipeline stage

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
                            StageBuffer& last_end);

}  // namespace mofasim::model
