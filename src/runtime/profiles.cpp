#include "runtime/profiles.h"

#include <map>

#include "core/status.h"
#include "core/text.h"

namespace parity::runtime {

namespace {

std::string bracketed(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

/// "[a],[b],[c]" -> {"[a]", "[b]", "[c]"}: the commas between brackets separate shapes.
std::vector<std::string> bracket_groups(const std::string& text, const std::string& what) {
  std::vector<std::string> groups;
  size_t i = 0;
  while (i < text.size()) {
    PARITY_CHECK(text[i] == '[', kInvalidArgument, what, ": expected '[' at '", text.substr(i), "'");
    const size_t close = text.find(']', i);
    PARITY_CHECK(close != std::string::npos, kInvalidArgument, what, ": unclosed '[' in '", text, "'");
    groups.push_back(text.substr(i, close - i + 1));
    i = close + 1;
    if (i < text.size()) {
      PARITY_CHECK(text[i] == ',', kInvalidArgument, what, ": expected ',' between shapes in '", text, "'");
      ++i;
    }
  }
  return groups;
}

/// Places (input, range) into the first profile that does not name the input yet.
void place(std::vector<OptimizationProfile>& profiles, const std::string& input, ShapeRange range) {
  for (auto& profile : profiles)
    if (!profile.find(input)) {
      profile.inputs.emplace_back(input, std::move(range));
      return;
    }
  profiles.emplace_back();
  profiles.back().inputs.emplace_back(input, std::move(range));
}

/// name:[d,...] items by input name, in order.
std::map<std::string, std::vector<Shape>> shapes_by_input(const std::vector<std::string>& items, const std::string& what,
                                                          std::vector<std::string>& order) {
  std::map<std::string, std::vector<Shape>> shapes;
  for (const auto& item : items) {
    auto [name, value] = split_name_value(item);
    PARITY_CHECK(!name.empty() && !value.empty(), kInvalidArgument, what, " '", item, "' must be name:[d0,d1,...]");
    if (!shapes.count(name)) order.push_back(name);
    shapes[name].push_back(parse_shape(value, what + " '" + item + "'"));
  }
  return shapes;
}

}  // namespace

bool ShapeRange::contains(const Shape& shape) const {
  if (shape.size() != min.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < min[d] || shape[d] > max[d]) return false;
  return true;
}

std::string ShapeRange::to_string() const {
  if (min == max) return bracketed(min);
  return bracketed(min) + ".." + bracketed(max) + " (opt " + bracketed(opt) + ")";
}

const ShapeRange* OptimizationProfile::find(const std::string& input) const {
  for (const auto& [name, range] : inputs)
    if (name == input) return &range;
  return nullptr;
}

std::string OptimizationProfile::to_string() const {
  std::string text = name + ":";
  for (const auto& [input, range] : inputs) text += " " + input + " " + range.to_string();
  return text;
}

std::vector<OptimizationProfile> parse_profiles(const std::vector<std::string>& items, const std::string& what) {
  std::vector<OptimizationProfile> profiles;
  for (const auto& item : items) {
    auto [name, value] = split_name_value(item);
    const std::string where = what + " '" + item + "'";
    PARITY_CHECK(!name.empty() && !value.empty(), kInvalidArgument, where,
                 " must be INPUT:[MIN],[OPT],[MAX] (or INPUT:[SHAPE])");
    const std::vector<std::string> groups = bracket_groups(value, where);
    PARITY_CHECK(groups.size() == 1 || groups.size() == 3, kInvalidArgument, where, " has ", groups.size(),
                 " shapes; give min, opt and max (or one fixed shape)");
    ShapeRange range;
    range.min = parse_shape(groups[0], where);
    range.opt = parse_shape(groups.size() == 3 ? groups[1] : groups[0], where);
    range.max = parse_shape(groups.size() == 3 ? groups[2] : groups[0], where);
    place(profiles, name, std::move(range));
  }
  return profiles;
}

std::vector<OptimizationProfile> profiles_from_min_opt_max(const std::vector<std::string>& min_items,
                                                           const std::vector<std::string>& opt_items,
                                                           const std::vector<std::string>& max_items) {
  std::vector<std::string> order, ignored;
  auto mins = shapes_by_input(min_items, "--trt-min-shapes", order);
  auto opts = shapes_by_input(opt_items, "--trt-opt-shapes", ignored);
  auto maxs = shapes_by_input(max_items, "--trt-max-shapes", ignored);
  PARITY_CHECK(mins.size() == opts.size() && mins.size() == maxs.size(), kInvalidArgument,
               "--trt-min-shapes, --trt-opt-shapes and --trt-max-shapes must name the same inputs");
  std::vector<OptimizationProfile> profiles;
  for (const auto& input : order) {
    const auto& lo = mins[input];
    PARITY_CHECK(opts.count(input) && maxs.count(input) && opts[input].size() == lo.size() &&
                     maxs[input].size() == lo.size(),
                 kInvalidArgument, "input '", input,
                 "' needs as many --trt-opt-shapes and --trt-max-shapes as --trt-min-shapes (one each per profile)");
    for (size_t k = 0; k < lo.size(); ++k) place(profiles, input, ShapeRange{lo[k], opts[input][k], maxs[input][k]});
  }
  return profiles;
}

void validate_profiles(std::vector<OptimizationProfile>& profiles, const TensorMetadata& inputs) {
  for (size_t p = 0; p < profiles.size(); ++p) {
    OptimizationProfile& profile = profiles[p];
    if (profile.name.empty()) profile.name = "profile " + std::to_string(p);
    for (const auto& [input, range] : profile.inputs) {
      const TensorMeta* meta = inputs.find(input);
      PARITY_CHECK(meta != nullptr, kInvalidArgument, profile.name, ": the model has no input '", input,
                   "'; its inputs are: ", join_names(inputs.names()));
      PARITY_CHECK(meta->dtype != DType::kUndefined, kInvalidArgument, profile.name, ": input '", input,
                   "' is not a tensor of a known type; a profile gives tensor shapes");
      PARITY_CHECK(range.min.size() == range.opt.size() && range.min.size() == range.max.size(), kInvalidArgument,
                   profile.name, ": input '", input, "': min, opt and max have different ranks");
      PARITY_CHECK(meta->shape.unknown_rank || meta->shape.dims.size() == range.min.size(), kInvalidArgument,
                   profile.name, ": input '", input, "' has rank ", meta->shape.dims.size(), ", the profile gives ",
                   shape_to_string(range.min));
      for (size_t d = 0; d < range.min.size(); ++d) {
        PARITY_CHECK(range.min[d] <= range.opt[d] && range.opt[d] <= range.max[d], kInvalidArgument, profile.name,
                     ": input '", input, "' dimension ", d, ": min ", range.min[d], ", opt ", range.opt[d], ", max ",
                     range.max[d], " are not in order min <= opt <= max");
        if (meta->shape.unknown_rank) continue;
        const Dim& dim = meta->shape.dims[d];
        PARITY_CHECK(!dim.is_static() || (range.min[d] == dim.value && range.max[d] == dim.value), kInvalidArgument,
                     profile.name, ": input '", input, "' dimension ", d, " is fixed to ", dim.value,
                     " by the model, the profile gives ", range.min[d], "..", range.max[d]);
      }
    }
  }
}

int select_profile(const std::vector<OptimizationProfile>& profiles,
                   const std::vector<std::pair<std::string, Shape>>& input_shapes, int requested) {
  auto misfit = [&](const OptimizationProfile& profile) -> const std::pair<std::string, Shape>* {
    for (const auto& entry : input_shapes) {
      const ShapeRange* range = profile.find(entry.first);
      if (range && !range->contains(entry.second)) return &entry;
    }
    return nullptr;
  };
  auto all_profiles = [&] {
    std::string text;
    for (const auto& p : profiles) text += (text.empty() ? "" : "; ") + p.to_string();
    return text;
  };
  if (requested >= 0) {
    PARITY_CHECK(static_cast<size_t>(requested) < profiles.size(), kInvalidArgument, "profile index ", requested,
                 " does not exist: the plan has ", profiles.size(), " profile(s): ", all_profiles());
    const auto* bad = misfit(profiles[requested]);
    PARITY_CHECK(bad == nullptr, kInvalidArgument, "input '", bad ? bad->first : "", "' has shape ",
                 bad ? bracketed(bad->second) : "", ", outside the selected ", profiles[requested].to_string());
    return requested;
  }
  for (size_t p = 0; p < profiles.size(); ++p)
    if (!misfit(profiles[p])) return static_cast<int>(p);
  const auto* bad = misfit(profiles.front());
  fail(ErrorCode::kInvalidArgument, "input '", bad->first, "' has shape ", bracketed(bad->second),
       ", outside every profile of the plan (", all_profiles(), "); rebuild it with a --profile that covers it");
}

}  // namespace parity::runtime
