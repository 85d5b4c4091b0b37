/// \file
/// Navigator packages (parity::tools::navigator): a `.nav` package or workspace, as Model
/// Navigator's PackageDescriptor: each format's status and performance, a model or runner per
/// format, the best format x runtime by a strategy, save, load, re-test and profile.
#pragma once

#include "tools/navigator/package.h"
