// Reading a Megatron-LM launch: a plain argument list ("--num-layers 32 --bf16 ...") or a bash
// launch script in the style of Megatron's examples (variables, `export`, arrays such as
// `MODEL_ARGS=( ... )`, line continuations, comments, quoting). The script is not executed: every
// `--flag` token anywhere in it is collected, after the script's own variable assignments are
// substituted (`$NAME`, `${NAME}`, `${NAME:-default}`). Conditional branches are therefore all
// read; a flag given twice keeps its last value, as argparse does.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mofasim::interop {

// A bad argument list or value; what() is one line `file:line:col: --flag: message`.
class ImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ScriptLocation {
  int line = 0;
  int col = 0;
};

struct ScriptWord {
  std::string text;  // after quote removal and variable substitution
  ScriptLocation at;
  bool line_start = false;  // first word of a command line (after a newline, ';', '(' or ')')
};

// Splits `text` into words as bash would for an unquoted command line (variables from the script's
// own assignments substituted; assignments themselves are consumed, not returned).
std::vector<ScriptWord> script_words(std::string_view text);

// How many values a flag takes: 0 (a switch), a fixed count, or every following word that is not
// a flag (argparse nargs='*' / '+').
inline constexpr int kVariadic = -1;

struct FlagOccurrence {
  std::string name;                 // "--num-layers" (a "--name=value" word is split at '=')
  std::vector<std::string> values;  // the words it took
  ScriptLocation at;
};

// Collects the flags of `words` in order. `arity(name)` gives a flag's value count; for a flag it
// does not know (returns kUnknownArity) one value is taken when the next word is not a flag.
// Values never cross into the next command line, so a switch at the end of a line stays a switch.
inline constexpr int kUnknownArity = -2;
std::vector<FlagOccurrence> collect_flags(const std::vector<ScriptWord>& words, int (*arity)(std::string_view));

}  // namespace mofasim::interop
