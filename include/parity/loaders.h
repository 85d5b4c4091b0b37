/// \file
/// Polygraphy-style lazy loaders (parity::compare::loaders): callables that produce a model, a
/// plan or a runner when called, and compose (OnnxFromPath, ModifyOutputs, SaveOnnx, PlanFromOnnx,
/// SavePlan, RunnerFromOnnx, RunnerFromPlan, extend), and their immediate forms (onnx_from_path,
/// save_onnx, modify_outputs).
#pragma once

#include "compare/loaders.h"
#include "compare/plan_loaders.h"
