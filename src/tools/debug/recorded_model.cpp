#include "tools/debug/recorded_model.h"

#include <map>

#include "compare/feed_files.h"
#include "core/logger.h"
#include "runtime/session.h"
#include "tools/fold.h"

namespace parity::tools::debug {

namespace {

model::Model folded_and_sorted(const model::Model& original, const options::DataLoaderOptions& data, Folding folding) {
  std::map<std::string, DimShape> shapes;
  for (const auto& item : data.input_shapes) shapes[item.input] = DimShape(item.shape);
  std::shared_ptr<model::Graph> graph;
  if (folding == Folding::kAll) {
    FoldReport report;
    graph = fold_constants(original, FoldOptions{}, &report, shapes);
    logger().info("Folded constants: ", report.nodes_before, " -> ", report.nodes_after, " nodes");
  } else {
    graph = model::Graph::from_model(original);
    if (!shapes.empty()) override_input_shapes(*graph, shapes);
    if (folding == Folding::kConstantNodes) lower_constant_nodes(*graph);
  }
  graph->toposort();
  graph->cleanup(false);
  return graph->to_model();
}

std::vector<TensorMap> make_feeds(const model::Model& model, const options::DataLoaderOptions& data, int64_t iterations) {
  const runtime::Session session = runtime::Session::create(model.proto(), {}, model.base_dir()).value();
  std::unique_ptr<compare::FeedSource> source = compare::make_feed_source(data, iterations);
  source->set_input_metadata(session.input_metadata());
  std::vector<TensorMap> feeds;
  for (size_t i = 0;; ++i) {
    std::optional<TensorMap> feed = source->feed(i);
    if (!feed) break;
    feeds.push_back(std::move(*feed));
  }
  PARITY_CHECK(!feeds.empty(), kInvalidArgument, "no inputs to run the model on (--load-inputs holds no iteration)");
  return feeds;
}

}  // namespace

RecordedModel record_model(const model::Model& model, const options::DataLoaderOptions& data, int64_t iterations,
                           Folding folding) {
  model::Model base = folded_and_sorted(model, data, folding);
  const std::vector<TensorMap> feeds = make_feeds(base, data, iterations);
  logger().info("Recording every tensor of the model on ", feeds.size(), " feed(s)");
  RecordedModel recorded;
  recorded.values = record_all_values(base, feeds);
  recorded.base = with_observed_types(base, recorded.values.front());
  return recorded;
}

}  // namespace parity::tools::debug
