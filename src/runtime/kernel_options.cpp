#include "runtime/kernel_options.h"

#include <utility>

#include "core/metadata.h"
#include "core/text.h"

namespace parity::runtime {
namespace {

/// One switch: its name, its settings as text (the default first) and how each reads and writes
/// the option's field.
struct Switch {
  const char* name;
  std::vector<std::string> values;
  int (*get)(const KernelOptions&);
  void (*set)(KernelOptions&, int);
};

#define PARITY_ON_OFF_SWITCH(field)                                                         \
  Switch {                                                                                 \
    #field, {"on", "off"}, [](const KernelOptions& o) { return o.field ? 0 : 1; },        \
        [](KernelOptions& o, int v) { o.field = v == 0; }                                  \
  }

const std::vector<Switch>& switches() {
  static const std::vector<Switch> all = {
      PARITY_ON_OFF_SWITCH(se_scale_direct),
      Switch{"maxpool_direct",
             {"on", "off"},
             [](const KernelOptions& o) { return o.max_pool_direct ? 0 : 1; },
             [](KernelOptions& o, int v) { o.max_pool_direct = v == 0; }},
      PARITY_ON_OFF_SWITCH(global_pool_wide),
      Switch{"dnnl_layout",
             {"any", "plain", "pointwise"},
             [](const KernelOptions& o) { return static_cast<int>(o.conv_layout); },
             [](KernelOptions& o, int v) { o.conv_layout = static_cast<ConvActivationLayout>(v); }},
      Switch{"conv_swish",
             {"separate", "post-op"},
             [](const KernelOptions& o) { return o.conv_separate_swish ? 0 : 1; },
             [](KernelOptions& o, int v) { o.conv_separate_swish = v == 0; }},
      PARITY_ON_OFF_SWITCH(conv_stem_direct),
      PARITY_ON_OFF_SWITCH(conv_pointwise_direct),
      PARITY_ON_OFF_SWITCH(conv_depthwise_direct),
      PARITY_ON_OFF_SWITCH(conv_point_product),
      Switch{"conv_expand_depthwise",
             {"on", "off"},
             [](const KernelOptions& o) { return o.conv_expand_depthwise_ring ? 0 : 1; },
             [](KernelOptions& o, int v) { o.conv_expand_depthwise_ring = v == 0; }},
      Switch{"conv_channel_split",
             {"cost", "off", "always"},
             [](const KernelOptions& o) { return static_cast<int>(o.conv_channel_split); },
             [](KernelOptions& o, int v) { o.conv_channel_split = static_cast<ChannelSplitPolicy>(v); }},
      PARITY_ON_OFF_SWITCH(concat_placement),
      PARITY_ON_OFF_SWITCH(batch_norm_to_channels_last),
  };
  return all;
}

#undef PARITY_ON_OFF_SWITCH

}  // namespace

std::map<std::string, std::string> kernel_switches(const KernelOptions& options) {
  std::map<std::string, std::string> out;
  for (const Switch& s : switches()) out[s.name] = s.values[static_cast<size_t>(s.get(options))];
  return out;
}

const std::vector<std::string>& kernel_switch_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const Switch& s : switches()) all.push_back(s.name);
    return all;
  }();
  return names;
}

Status set_kernel_switch(KernelOptions& options, const std::string& name, const std::string& value) {
  for (const Switch& s : switches()) {
    if (name != s.name) continue;
    for (size_t i = 0; i < s.values.size(); ++i)
      if (value == s.values[i]) {
        s.set(options, static_cast<int>(i));
        return Status::ok();
      }
    return Error(ErrorCode::kInvalidArgument,
                 str_cat("kernel switch ", name, " cannot be '", value, "' (one of: ", join_names(s.values), ")"));
  }
  return Error(ErrorCode::kInvalidArgument,
               str_cat("unknown kernel switch '", name, "' (known: ", join_names(kernel_switch_names()), ")"));
}

KernelIsa effective_kernel_isa(const KernelOptions& options) { return min_isa(cpu_kernel_isa(), options.isa_cap); }

}  // namespace parity::runtime
