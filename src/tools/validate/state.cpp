#include "tools/validate/state.h"

#include <algorithm>
#include <cmath>

#include "core/status.h"

namespace parity::tools::validation {
namespace {

using Json = nlohmann::json;

const Json& field(const Json& j, const char* key) {
  PARITY_CHECK(j.is_object() && j.contains(key), kInvalidModel, "validation state: missing \"", key, "\"");
  return j.at(key);
}

template <typename T>
T get(const Json& j, const char* key) {
  const Json& v = field(j, key);
  try {
    return v.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error(ErrorCode::kInvalidModel, str_cat("validation state: \"", key, "\" has the wrong type"));
  }
}

// NaN ranks above everything: a sample with a NaN error is as bad as it gets.
double badness(double v) { return std::isnan(v) ? INFINITY : v; }

bool worse(const WorstSample& a, const WorstSample& b) {
  if (badness(a.max_absdiff) != badness(b.max_absdiff)) return badness(a.max_absdiff) > badness(b.max_absdiff);
  return a.index < b.index;
}

// JSON has no NaN or infinity: they are stored as the strings "nan", "inf" and "-inf".
Json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

double number_at(const Json& j, const char* key) {
  const Json& v = field(j, key);
  if (v.is_number()) return v.get<double>();
  if (v == "nan") return NAN;
  if (v == "inf") return INFINITY;
  if (v == "-inf") return -INFINITY;
  throw Error(ErrorCode::kInvalidModel, str_cat("validation state: \"", key, "\" must be a number"));
}

}  // namespace

void IndexRanges::add(int64_t begin, int64_t end) {
  if (begin >= end) return;
  ranges_.emplace_back(begin, end);
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (const auto& r : ranges_) {
    if (!merged.empty() && r.first <= merged.back().second) merged.back().second = std::max(merged.back().second, r.second);
    else merged.push_back(r);
  }
  ranges_ = std::move(merged);
}

void IndexRanges::merge(const IndexRanges& other) {
  for (const auto& [b, e] : other.ranges_) add(b, e);
}

bool IndexRanges::contains(int64_t index) const {
  return std::any_of(ranges_.begin(), ranges_.end(), [&](const auto& r) { return index >= r.first && index < r.second; });
}

int64_t IndexRanges::count() const {
  int64_t n = 0;
  for (const auto& [b, e] : ranges_) n += e - b;
  return n;
}

bool IndexRanges::overlaps(const IndexRanges& other) const {
  for (const auto& [b, e] : ranges_)
    for (const auto& [ob, oe] : other.ranges_)
      if (b < oe && ob < e) return true;
  return false;
}

Json IndexRanges::to_json() const {
  Json j = Json::array();
  for (const auto& [b, e] : ranges_) j.push_back({b, e});
  return j;
}

IndexRanges IndexRanges::from_json(const Json& j) {
  PARITY_CHECK(j.is_array(), kInvalidModel, "validation state: \"done\" must be a list of [begin, end] ranges");
  IndexRanges r;
  for (const auto& range : j) {
    PARITY_CHECK(range.is_array() && range.size() == 2 && range[0].is_number_integer() && range[1].is_number_integer() &&
                     range[0].get<int64_t>() >= 0 && range[0].get<int64_t>() <= range[1].get<int64_t>(),
                 kInvalidModel, "validation state: a done range must be [begin, end] with 0 <= begin <= end");
    r.add(range[0].get<int64_t>(), range[1].get<int64_t>());
  }
  return r;
}

void ErrorAccumulator::add(double value) {
  histogram.add(value);
  if (!std::isfinite(value)) return;
  max = std::max(max, value);
  sum.add(value);
}

void ErrorAccumulator::merge(const ErrorAccumulator& other) {
  max = std::max(max, other.max);
  sum.merge(other.sum);
  histogram.merge(other.histogram);
}

double ErrorAccumulator::mean() const {
  return histogram.count() ? sum.value() / static_cast<double>(histogram.count()) : 0.0;
}

Json ErrorAccumulator::to_json() const { return {{"max", max}, {"sum", sum.to_json()}, {"histogram", histogram.to_json()}}; }

ErrorAccumulator ErrorAccumulator::from_json(const Json& j) {
  ErrorAccumulator a;
  a.max = get<double>(j, "max");
  a.sum = ExactSum::from_json(field(j, "sum"));
  a.histogram = ErrorHistogram::from_json(field(j, "histogram"));
  return a;
}

void SampleFigure::add(double value) {
  if (!std::isfinite(value)) {
    ++nonfinite;
    return;
  }
  max = count == 0 ? value : std::max(max, value);
  ++count;
  sum.add(value);
}

void SampleFigure::merge(const SampleFigure& other) {
  nonfinite += other.nonfinite;
  if (other.count == 0) return;
  max = count == 0 ? other.max : std::max(max, other.max);
  count += other.count;
  sum.merge(other.sum);
}

Json SampleFigure::to_json() const {
  return {{"count", count}, {"nonfinite", nonfinite}, {"max", max}, {"sum", sum.to_json()}};
}

SampleFigure SampleFigure::from_json(const Json& j) {
  SampleFigure f;
  f.count = get<int64_t>(j, "count");
  f.nonfinite = get<int64_t>(j, "nonfinite");
  f.max = get<double>(j, "max");
  f.sum = ExactSum::from_json(field(j, "sum"));
  return f;
}

void OutputState::add_worst(WorstSample sample, size_t worst_limit) {
  worst.insert(std::upper_bound(worst.begin(), worst.end(), sample, worse), std::move(sample));
  if (worst.size() > worst_limit) worst.resize(worst_limit);
}

void OutputState::merge(const OutputState& other, size_t worst_limit) {
  abs.merge(other.abs);
  rel.merge(other.rel);
  samples += other.samples;
  samples_passed += other.samples_passed;
  for (const auto& [name, figure] : other.per_sample) per_sample[name].merge(figure);
  topk_rows += other.topk_rows;
  top1_agree += other.top1_agree;
  topk_overlap += other.topk_overlap;
  for (const auto& w : other.worst) add_worst(w, worst_limit);
}

OutputState& PairState::output(const std::string& name) {
  for (auto& [n, state] : outputs)
    if (n == name) return state;
  return outputs.emplace_back(name, OutputState{}).second;
}

PairState& ValidationState::pair(const std::string& reference, const std::string& candidate) {
  for (auto& p : pairs)
    if (p.reference == reference && p.candidate == candidate) return p;
  pairs.push_back(PairState{reference, candidate, {}});
  return pairs.back();
}

void ValidationState::merge(const ValidationState& other) {
  PARITY_CHECK(!done.overlaps(other.done), kInvalidArgument,
               "the partial summaries overlap: some samples were validated twice (merge the summaries of disjoint shards)");
  done.merge(other.done);
  samples_failed += other.samples_failed;
  skipped.insert(skipped.end(), other.skipped.begin(), other.skipped.end());
  std::sort(skipped.begin(), skipped.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  for (const auto& p : other.pairs) {
    PairState& mine = pair(p.reference, p.candidate);
    for (const auto& [name, state] : p.outputs) mine.output(name).merge(state, worst_limit);
  }
  labeled += other.labeled;
  for (const auto& [runner, hits] : other.accuracy) {
    accuracy[runner].top1 += hits.top1;
    accuracy[runner].topk += hits.topk;
  }
  for (const auto& [label, counts] : other.classes) {
    auto& mine = classes[label];
    mine.first += counts.first;
    for (const auto& [runner, n] : counts.second) mine.second[runner] += n;
  }
}

Json ValidationState::to_json() const {
  Json j;
  j["worst_limit"] = worst_limit;
  j["done"] = done.to_json();
  j["samples_failed"] = samples_failed;
  Json& skip = j["skipped"] = Json::array();
  for (const auto& s : skipped) skip.push_back({{"index", s.index}, {"name", s.name}, {"reason", s.reason}});
  Json& ps = j["pairs"] = Json::array();
  for (const auto& p : pairs) {
    Json pj{{"reference", p.reference}, {"candidate", p.candidate}, {"outputs", Json::array()}};
    for (const auto& [name, o] : p.outputs) {
      Json oj{{"name", name}, {"abs", o.abs.to_json()}, {"rel", o.rel.to_json()}, {"samples", o.samples},
              {"samples_passed", o.samples_passed}, {"topk_rows", o.topk_rows}, {"top1_agree", o.top1_agree},
              {"topk_overlap", o.topk_overlap}};
      Json& figures = oj["per_sample"] = Json::object();
      for (const auto& [fname, f] : o.per_sample) figures[fname] = f.to_json();
      Json& worst = oj["worst"] = Json::array();
      for (const auto& w : o.worst)
        worst.push_back({{"index", w.index}, {"name", w.name}, {"max_absdiff", number(w.max_absdiff)},
                         {"max_reldiff", number(w.max_reldiff)}, {"mean_absdiff", number(w.mean_absdiff)},
                         {"passed", w.passed}, {"inputs", w.inputs}});
      pj["outputs"].push_back(std::move(oj));
    }
    ps.push_back(std::move(pj));
  }
  j["labeled"] = labeled;
  Json& acc = j["accuracy"] = Json::object();
  for (const auto& [runner, hits] : accuracy) acc[runner] = {{"top1", hits.top1}, {"topk", hits.topk}};
  Json& cls = j["classes"] = Json::array();
  for (const auto& [label, counts] : classes) cls.push_back({{"label", label}, {"samples", counts.first}, {"top1", counts.second}});
  return j;
}

ValidationState ValidationState::from_json(const Json& j) {
  ValidationState s;
  s.worst_limit = get<size_t>(j, "worst_limit");
  s.done = IndexRanges::from_json(field(j, "done"));
  s.samples_failed = get<int64_t>(j, "samples_failed");
  for (const auto& k : field(j, "skipped"))
    s.skipped.push_back({get<int64_t>(k, "index"), get<std::string>(k, "name"), get<std::string>(k, "reason")});
  for (const auto& pj : field(j, "pairs")) {
    PairState& p = s.pair(get<std::string>(pj, "reference"), get<std::string>(pj, "candidate"));
    for (const auto& oj : field(pj, "outputs")) {
      OutputState& o = p.output(get<std::string>(oj, "name"));
      o.abs = ErrorAccumulator::from_json(field(oj, "abs"));
      o.rel = ErrorAccumulator::from_json(field(oj, "rel"));
      o.samples = get<int64_t>(oj, "samples");
      o.samples_passed = get<int64_t>(oj, "samples_passed");
      o.topk_rows = get<int64_t>(oj, "topk_rows");
      o.top1_agree = get<int64_t>(oj, "top1_agree");
      o.topk_overlap = get<int64_t>(oj, "topk_overlap");
      for (const auto& [fname, f] : field(oj, "per_sample").items()) o.per_sample[fname] = SampleFigure::from_json(f);
      for (const auto& w : field(oj, "worst"))
        o.worst.push_back({get<int64_t>(w, "index"), get<std::string>(w, "name"), number_at(w, "max_absdiff"),
                           number_at(w, "max_reldiff"), number_at(w, "mean_absdiff"), get<bool>(w, "passed"),
                           get<std::string>(w, "inputs")});
    }
  }
  s.labeled = get<int64_t>(j, "labeled");
  for (const auto& [runner, hits] : field(j, "accuracy").items())
    s.accuracy[runner] = {get<int64_t>(hits, "top1"), get<int64_t>(hits, "topk")};
  for (const auto& c : field(j, "classes")) {
    auto& counts = s.classes[get<int64_t>(c, "label")];
    counts.first = get<int64_t>(c, "samples");
    counts.second = get<std::map<std::string, int64_t>>(c, "top1");
  }
  return s;
}

}  // namespace parity::tools::validation
