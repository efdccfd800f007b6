// Action: the engine's callback type. A small callable stored inline (no heap allocation, no
// virtual call): a lambda that captures a few integer ids and/or a pointer, e.g.
//   queue.schedule_in(5ms, [this, task = TaskId{42}] { on_task_finished(task); });
// The callable must fit kCapacity bytes and be trivially copyable and destructible (capture ids
// and `this`, never std::string / std::vector / std::function); both are checked at compile time.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace mofasim::sim {

class Action {
 public:
  static constexpr std::size_t kCapacity = 24;  // three 64-bit words: `this` + two ids

  Action() = default;

  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, Action> && std::is_invocable_r_v<void, std::decay_t<F>&>)
  Action(F&& f) {  // NOLINT(google-explicit-constructor): lambdas convert implicitly on purpose
    using Fn = std::decay_t<F>;
    static_assert(sizeof(Fn) <= kCapacity, "Action: callable too large; capture ids, not objects");
    static_assert(alignof(Fn) <= alignof(std::max_align_t), "Action: callable over-aligned");
    static_assert(std::is_trivially_copyable_v<Fn> && std::is_trivially_destructible_v<Fn>,
                  "Action: callable must be trivially copyable (capture ids and pointers only)");
    ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(f));
    invoke_ = [](void* storage) { (*std::launder(static_cast<Fn*>(storage)))(); };
  }

  [[nodiscard]] explicit operator bool() const { return invoke_ != nullptr; }

  // Calls the stored callable; calling an empty Action is a no-op.
  void operator()() {
    if (invoke_ != nullptr) invoke_(storage_);
  }

 private:
  alignas(std::max_align_t) std::byte storage_[kCapacity]{};
  void (*invoke_)(void*) = nullptr;
};

}  // namespace mofasim::sim
