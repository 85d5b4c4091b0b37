/// \file
/// Extension modules: a shared library that adds runners (with their own loaders and option
/// groups) and reference kernels for custom-domain operators to parity, exported with
/// PARITY_EXTENSION. Includes the runner and registry API (parity/runners.h) and the argument
/// parser a runner's option group is declared with.
#pragma once

#include "core/logger.h"
#include "options/args.h"
#include "runners/extension.h"
#include "runners/registry.h"
#include "runners/runner.h"
