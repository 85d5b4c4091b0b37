// The summary file of `parity validate` (--save-summary): figures for people and CI, derived from
// the exact state it also carries (its "checkpoint"), so that summaries of shards merge, and an
// interrupted run resumes, into the summary a single process would have written. Schema:
// docs/validate.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/validate/dataset.h"
#include "tools/validate/state.h"
#include "tools/validate/validate.h"

namespace parity::tools::validation {

using SummaryJson = nlohmann::ordered_json;

inline constexpr const char* kSummarySchema = "parity.validate.summary/1";

/// What a summary says about the run besides the state.
struct SummaryInfo {
  std::string model;
  nlohmann::json dataset;   // dataset_json()
  nlohmann::json settings;  // settings_json()
  int64_t shard_index = 0, shard_count = 1;
  int ranks = 1;
  double wall_seconds = 0;
};

/// The dataset's identity: path, kind, sample count and a hash of the sample names.
nlohmann::json dataset_json(const std::string& path, const DatasetReader& dataset);
/// The settings that decide the figures (runners, tolerances, top-k, labels, worst count).
nlohmann::json settings_json(const ValidateConfig& config);

/// The summary. complete = every sample of the shard done.
SummaryJson make_summary(const SummaryInfo& info, const ValidationState& state);
/// Reads a summary file's info and state. Throws kInvalidModel naming `path` when it is not one.
std::pair<SummaryInfo, ValidationState> read_summary(const std::string& path);
/// Merges summaries of disjoint shards (same model, dataset and settings; else kInvalidArgument
/// naming the file that differs).
SummaryJson merge_summaries(const std::vector<std::string>& paths);

/// The `parity run` command that reruns one sample: the model on the reference and the candidate
/// with the summary's tolerances, fed from `inputs` (nullopt where `run` cannot, e.g. against a
/// folder of stored outputs).
std::optional<std::string> rerun_command(const SummaryInfo& info, const std::string& candidate, const std::string& inputs);

}  // namespace parity::tools::validation

namespace parity::tools::validation {
/// Worst samples that no file reproduces (an .npy, an image, an iteration of an inputs JSON) are
/// saved as DIR/<name>.npz, so that their rerun commands have inputs; sets their `inputs`.
void save_worst_samples(ValidationState& state, const DatasetReader& dataset, const std::string& dir);
}  // namespace parity::tools::validation
