#include "tools/validate/summary.h"

#include <cmath>
#include <filesystem>
#include <set>

#include "core/formats/file_io.h"
#include "core/formats/npz.h"
#include "runners/registry.h"

namespace parity::tools::validation {
namespace {

using Json = nlohmann::json;

// JSON has no NaN or infinity: figures that are not finite are written as strings.
Json figure(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

SummaryJson error_section(const ErrorAccumulator& a) {
  SummaryJson j;
  j["max"] = a.max;
  j["mean"] = a.mean();
  j["p50"] = a.histogram.quantile(0.5);
  j["p90"] = a.histogram.quantile(0.9);
  j["p99"] = a.histogram.quantile(0.99);
  j["p999"] = a.histogram.quantile(0.999);
  j["nonfinite"] = a.histogram.nonfinite();
  return j;
}

SummaryJson histogram_section(const ErrorHistogram& h) {
  SummaryJson bins = SummaryJson::array();
  for (const auto& b : h.bins()) bins.push_back({b.lower, b.upper, b.count});
  return bins;
}

double ratio(int64_t num, int64_t den) { return den ? static_cast<double>(num) / static_cast<double>(den) : 0.0; }

uint64_t fnv1a(uint64_t hash, const std::string& text) {
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return (hash ^ 0xff) * 1099511628211ull;  // a separator, so ["ab", "c"] and ["a", "bc"] differ
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string flag_of(const std::string& runner) {
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(runner);
  return info ? info->flag : "--" + runner;
}

}  // namespace

nlohmann::json dataset_json(const std::string& path, const DatasetReader& dataset) {
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < dataset.size(); ++i) hash = fnv1a(hash, dataset.name(i));
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return {{"path", path}, {"kind", dataset.kind()}, {"samples", dataset.size()}, {"names_fnv1a", hex}};
}

nlohmann::json settings_json(const ValidateConfig& config) {
  const auto& c = config.compare;
  Json j;
  j["runners"] = config.runners;
  j["reference"] = config.reference_outputs ? std::string("stored")
                                            : config.reference.value_or(config.runners.empty() ? std::string() : config.runners.front());
  j["reference_outputs"] = config.reference_outputs ? Json(*config.reference_outputs) : Json();
  j["plan"] = config.plan_path ? Json(config.plan_label.value_or(*config.plan_path)) : Json();
  j["plan_candidate"] = config.plan_path ? Json(config.plan_name) : Json();
  j["atol"] = c.atol.default_value();
  j["rtol"] = c.rtol.default_value();
  j["check_error_stat"] = compare::error_stat_name(c.check_error_stat.default_value());
  j["error_quantile"] = c.error_quantile.default_value();
  Json per_output = Json::object();
  std::set<std::string> names;
  for (const auto& n : c.atol.names()) names.insert(n);
  for (const auto& n : c.rtol.names()) names.insert(n);
  for (const auto& n : c.check_error_stat.names()) names.insert(n);
  for (const auto& n : names)
    per_output[n] = {{"atol", c.atol.get(n)}, {"rtol", c.rtol.get(n)},
                     {"check_error_stat", compare::error_stat_name(c.check_error_stat.get(n))}};
  j["per_output"] = per_output;
  j["infinities_compare_equal"] = c.infinities_compare_equal;
  j["top_k"] = config.top_k;
  j["labels"] = config.labels ? Json(config.labels_path) : Json();
  j["label_output"] = config.label_output ? Json(*config.label_output) : Json();
  j["worst"] = config.worst_count;
  j["skip_bad_samples"] = config.skip_bad_samples;
  return j;
}

namespace {

// A model as a summary names it, as `parity run` takes it: "X.nav[:FORMAT]" is a format of a package,
// unpacked first (into X.unpacked) by `parity package load`.
struct RunnableModel {
  std::string setup;  // "parity package load ... && " or ""
  std::string path;
};
RunnableModel runnable(const std::string& label, const std::string& default_format, const std::string& file) {
  const size_t nav = label.find(".nav");
  if (nav == std::string::npos || (nav + 4 != label.size() && label[nav + 4] != ':')) return {"", shell_quote(label)};
  const std::string package = label.substr(0, nav + 4);
  const std::string format = nav + 4 < label.size() ? label.substr(nav + 5) : default_format;
  const std::string dir = label.substr(0, nav) + ".unpacked";
  return {"parity package load " + shell_quote(package) + " -o " + shell_quote(dir) + " && ",
          shell_quote(dir + "/" + format + "/" + file)};
}

}  // namespace

std::optional<std::string> rerun_command(const SummaryInfo& info, const std::string& candidate, const std::string& inputs) {
  const Json& s = info.settings;
  const RunnableModel model = runnable(info.model, "onnx", "model.onnx");
  std::string tolerances = " --atol " + Json(s.value("atol", 0.0)).dump() + " --rtol " + Json(s.value("rtol", 0.0)).dump();
  if (s.value("check_error_stat", "elemwise") != "elemwise") tolerances += " --check-error-stat " + s.value("check_error_stat", "");
  const std::string reference = s.value("reference", "");
  const std::string load = " --load-inputs " + shell_quote(inputs);
  if (reference == "stored") {
    // ONNX test data: `run` compares a runner with a set's output_K.pb itself.
    if (s["reference_outputs"] != "dataset") return std::nullopt;
    return model.setup + "parity run " + model.path + " " + flag_of(candidate) + load + " --load-outputs " +
           shell_quote(inputs) + tolerances;
  }
  if (s.contains("plan_candidate") && s["plan_candidate"] == candidate) {
    const RunnableModel plan = runnable(s["plan"].get<std::string>(), "", "model.plan");
    return (plan.setup.empty() ? model.setup : plan.setup) + "parity run " + plan.path + " --ref" + load +
           " --save-outputs plan_outputs.json && parity run " + model.path + " " + flag_of(reference) + load +
           " --load-outputs plan_outputs.json" + tolerances;
  }
  return model.setup + "parity run " + model.path + " " + flag_of(reference) + " " + flag_of(candidate) + load + tolerances;
}

namespace {

SummaryJson output_section(const SummaryInfo& info, const std::string& candidate, const std::string& name,
                           const OutputState& o) {
  SummaryJson j;
  j["name"] = name;
  j["samples"] = o.samples;
  j["samples_passed"] = o.samples_passed;
  j["pass_rate"] = ratio(o.samples_passed, o.samples);
  j["elements"] = o.abs.histogram.count() + o.abs.histogram.nonfinite();
  j["abs_error"] = error_section(o.abs);
  j["rel_error"] = error_section(o.rel);
  SummaryJson& per_sample = j["per_sample"] = SummaryJson::object();
  for (const auto& [figure_name, f] : o.per_sample)
    per_sample[figure_name] = {{"max", f.max}, {"mean", f.count ? f.sum.value() / static_cast<double>(f.count) : 0.0},
                               {"nonfinite", f.nonfinite}};
  if (const int64_t k = info.settings.value("top_k", int64_t{0}); k > 0)
    j["top_k"] = {{"k", k}, {"rows", o.topk_rows}, {"top1_agreement", ratio(o.top1_agree, o.topk_rows)},
                  {"topk_overlap", ratio(o.topk_overlap, o.topk_rows * k)}};
  SummaryJson& worst = j["worst"] = SummaryJson::array();
  for (const auto& w : o.worst) {
    SummaryJson wj{{"sample", w.name}, {"index", w.index}, {"max_absdiff", figure(w.max_absdiff)},
                   {"max_reldiff", figure(w.max_reldiff)}, {"mean_absdiff", figure(w.mean_absdiff)}, {"passed", w.passed}};
    const auto rerun = w.inputs.empty() ? std::nullopt : rerun_command(info, candidate, w.inputs);
    wj["rerun"] = rerun ? SummaryJson(*rerun) : SummaryJson();
    worst.push_back(std::move(wj));
  }
  j["histograms"] = {{"abs_error", histogram_section(o.abs.histogram)}, {"rel_error", histogram_section(o.rel.histogram)}};
  return j;
}

SummaryJson accuracy_section(const SummaryInfo& info, const ValidationState& state) {
  SummaryJson acc;
  acc["labels"] = info.settings["labels"];
  acc["samples"] = state.labeled;
  SummaryJson& runners = acc["runners"] = SummaryJson::array();
  for (const auto& [runner, hits] : state.accuracy)
    runners.push_back({{"runner", runner}, {"top1", ratio(hits.top1, state.labeled)}, {"topk", ratio(hits.topk, state.labeled)},
                       {"top1_hits", hits.top1}, {"topk_hits", hits.topk}});
  SummaryJson& classes = acc["classes"] = SummaryJson::array();
  for (const auto& [label, counts] : state.classes)
    classes.push_back({{"label", label}, {"samples", counts.first}, {"top1_hits", counts.second}});
  return acc;
}

}  // namespace

SummaryJson make_summary(const SummaryInfo& info, const ValidationState& state) {
  const auto [begin, end] = shard_range(info.dataset.value("samples", int64_t{0}), {info.shard_index, info.shard_count});
  const int64_t done = state.done.count();
  const bool complete = done == end - begin;
  const int64_t skipped = static_cast<int64_t>(state.skipped.size());
  SummaryJson j;
  j["schema"] = kSummarySchema;
  j["complete"] = complete;
  j["passed"] = complete && state.samples_failed == 0;
  j["model"] = info.model;
  j["dataset"] = info.dataset;
  j["shard"] = {{"index", info.shard_index}, {"count", info.shard_count}, {"begin", begin}, {"end", end}};
  j["settings"] = info.settings;
  j["samples"] = {{"in_shard", end - begin}, {"done", done}, {"validated", done - skipped}, {"skipped", skipped},
                  {"failed", state.samples_failed}, {"passed", done - skipped - state.samples_failed}};
  SummaryJson& comparisons = j["comparisons"] = SummaryJson::array();
  for (const auto& pair : state.pairs) {
    SummaryJson pj{{"reference", pair.reference}, {"candidate", pair.candidate}, {"outputs", SummaryJson::array()}};
    for (const auto& [name, o] : pair.outputs) pj["outputs"].push_back(output_section(info, pair.candidate, name, o));
    comparisons.push_back(std::move(pj));
  }
  if (!info.settings["labels"].is_null()) j["accuracy"] = accuracy_section(info, state);
  SummaryJson& skipped_list = j["skipped_samples"] = SummaryJson::array();
  for (const auto& s : state.skipped) skipped_list.push_back({{"sample", s.name}, {"index", s.index}, {"reason", s.reason}});
  j["checkpoint"] = state.to_json();
  j["run"] = {{"ranks", info.ranks}, {"wall_seconds", info.wall_seconds},
              {"samples_per_second", info.wall_seconds > 0 ? static_cast<double>(done) / info.wall_seconds : 0.0}};
  return j;
}

std::pair<SummaryInfo, ValidationState> read_summary(const std::string& path) {
  Json j;
  try {
    j = Json::parse(formats::read_binary_file(path));
  } catch (const Json::exception& e) {
    throw Error(ErrorCode::kInvalidModel, str_cat("summary '", path, "' is not JSON: ", e.what()));
  }
  PARITY_CHECK(j.is_object() && j.value("schema", "") == kSummarySchema, kInvalidModel, "'", path,
               "' is not a parity validate summary (schema ", kSummarySchema, ")");
  try {
    SummaryInfo info;
    info.model = j.at("model").get<std::string>();
    info.dataset = j.at("dataset");
    info.settings = j.at("settings");
    info.shard_index = j.at("shard").at("index").get<int64_t>();
    info.shard_count = j.at("shard").at("count").get<int64_t>();
    info.ranks = j.at("run").at("ranks").get<int>();
    info.wall_seconds = j.at("run").at("wall_seconds").get<double>();
    return {info, ValidationState::from_json(j.at("checkpoint"))};
  } catch (const Json::exception& e) {
    throw Error(ErrorCode::kInvalidModel, str_cat("summary '", path, "': ", e.what()));
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvalidModel, str_cat("summary '", path, "': ", e.what()));
  }
}

SummaryJson merge_summaries(const std::vector<std::string>& paths) {
  PARITY_CHECK(!paths.empty(), kInvalidArgument, "no summaries to merge");
  auto [info, state] = read_summary(paths.front());
  for (size_t i = 1; i < paths.size(); ++i) {
    auto [other, other_state] = read_summary(paths[i]);
    for (const auto& [what, mine, theirs] : {std::tuple{"model", Json(info.model), Json(other.model)},
                                             std::tuple{"dataset", info.dataset, other.dataset},
                                             std::tuple{"settings", info.settings, other.settings}})
      PARITY_CHECK(mine == theirs, kInvalidArgument, "'", paths[i], "' was made with another ", what, " than '",
                   paths.front(), "': ", theirs.dump(), " vs ", mine.dump());
    try {
      state.merge(other_state);
    } catch (const Error& e) {
      throw Error(e.code(), str_cat("'", paths[i], "': ", e.what()));
    }
    info.wall_seconds = std::max(info.wall_seconds, other.wall_seconds);
    info.ranks = std::max(info.ranks, other.ranks);
  }
  info.shard_index = 0;
  info.shard_count = 1;
  return make_summary(info, state);
}

void save_worst_samples(ValidationState& state, const DatasetReader& dataset, const std::string& dir) {
  std::set<int64_t> saved;
  for (auto& pair : state.pairs)
    for (auto& [name, o] : pair.outputs)
      for (auto& w : o.worst) {
        if (!w.inputs.empty()) continue;
        // "a.npy" -> a.npz; an item of a batched file, "a.npy[3]" -> a_3.npz.
        const size_t bracket = w.name.find('[');
        std::string base = std::filesystem::path(w.name.substr(0, bracket)).stem().string();
        if (bracket != std::string::npos) base.append(1, '_').append(w.name, bracket + 1, w.name.size() - bracket - 2);
        const std::string file = (std::filesystem::path(dir) / (base + ".npz")).string();
        if (saved.insert(w.index).second) {
          std::filesystem::create_directories(dir);
          write_npz(file, dataset.read(static_cast<size_t>(w.index)));
        }
        w.inputs = file;
      }
}

}  // namespace parity::tools::validation
