// Spec: https://onnx.ai/onnx/operators/onnx__StringNormalizer.html
// StringNormalizer.
// Case changes go through the C++ locale named by the 'locale' attribute (falling back to
// C.UTF-8, then to ASCII-only mapping when neither is installed) on UTF-8 decoded code points.
#include <locale>
#include <set>

#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

enum class CaseChange { kNone, kLower, kUpper };

/// Decodes UTF-8 into code points; false on malformed input.
bool decode_utf8(const std::string& s, std::u32string& out) {
  out.clear();
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    char32_t cp = 0;
    if (c < 0x80) {
      cp = c;
    } else if ((c >> 5) == 0x6) {
      extra = 1;
      cp = c & 0x1f;
    } else if ((c >> 4) == 0xe) {
      extra = 2;
      cp = c & 0x0f;
    } else if ((c >> 3) == 0x1e) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + static_cast<size_t>(extra) >= s.size() && extra > 0) return false;
    for (int k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    out.push_back(cp);
    i += static_cast<size_t>(extra) + 1;
  }
  return true;
}

std::string encode_utf8(const std::u32string& cps) {
  std::string out;
  for (char32_t cp : cps) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  return out;
}

std::optional<std::locale> find_locale(const std::string& name) {
  for (const std::string& candidate : {name, name + ".UTF-8", std::string("C.UTF-8")}) {
    if (candidate.empty()) continue;
    try {
      return std::locale(candidate);
    } catch (const std::runtime_error&) {
    }
  }
  return std::nullopt;
}

class StringNormalizerKernel final : public Kernel {
 public:
  explicit StringNormalizerKernel(const KernelInit& init)
      : case_sensitive_(init.attr_int("is_case_sensitive", 0) != 0),
        locale_(find_locale(init.attr_string("locale", "en_US"))) {
    const std::string action = init.attr_string("case_change_action", "NONE");
    if (action == "NONE") {
      case_change_ = CaseChange::kNone;
    } else if (action == "LOWER") {
      case_change_ = CaseChange::kLower;
    } else if (action == "UPPER") {
      case_change_ = CaseChange::kUpper;
    } else {
      init.fail("case_change_action must be NONE, LOWER or UPPER, got '", action, "'");
    }
    for (const std::string& word : init.attr_strings("stopwords", {})) {
      const std::optional<std::string> key = case_sensitive_ ? word : convert(word, CaseChange::kLower);
      if (!key) init.fail("stopword '", word, "' is not valid UTF-8");
      stopwords_.insert(*key);
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kString) ctx.fail("input must be a string tensor, got ", dtype_name(x.dtype()));
    const bool two_d = x.rank() == 2;
    if (!(x.rank() == 1 || (two_d && x.shape()[0] == 1)))
      ctx.fail("input must have shape [C] or [1, C], got ", shape_to_string(x.shape()));
    std::vector<std::string> kept;
    for (const std::string& s : x.values<std::string>()) {
      if (!stopwords_.empty()) {
        const std::optional<std::string> key = case_sensitive_ ? s : convert(s, CaseChange::kLower);
        if (!key) ctx.fail("input string is not valid UTF-8");
        if (stopwords_.count(*key)) continue;
      }
      const std::optional<std::string> changed = convert(s, case_change_);
      if (!changed) ctx.fail("input string is not valid UTF-8");
      kept.push_back(*changed);
    }
    // Everything removed: one empty string, keeping the input's rank.
    if (kept.empty()) kept.emplace_back();
    const int64_t count = static_cast<int64_t>(kept.size());
    Tensor& out = ctx.allocate_output(0, DType::kString, two_d ? Shape{1, count} : Shape{count});
    std::copy(kept.begin(), kept.end(), out.data<std::string>());
  }

 private:
  std::optional<std::string> convert(const std::string& s, CaseChange change) const {
    if (change == CaseChange::kNone) return s;
    std::u32string cps;
    if (!decode_utf8(s, cps)) return std::nullopt;
    for (char32_t& cp : cps) {
      if (locale_ && cp <= 0x10ffff) {
        const auto& facet = std::use_facet<std::ctype<wchar_t>>(*locale_);
        const wchar_t w = static_cast<wchar_t>(cp);
        cp = static_cast<char32_t>(change == CaseChange::kLower ? facet.tolower(w) : facet.toupper(w));
      } else if (change == CaseChange::kLower && cp >= U'A' && cp <= U'Z') {
        cp += 32;
      } else if (change == CaseChange::kUpper && cp >= U'a' && cp <= U'z') {
        cp -= 32;
      }
    }
    return encode_utf8(cps);
  }

  bool case_sensitive_;
  CaseChange case_change_ = CaseChange::kNone;
  std::optional<std::locale> locale_;
  std::set<std::string> stopwords_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "StringNormalizer", 10, StringNormalizerKernel);

}  // namespace parity::runtime
