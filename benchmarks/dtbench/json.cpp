#include "json.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dtbench::json {

const Value* Value::find(std::string_view key) const {
  for (const auto& [name, value] : object) {
    if (name == key) return &value;
  }
  return nullptr;
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Value document() {
    Value v = value(0);
    space();
    if (pos_ != text_.size()) error("trailing characters");
    return v;
  }

 private:
  // Nesting beyond this is not a results file; refusing it bounds the stack.
  static constexpr int kMaxDepth = 64;

  [[noreturn]] void error(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(pos_));
  }

  void space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' ||
                                   text_[pos_] == '\t')) {
      ++pos_;
    }
  }

  char peek() {
    space();
    if (pos_ >= text_.size()) error("unexpected end");
    return text_[pos_];
  }

  void expect(char c) {
    if (peek() != c) error(std::string("expected '") + c + "'");
    ++pos_;
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Value value(int depth) {
    if (depth > kMaxDepth) error("nested too deeply");
    Value v;
    char c = peek();
    if (c == '{') {
      v.kind = Value::Kind::Object;
      ++pos_;
      if (peek() == '}') {
        ++pos_;
        return v;
      }
      do {
        std::string key = string();
        expect(':');
        v.object.emplace_back(std::move(key), value(depth + 1));
      } while (comma_or('}'));
    } else if (c == '[') {
      v.kind = Value::Kind::Array;
      ++pos_;
      if (peek() == ']') {
        ++pos_;
        return v;
      }
      do {
        v.array.push_back(value(depth + 1));
      } while (comma_or(']'));
    } else if (c == '"') {
      v.kind = Value::Kind::String;
      v.string = string();
    } else if (literal("true")) {
      v.kind = Value::Kind::Bool;
      v.boolean = true;
    } else if (literal("false")) {
      v.kind = Value::Kind::Bool;
    } else if (literal("null")) {
      v.kind = Value::Kind::Null;
    } else {
      v.kind = Value::Kind::Number;
      v.number = number();
    }
    return v;
  }

  // After an element: true at ',', false at `close` (consumed either way).
  bool comma_or(char close) {
    char c = peek();
    ++pos_;
    if (c == ',') return true;
    if (c == close) return false;
    --pos_;
    error(std::string("expected ',' or '") + close + "'");
  }

  double number() {
    const std::string rest(text_.substr(pos_, 64));
    char* end = nullptr;
    double v = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str()) error("expected a value");
    pos_ += static_cast<size_t>(end - rest.c_str());
    return v;
  }

  std::string string() {
    expect('"');
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      char e = text_[pos_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          // Results hold ASCII; other code points are kept as '?'.
          if (pos_ + 4 > text_.size()) error("short \\u escape");
          unsigned code = static_cast<unsigned>(std::strtoul(std::string(text_.substr(pos_, 4)).c_str(), nullptr, 16));
          out += code < 0x80 ? static_cast<char>(code) : '?';
          pos_ += 4;
          break;
        }
        default: out += e; break;  // '"', '\\', '/'
      }
    }
    if (pos_ >= text_.size()) error("unterminated string");
    ++pos_;
    return out;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Value parse(std::string_view text) { return Parser(text).document(); }

Value parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return parse(text.str());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace dtbench::json
