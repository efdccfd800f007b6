// Invariant checks that stay on in Release builds. A failed MOFASIM_CHECK is a simulator bug, not a
// user error: user errors are ScenarioError / UsageError raised at load time (exit code 2).
#pragma once

#include <stdexcept>
#include <string>

namespace mofasim {

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] inline void check_failed(const char* expr, const char* file, int line, const std::string& message) {
  throw InternalError(std::string("internal error: ") + file + ":" + std::to_string(line) + ": check `" + expr +
                      "` failed: " + message);
}

}  // namespace mofasim

#define MOFASIM_CHECK(cond, message)                                                     \
  do {                                                                                   \
    if (!(cond)) ::mofasim::check_failed(#cond, __FILE__, __LINE__, (message));          \
  } while (false)

#ifdef NDEBUG
#define MOFASIM_DCHECK(cond, message) \
  do {                                \
  } while (false)
#else
#define MOFASIM_DCHECK(cond, message) MOFASIM_CHECK(cond, message)
#endif

#define MOFASIM_UNREACHABLE(message) ::mofasim::check_failed("unreachable", __FILE__, __LINE__, (message))
