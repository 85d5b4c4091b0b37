#include "compare/postprocess_args.h"

#include "core/text.h"

namespace parity::compare {

namespace {

void read_postprocess(PostprocessSettings& settings, const options::Given& given) {
  for (const auto& item : given.values) {
    auto [name, value] = split_name_value(item);
    PARITY_CHECK(value.rfind("top-", 0) == 0, kInvalidArgument, "invalid post-processing function '", value,
                 "'; valid: top-<K>[,axis=<axis>]");
    TopK topk;
    const std::string rest = value.substr(4);
    const size_t comma = rest.find(',');
    topk.k = parse_int(rest.substr(0, comma), "--postprocess top-K");
    if (comma != std::string::npos) {
      const std::string axis = rest.substr(comma + 1);
      PARITY_CHECK(axis.rfind("axis=", 0) == 0, kInvalidArgument, "--postprocess '", item,
                   "': expected ,axis=<axis> after top-K");
      topk.axis = parse_int(axis.substr(5), "--postprocess axis");
    }
    if (!name.empty()) settings.named_outputs.push_back(name);
    settings.top_k.set(name, topk);
    settings.enabled = true;
  }
}

}  // namespace

PostprocessArgs::PostprocessArgs() {
  add({.flags = {"--postprocess", "--postprocess-func"}, .dest = "postprocess",
       .help = "Post-process outputs before comparing: [name:]top-K[,axis=A]", .metavar = "FUNC",
       .arity = options::Arity::kOneOrMore},
      read_postprocess);
}

}  // namespace parity::compare
