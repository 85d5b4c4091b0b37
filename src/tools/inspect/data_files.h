// `parity inspect data`: what Polygraphy/parity data files hold (RunResults, inputs JSON, .npy,
// .npz), with Polygraphy's per-tensor statistics, histograms and values, as text or JSON.
#pragma once

#include <string>
#include <vector>

#include "core/formats/array_print.h"

namespace parity::tools {

/// What inspect_data_files shows of each tensor.
struct InspectDataOptions {
  bool all = false;          // every iteration, not only the first
  bool show_values = false;  // the tensors' values
  bool histogram = false;    // a histogram of each tensor's values
  ArrayPrintOptions print;   // how values are printed
  bool json = false;         // one JSON document on stdout instead of logged text
};

/// Loads every file first (a bad file fails before anything is shown), then shows each: logged
/// text in Polygraphy's layout, or one JSON document printed to stdout.
void inspect_data_files(const std::vector<std::string>& paths, const InspectDataOptions& options);

}  // namespace parity::tools
