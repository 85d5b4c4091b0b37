/// \file
/// Runners: one runtime running one model (parity::runners::Runner: activate, infer, deactivate;
/// runners::ActiveRunner keeps one active for a scope), and the registry of the runtimes this
/// parity has (runners::RunnerRegistry: find a runner by name, check it is available, create it;
/// runners::RunnerRegistrar registers one).
#pragma once

#include "runners/registry.h"
#include "runners/runner.h"
