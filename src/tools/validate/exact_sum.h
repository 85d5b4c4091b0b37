// A sum of doubles that is exact, so partial sums merge into the same figure whatever the order:
// a fixed-point accumulator spanning every finite double (a "long accumulator"). Shards of a
// dataset summed on different ranks and merged give bit for bit the sum of one process.
#pragma once

#include <array>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace parity::tools::validation {

class ExactSum {
 public:
  /// Adds a finite value exactly (callers count non-finite values themselves; they are ignored).
  void add(double value);
  void merge(const ExactSum& other);
  /// The sum rounded to a double; a function of the exact sum only, not of the order of additions.
  double value() const;

  /// Canonical form: [[limb index, limb], ...] for the non-zero limbs.
  nlohmann::json to_json() const;
  /// Throws kInvalidModel on a malformed value.
  static ExactSum from_json(const nlohmann::json& j);
  bool operator==(const ExactSum& other) const;

 private:
  // 32 bits per limb from 2^-1074 (the smallest subnormal) up, with headroom for carries.
  static constexpr int kLimbs = 70;
  void normalize();
  std::array<int64_t, kLimbs> limbs_{};
  int64_t pending_ = 0;  // additions since the last carry propagation
};

}  // namespace parity::tools::validation
