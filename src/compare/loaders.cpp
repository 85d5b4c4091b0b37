#include "compare/loaders.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "core/formats/file_io.h"
#include "core/logger.h"
#include "core/metadata.h"
#include "model/graph.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "runners/registry.h"

namespace parity::compare::loaders {

namespace fs = std::filesystem;

namespace {

std::string some_names(const std::vector<std::string>& names, size_t limit = 20) {
  std::vector<std::string> shown(names.begin(), names.begin() + std::min(limit, names.size()));
  std::string s = join_names(shown);
  if (names.size() > limit) s += str_cat(", ... (", names.size(), " in all)");
  return s;
}

}  // namespace

std::string bytes_from_path(const std::string& path) {
  std::error_code ec;
  PARITY_CHECK(fs::exists(path, ec), kNotFound, "model file '", path, "' does not exist");
  PARITY_CHECK(fs::is_regular_file(path, ec), kIo, "'", path, "' is not a regular file");
  std::ifstream in(path, std::ios::binary);
  PARITY_CHECK(in, kIo, "cannot open '", path, "' for reading");
  formats::note_input(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  PARITY_CHECK(in.good() || in.eof(), kIo, "cannot read '", path, "'");
  return ss.str();
}

Model onnx_from_bytes(const std::string& bytes, const std::string& what) {
  auto model = std::make_shared<onnx::ModelProto>();
  PARITY_CHECK(model->ParseFromString(bytes), kInvalidModel, what,
               " is not a valid ONNX model (protobuf parse failed: truncated or corrupt data, or nested deeper than "
               "protobuf's limit of 100 messages, e.g. subgraphs within subgraphs)");
  PARITY_CHECK(model->has_graph(), kInvalidModel, what, " has no graph");
  return model;
}

Model onnx_from_path(const std::string& path) { return onnx_from_bytes(bytes_from_path(path), "'" + path + "'"); }

Model onnx_from_graph(const model::Graph& graph) {
  model::Model exported = graph.to_model();
  return std::make_shared<onnx::ModelProto>(std::move(exported.proto()));
}

std::shared_ptr<model::Graph> graph_from_onnx(const onnx::ModelProto& model) {
  return model::Graph::from_model(model::Model(std::make_unique<onnx::ModelProto>(model)));
}

std::string bytes_from_onnx(const onnx::ModelProto& model) {
  std::string out;
  PARITY_CHECK(model.SerializeToString(&out), kInvalidArgument, "cannot serialize the model (over 2 GiB?)");
  return out;
}

void save_onnx(const onnx::ModelProto& model, const std::string& path) {
  formats::write_binary_file(path, bytes_from_onnx(model));
}

bool uses_external_data(const onnx::ModelProto& model) {
  for (const auto& init : model.graph().initializer())
    if (init.data_location() == onnx::TensorProto::EXTERNAL) return true;
  return false;
}

std::vector<std::string> produced_value_names(const onnx::ModelProto& model) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& node : model.graph().node())
    for (const auto& out : node.output())
      if (!out.empty() && seen.insert(out).second) names.push_back(out);
  return names;
}

std::map<std::string, onnx::ValueInfoProto> inferred_value_infos(const onnx::ModelProto& model) {
  std::string failure;
  const onnx::ModelProto inferred = model::inferred_copy(model, &failure);
  if (!failure.empty()) logger().verbose("ONNX shape inference failed (", failure, "); marked outputs get no type");
  std::map<std::string, onnx::ValueInfoProto> infos;
  for (const auto* list : {&inferred.graph().value_info(), &inferred.graph().output(), &inferred.graph().input()})
    for (const auto& vi : *list) infos.emplace(vi.name(), vi);
  return infos;
}

void modify_outputs(onnx::ModelProto& model, const std::vector<std::string>& outputs,
                    const std::vector<std::string>& exclude) {
  onnx::GraphProto* graph = model.mutable_graph();
  const std::vector<std::string> produced = produced_value_names(model);
  std::set<std::string> known(produced.begin(), produced.end());
  for (const auto& in : graph->input()) known.insert(in.name());
  for (const auto& init : graph->initializer()) known.insert(init.name());

  const std::map<std::string, onnx::ValueInfoProto> infos = inferred_value_infos(model);

  std::vector<std::string> wanted;
  const bool mark_all = outputs.size() == 2 && outputs[0] == "mark" && outputs[1] == "all";
  if (mark_all) {
    for (const auto& o : graph->output()) wanted.push_back(o.name());
    std::set<std::string> have(wanted.begin(), wanted.end());
    for (const auto& n : produced)
      if (have.insert(n).second) wanted.push_back(n);
  } else {
    for (const auto& n : outputs) {
      PARITY_CHECK(known.count(n), kInvalidArgument, "cannot mark '", n, "' as an output: the model has no tensor of that name; tensors include: ",
                   some_names(produced));
      if (std::find(wanted.begin(), wanted.end(), n) == wanted.end()) wanted.push_back(n);
    }
  }
  for (const auto& n : exclude) {
    auto it = std::find(wanted.begin(), wanted.end(), n);
    PARITY_CHECK(it != wanted.end(), kInvalidArgument, "cannot exclude '", n, "': it is not an output; outputs: ",
                 some_names(wanted));
    wanted.erase(it);
  }
  PARITY_CHECK(!wanted.empty(), kInvalidArgument, "the model would have no outputs left");

  std::map<std::string, onnx::ValueInfoProto> existing;
  for (const auto& o : graph->output()) existing.emplace(o.name(), o);
  graph->clear_output();
  for (const auto& n : wanted) {
    onnx::ValueInfoProto* vi = graph->add_output();
    if (auto it = existing.find(n); it != existing.end()) *vi = it->second;
    else if (auto jt = infos.find(n); jt != infos.end()) *vi = jt->second;
    else vi->set_name(n);
  }
}

BytesLoader BytesFromPath(std::string path) {
  return [path = std::move(path)] { return bytes_from_path(path); };
}

ModelLoader OnnxFromBytes(BytesLoader bytes) {
  return [bytes = std::move(bytes)] { return onnx_from_bytes(bytes()); };
}

ModelLoader OnnxFromPath(std::string path) {
  return [path = std::move(path)] { return onnx_from_path(path); };
}

BytesLoader BytesFromOnnx(ModelLoader model) {
  return [model = std::move(model)] { return bytes_from_onnx(*model()); };
}

ModelLoader SaveOnnx(ModelLoader model, std::string path) {
  return [model = std::move(model), path = std::move(path)] {
    Model m = model();
    logger().info("Saving ONNX model to: ", path);
    save_onnx(*m, path);
    return m;
  };
}

ModelLoader ModifyOutputs(ModelLoader model, std::vector<std::string> outputs, std::vector<std::string> exclude) {
  return [model = std::move(model), outputs = std::move(outputs), exclude = std::move(exclude)] {
    Model m = model();
    // Loaders may hand out a shared model: edit a copy.
    auto copy = std::make_shared<onnx::ModelProto>(*m);
    modify_outputs(*copy, outputs, exclude);
    return copy;
  };
}

namespace {

// A runner of a registered runtime over a model produced by a loader at activation.
class LoadedRunner : public runners::Runner {
 public:
  LoadedRunner(const runners::RunnerInfo& info, ModelLoader loader, std::string base_dir, const runners::RunnerOptions& runner_options,
               std::string name)
      : runners::Runner(name.empty() ? runners::make_runner_name(info.name) : std::move(name)),
        info_(info),
        loader_(std::move(loader)),
        base_dir_(std::move(base_dir)),
        runner_options_(runner_options) {}
  ~LoadedRunner() override { remove_temp(); }

 protected:
  void activate_impl() override {
    Model model = loader_();
    // Only a model with external data must sit next to its data files; others go to the temp dir
    // (the model's own folder may be read-only).
    const fs::path dir = base_dir_.empty() || !uses_external_data(*model) ? fs::temp_directory_path() : fs::path(base_dir_);
    std::random_device rd;
    temp_path_ = (dir / str_cat(".parity-model-", rd(), rd(), ".onnx")).string();
    save_onnx(*model, temp_path_);
    inner_ = info_.create(runners::RunnerConfig{temp_path_, runner_options_});
    inner_->activate();
  }
  void deactivate_impl() override {
    if (inner_ && inner_->is_active()) inner_->deactivate();
    inner_.reset();
    remove_temp();
  }
  TensorMetadata input_metadata_impl() override { return inner_->input_metadata(); }
  TensorMap infer_impl(const TensorMap& feed) override { return inner_->infer(feed, false); }

 private:
  void remove_temp() {
    if (temp_path_.empty()) return;
    std::error_code ec;
    fs::remove(temp_path_, ec);
    temp_path_.clear();
  }

  const runners::RunnerInfo& info_;
  ModelLoader loader_;
  std::string base_dir_;
  runners::RunnerOptions runner_options_;
  std::string temp_path_;
  std::unique_ptr<runners::Runner> inner_;
};

}  // namespace

std::unique_ptr<runners::Runner> RunnerFromOnnx(const std::string& runner_name, ModelLoader model, std::string base_dir,
                                       const runners::RunnerOptions& runner_options, std::string name) {
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(runner_name);
  if (!info) {
    std::vector<std::string> names;
    for (const auto& r : runners::RunnerRegistry::instance().all()) names.push_back(r.name);
    fail(ErrorCode::kUnavailable, "no runner named '", runner_name, "'; registered runners: ",
         names.empty() ? "(none)" : join_names(names));
  }
  const Status available = info->available(runner_options);
  PARITY_CHECK(available.is_ok(), kUnavailable, "runner '", runner_name, "' is unavailable: ", available.message());
  return std::make_unique<LoadedRunner>(*info, std::move(model), std::move(base_dir), runner_options, std::move(name));
}

}  // namespace parity::compare::loaders
