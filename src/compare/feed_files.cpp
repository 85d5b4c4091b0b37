#include "compare/feed_files.h"

#include <algorithm>
#include <filesystem>

#include "core/formats/npz.h"
#include "core/formats/polygraphy_json.h"
#include "core/logger.h"

namespace parity::compare {

namespace fs = std::filesystem;

namespace {
bool has_extension(const fs::path& p, const std::string& ext) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e == ext;
}
}  // namespace

std::vector<TensorMap> load_feeds(const std::string& path) {
  std::error_code ec;
  PARITY_CHECK(fs::exists(path, ec), kNotFound, "input data '", path, "' does not exist");
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(path))
      if (entry.is_regular_file() && has_extension(entry.path(), ".npz")) files.push_back(entry.path());
    PARITY_CHECK(!files.empty(), kNotFound, "folder '", path, "' holds no .npz files");
    std::sort(files.begin(), files.end());
    std::vector<TensorMap> feeds;
    for (const auto& f : files) feeds.push_back(read_npz(f.string()));
    logger().info("Loaded ", feeds.size(), " iteration(s) from ", files.size(), " .npz file(s) in ", path);
    return feeds;
  }
  if (has_extension(path, ".npz")) return {read_npz(path)};
  return read_inputs_json(path);
}

std::vector<TensorMap> load_feeds(const std::vector<std::string>& paths) {
  std::vector<TensorMap> all;
  for (const auto& p : paths) {
    auto feeds = load_feeds(p);
    all.insert(all.end(), std::make_move_iterator(feeds.begin()), std::make_move_iterator(feeds.end()));
  }
  return all;
}

void save_feeds(const std::string& path, const std::vector<TensorMap>& feeds) {
  if (has_extension(path, ".npz")) {
    PARITY_CHECK(feeds.size() == 1, kInvalidArgument, "an .npz file holds one iteration, but there are ",
                 feeds.size(), "; save to a .json file instead");
    write_npz(path, feeds[0]);
  } else {
    write_inputs_json(path, feeds);
  }
  logger().info("Saving inference input data to ", path);
}

std::unique_ptr<FeedSource> make_feed_source(const options::DataLoaderOptions& options, int64_t iterations) {
  if (!options.load_inputs.empty()) return std::make_unique<FeedList>(load_feeds(options.load_inputs));
  auto loader = std::make_unique<DataLoader>();
  if (options.seed) loader->seed(*options.seed);
  loader->iterations(iterations);
  for (const auto& r : options.val_ranges) loader->val_range(r.input, {r.min, r.max});
  for (const auto& s : options.input_shapes) loader->input_shape(s.input, s.shape);
  return loader;
}

}  // namespace parity::compare
