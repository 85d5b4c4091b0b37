#include "tools/validate/exact_sum.h"

#include <cmath>
#include <cstdlib>

#include "core/status.h"

namespace parity::tools::validation {
namespace {

constexpr int kLowestExponent = -1074;
// Each addition puts less than 2^32 into a limb, so 2^30 of them cannot overflow an int64 limb.
constexpr int64_t kAdditionsBeforeCarry = int64_t{1} << 30;

}  // namespace

void ExactSum::add(double value) {
  if (!std::isfinite(value) || value == 0.0) return;
  int exponent = 0;
  const double fraction = std::frexp(value, &exponent);  // value = fraction * 2^exponent, 0.5 <= |fraction| < 1
  int64_t mantissa = static_cast<int64_t>(std::ldexp(fraction, 53));
  int position = exponent - 53 - kLowestExponent;
  if (position < 0) {  // subnormal: the low bits shifted out are zero
    mantissa >>= -position;
    position = 0;
  }
  const bool negative = mantissa < 0;
  const unsigned __int128 shifted = static_cast<unsigned __int128>(std::llabs(mantissa)) << (position % 32);
  const int at = position / 32;
  for (int k = 0; k < 3; ++k) {
    const int64_t part = static_cast<int64_t>((shifted >> (32 * k)) & 0xffffffffu);
    limbs_[at + k] += negative ? -part : part;
  }
  if (++pending_ >= kAdditionsBeforeCarry) normalize();
}

void ExactSum::normalize() {
  for (int i = 0; i + 1 < kLimbs; ++i) {
    const int64_t carry = limbs_[i] >> 32;  // floor division: the limb ends in [0, 2^32)
    limbs_[i] -= carry * (int64_t{1} << 32);
    limbs_[i + 1] += carry;
  }
  pending_ = 0;
}

void ExactSum::merge(const ExactSum& other) {
  ExactSum canonical = other;
  canonical.normalize();
  normalize();
  for (int i = 0; i < kLimbs; ++i) limbs_[i] += canonical.limbs_[i];
  normalize();
}

double ExactSum::value() const {
  ExactSum canonical = *this;
  canonical.normalize();
  // A negative sum's canonical form borrows from the top limb (far beyond any double): convert
  // its magnitude instead.
  const bool negative = canonical.limbs_[kLimbs - 1] < 0;
  if (negative) {
    for (auto& limb : canonical.limbs_) limb = -limb;
    canonical.normalize();
  }
  double sum = 0;
  for (int i = kLimbs - 1; i >= 0; --i)
    if (canonical.limbs_[i] != 0) sum += std::ldexp(static_cast<double>(canonical.limbs_[i]), 32 * i + kLowestExponent);
  return negative ? -sum : sum;
}

nlohmann::json ExactSum::to_json() const {
  ExactSum canonical = *this;
  canonical.normalize();
  nlohmann::json limbs = nlohmann::json::array();
  for (int i = 0; i < kLimbs; ++i)
    if (canonical.limbs_[i] != 0) limbs.push_back({i, canonical.limbs_[i]});
  return limbs;
}

ExactSum ExactSum::from_json(const nlohmann::json& j) {
  PARITY_CHECK(j.is_array(), kInvalidModel, "an exact sum must be an array of [index, limb] pairs");
  ExactSum sum;
  for (const auto& limb : j) {
    PARITY_CHECK(limb.is_array() && limb.size() == 2 && limb[0].is_number_integer() && limb[1].is_number_integer(),
                 kInvalidModel, "an exact sum's limb must be [index, value]");
    const int64_t index = limb[0].get<int64_t>();
    PARITY_CHECK(index >= 0 && index < kLimbs, kInvalidModel, "an exact sum's limb index ", index, " is out of range");
    // Canonical limbs: 32 bits each below the top one, which carries the sign.
    const int64_t value = limb[1].get<int64_t>();
    const bool top = index == kLimbs - 1;
    PARITY_CHECK(top ? value > -(int64_t{1} << 40) && value < (int64_t{1} << 40) : value >= 0 && value < (int64_t{1} << 32),
                 kInvalidModel, "an exact sum's limb ", index, " holds ", value, ", out of range");
    sum.limbs_[static_cast<size_t>(index)] += value;
  }
  sum.normalize();
  return sum;
}

bool ExactSum::operator==(const ExactSum& other) const {
  ExactSum a = *this, b = other;
  a.normalize();
  b.normalize();
  return a.limbs_ == b.limbs_;
}

}  // namespace parity::tools::validation
