// IdentityOnlyRunner: runs models made only of Identity nodes (what ReplaceReshapes leaves of a
// model whose Reshapes were all no-ops), with an artificial delay in the slow and medium modes.
#pragma once

#include <memory>
#include <string>

#include <parity/runners.h>

#include "backend/loader.h"

namespace reshape_destroyer {

/// How fast to run inference: slow sleeps 1 s per inference, medium 0.5 s, fast not at all.
enum class Speed { kSlow, kMedium, kFast };

/// Parses "slow", "medium" or "fast"; throws a kInvalidArgument parity::Error otherwise.
Speed speed_from_name(const std::string& name);

class IdentityOnlyRunner final : public parity::runners::Runner {
 public:
  IdentityOnlyRunner(GraphLoader graph, Speed speed = Speed::kFast);

 protected:
  void activate_impl() override;
  void deactivate_impl() override { graph_.reset(); }
  parity::TensorMetadata input_metadata_impl() override;
  parity::TensorMap infer_impl(const parity::TensorMap& feed) override;

 private:
  GraphLoader loader_;
  Speed speed_;
  std::shared_ptr<parity::model::Graph> graph_;
};

}  // namespace reshape_destroyer
