/// \file
/// parity's logger (parity::Logger: severity, verbosity, the `[I]`/`[W]`/`[E]` lines parity prints).
#pragma once

#include "core/logger.h"
