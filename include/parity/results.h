/// \file
/// Results files: parity::RunResults (each runner's outputs, iteration by iteration) read and
/// written as Polygraphy's RunResults JSON (read_run_results, write_run_results), the inputs files
/// (read_inputs_json, write_inputs_json), and a streamed form for results too big to hold
/// (core/formats/run_results_stream.h).
#pragma once

#include "core/formats/polygraphy_json.h"
#include "core/formats/run_results_stream.h"
#include "core/run_results.h"
