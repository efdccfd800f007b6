#include "sim/interop/megatron_script.h"

#include <cctype>

namespace mofasim::interop {
namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Character reader over the script with line/column tracking; `\` + newline is skipped
// (a line continuation) wherever it appears outside single quotes.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  [[nodiscard]] bool done() { skip_continuations(); return pos_ >= text_.size(); }
  char peek() { skip_continuations(); return pos_ < text_.size() ? text_[pos_] : '\0'; }
  char peek_at(std::size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  char get() {
    skip_continuations();
    const char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  [[nodiscard]] ScriptLocation at() const { return {line_, col_}; }

 private:
  void skip_continuations() {
    while (pos_ + 1 < text_.size() && text_[pos_] == '\\' && text_[pos_ + 1] == '\n') {
      pos_ += 2;
      ++line_;
      col_ = 1;
    }
  }
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

class Splitter {
 public:
  explicit Splitter(std::string_view text) : in_(text) {}

  std::vector<ScriptWord> run() {
    while (!in_.done()) {
      const char c = in_.peek();
      if (c == '\n' || c == ';' || c == '|' || c == '&') {
        end_word();
        in_.get();
        statement_start_ = true;
      } else if (c == '(' || c == ')') {
        end_word();
        in_.get();
        statement_start_ = true;  // array elements: a value never crosses a parenthesis
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '<' || c == '>') {
        end_word();
        in_.get();
      } else if (c == '#' && !in_word_) {
        while (!in_.done() && in_.peek() != '\n') in_.get();
      } else {
        if (!in_word_) {
          in_word_ = true;
          word_at_ = in_.at();
        }
        read_piece();
      }
    }
    end_word();
    return std::move(words_);
  }

 private:
  void read_piece() {
    const char c = in_.get();
    if (c == '\'') {
      while (!in_.done() && in_.peek() != '\'') word_ += in_.get();
      if (!in_.done()) in_.get();
    } else if (c == '"') {
      while (!in_.done() && in_.peek() != '"') {
        if (in_.peek() == '$') {
          in_.get();
          word_ += expand();
        } else if (in_.peek() == '\\' && (in_.peek_at(1) == '"' || in_.peek_at(1) == '$')) {
          in_.get();
          word_ += in_.get();
        } else {
          word_ += in_.get();
        }
      }
      if (!in_.done()) in_.get();
    } else if (c == '$') {
      word_ += expand();
    } else if (c == '\\') {
      if (!in_.done()) word_ += in_.get();
    } else {
      word_ += c;
    }
  }

  // After a '$': the substituted value. Unknown variables stay as written ("$NAME") so that a
  // value that needs them reports them; array expansions (${ARGS[@]}) vanish, since the arrays'
  // words were already read where they were assigned.
  std::string expand() {
    if (in_.peek() == '(') return skip_balanced('(', ')', "$(");
    if (in_.peek() == '{') {
      in_.get();
      std::string inner;
      int depth = 1;
      while (!in_.done()) {
        const char c = in_.get();
        if (c == '{') ++depth;
        if (c == '}' && --depth == 0) break;
        inner += c;
      }
      if (inner.find("[@]") != std::string::npos || inner.find("[*]") != std::string::npos) return "";
      std::size_t n = 0;
      while (n < inner.size() && is_name_char(inner[n])) ++n;
      const std::string name = inner.substr(0, n);
      std::string rest = inner.substr(n);
      const auto it = vars_.find(name);
      if (!rest.empty() && (rest.rfind(":-", 0) == 0 || rest.rfind(":=", 0) == 0 || rest[0] == '-')) {
        std::string fallback = rest.substr(rest[0] == '-' ? 1 : 2);
        if (fallback.size() >= 2 && (fallback.front() == '"' || fallback.front() == '\'') &&
            fallback.back() == fallback.front()) {
          fallback = fallback.substr(1, fallback.size() - 2);
        }
        return it != vars_.end() && !it->second.empty() ? it->second : fallback;
      }
      return it != vars_.end() ? it->second : "${" + inner + "}";
    }
    std::string name;
    while (!in_.done() && is_name_char(in_.peek())) {
      name += in_.get();
      if (std::isdigit(static_cast<unsigned char>(name[0])) != 0) break;  // $1 is one digit
    }
    if (name.empty()) return "$";
    const auto it = vars_.find(name);
    return it != vars_.end() ? it->second : "$" + name;
  }

  std::string skip_balanced(char open, char close, const std::string& prefix) {
    std::string text = prefix;
    in_.get();
    int depth = 1;
    while (!in_.done() && depth > 0) {
      const char c = in_.get();
      if (c == open) ++depth;
      if (c == close) --depth;
      text += c;
    }
    return text;
  }

  void end_word() {
    if (!in_word_) return;
    in_word_ = false;
    std::string word = std::move(word_);
    word_.clear();
    const bool keyword = word == "export" || word == "local" || word == "declare" || word == "readonly";
    if (keyword) return;  // the assignment after it is still at a statement start
    if (word.empty()) return;
    // NAME=value (or NAME+=value) assigns; an array assignment NAME=( ... ) leaves its words to
    // be read as they come.
    const std::size_t eq = word.find('=');
    if (eq != std::string::npos && eq > 0 && (std::isalpha(static_cast<unsigned char>(word[0])) != 0 || word[0] == '_')) {
      const std::size_t name_end = word[eq - 1] == '+' ? eq - 1 : eq;
      bool name = name_end > 0;
      for (std::size_t i = 0; i < name_end; ++i) name = name && is_name_char(word[i]);
      if (name) {
        vars_[word.substr(0, name_end)] = word.substr(eq + 1);
        return;
      }
    }
    const bool line_start = statement_start_;
    statement_start_ = false;
    // Unquoted expansion splits on whitespace: "--fp8-format hybrid" in an array is two words.
    std::size_t i = 0;
    while (i < word.size()) {
      while (i < word.size() && std::isspace(static_cast<unsigned char>(word[i])) != 0) ++i;
      std::size_t j = i;
      while (j < word.size() && std::isspace(static_cast<unsigned char>(word[j])) == 0) ++j;
      if (j > i) words_.push_back({word.substr(i, j - i), word_at_, line_start && i == 0});
      i = j;
    }
  }

  Reader in_;
  std::vector<ScriptWord> words_;
  std::map<std::string, std::string> vars_;
  std::string word_;
  ScriptLocation word_at_;
  bool in_word_ = false;
  bool statement_start_ = true;
};

bool is_flag(const std::string& w) { return w.size() > 2 && w[0] == '-' && w[1] == '-'; }

// A word can be a flag's value when it is not a flag and does not start a new command line.
bool is_value(const ScriptWord& w) { return !w.line_start && !is_flag(w.text); }

}  // namespace

std::vector<ScriptWord> script_words(std::string_view text) { return Splitter(text).run(); }

std::vector<FlagOccurrence> collect_flags(const std::vector<ScriptWord>& words, int (*arity)(std::string_view)) {
  std::vector<FlagOccurrence> flags;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (!is_flag(words[i].text)) continue;  // the launcher, the script path, bash commands
    FlagOccurrence f{.name = words[i].text, .values = {}, .at = words[i].at};
    const std::size_t eq = f.name.find('=');
    if (eq != std::string::npos) {
      f.values.push_back(f.name.substr(eq + 1));
      f.name = f.name.substr(0, eq);
      flags.push_back(std::move(f));
      continue;
    }
    const int n = arity(f.name);
    if (n == kVariadic || n == kUnknownArity) {
      while (i + 1 < words.size() && is_value(words[i + 1])) {
        f.values.push_back(words[++i].text);
        if (n == kUnknownArity) break;
      }
    } else {
      for (int k = 0; k < n && i + 1 < words.size() && is_value(words[i + 1]); ++k) f.values.push_back(words[++i].text);
    }
    flags.push_back(std::move(f));
  }
  return flags;
}

}  // namespace mofasim::interop
