// Data loaders: where the Comparator gets inference inputs (Polygraphy's data loader protocol).
// DataLoader generates seeded random inputs identical to Polygraphy's; FeedList/FeedGenerator
// wrap user data ("any iterable of feeds").
//
// Threads (docs/concurrency.md): once configured (the setters and set_input_metadata), a
// DataLoader's feed() and generate() and a FeedList's feed() may be called from any number of
// threads at once, and feed i is the same whichever thread asks and in whatever order (it depends
// only on the seed and i). Configuring is not concurrent with anything, except that telling a
// loader the inputs it knows already writes nothing (so concurrent Comparator::run calls may share
// one loader once it knows the model's inputs). A FeedGenerator is as safe as the function it calls.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/tensor_map.h"

namespace parity::compare {

/// Source of feeds for Comparator::run. Feeds are requested by index, 0, 1, 2, ... until the
/// source returns nullopt.
class FeedSource {
 public:
  virtual ~FeedSource() = default;
  /// Told the inputs of the first runner before any feed is requested; sources that generate
  /// data use it, user-supplied lists ignore it.
  virtual void set_input_metadata(const TensorMetadata& metadata) { (void)metadata; }
  /// The feed of iteration `index`, or nullopt when there are no more.
  virtual std::optional<TensorMap> feed(size_t index) = 0;
};

/// Inclusive value range [min, max] of generated inputs.
struct ValueRange {
  double min = 0.0;  ///< Smallest generated value.
  double max = 1.0;  ///< Largest generated value.
};

/// Generates random inputs bit-identical to Polygraphy's DataLoader (numpy backend): iteration i
/// draws from numpy.random.RandomState(seed + i), inputs in metadata order; floats are
/// random_sample * (max - min) + min cast to the dtype, integers and bools come from randint.
class DataLoader : public FeedSource {
 public:
  DataLoader() = default;

  /// Seed of iteration 0 (default 1, Polygraphy's default).
  DataLoader& seed(int64_t seed);
  /// Number of feeds to generate (default 1).
  DataLoader& iterations(int64_t count);
  /// Value range for one input, or the default for all inputs when name is "".
  DataLoader& val_range(const std::string& name, ValueRange range);
  /// Concrete shape for an input with dynamic dimensions (must agree with its static ones).
  /// For a 1-D integer input whose length equals the shape's rank, the shape becomes the
  /// input's value instead (a shape tensor), as in Polygraphy.
  DataLoader& input_shape(const std::string& name, Shape shape);
  /// Overrides the dtype of an input.
  DataLoader& input_dtype(const std::string& name, DType dtype);
  /// Metadata to use when no runner supplies it (e.g. generating inputs without a model).
  DataLoader& input_metadata(TensorMetadata metadata);

  void set_input_metadata(const TensorMetadata& metadata) override;
  std::optional<TensorMap> feed(size_t index) override;

  /// Generates the feed of one iteration. Throws kInvalidArgument when an override names no
  /// input (listing the inputs that exist) or contradicts the model's shape.
  TensorMap generate(size_t index) const;

  int64_t seed_value() const { return seed_; }  ///< Seed of the generated values.
  int64_t iteration_count() const { return iterations_; }  ///< Number of feeds generated.

 private:
  void check_overrides() const;
  ValueRange range_for(const std::string& name) const;

  int64_t seed_ = 1;
  int64_t iterations_ = 1;
  std::map<std::string, ValueRange> ranges_;  // "" = default
  std::map<std::string, Shape> shapes_;
  std::map<std::string, DType> dtypes_;
  std::optional<TensorMetadata> metadata_;
};

/// A fixed list of feeds.
class FeedList : public FeedSource {
 public:
  FeedList() = default;  ///< No feeds.
  explicit FeedList(std::vector<TensorMap> feeds) : feeds_(std::move(feeds)) {}  ///< The given feeds, in order.
  /// Any iterable whose elements convert to TensorMap.
  template <typename Range>
  static FeedList from(const Range& range) {
    std::vector<TensorMap> feeds;
    for (const auto& f : range) feeds.push_back(f);
    return FeedList(std::move(feeds));
  }
  std::optional<TensorMap> feed(size_t index) override {
    if (index >= feeds_.size()) return std::nullopt;
    return feeds_[index];
  }
  const std::vector<TensorMap>& feeds() const { return feeds_; }  ///< The feeds, in order.

 private:
  std::vector<TensorMap> feeds_;
};

/// Feeds produced on demand by a callable (a generator): returns nullopt when done.
class FeedGenerator : public FeedSource {
 public:
  /// Returns the feed of iteration `index` (nullopt when done); `metadata` is the first runner's inputs, or nullptr.
  using Fn = std::function<std::optional<TensorMap>(size_t index, const TensorMetadata* metadata)>;
  explicit FeedGenerator(Fn fn) : fn_(std::move(fn)) {}  ///< Feeds from `fn`.
  void set_input_metadata(const TensorMetadata& metadata) override { metadata_ = metadata; }
  std::optional<TensorMap> feed(size_t index) override {
    return fn_(index, metadata_ ? &*metadata_ : nullptr);
  }

 private:
  Fn fn_;
  std::optional<TensorMetadata> metadata_;
};

/// Concrete shape Polygraphy generates for a possibly dynamic shape: a dynamic dimension takes
/// its min bound, else its max bound, else 1.
Shape default_static_shape(const DimShape& shape);

}  // namespace parity::compare
