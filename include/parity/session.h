/// \file
/// parity's own engine: sessions and plans.
///
/// - parity::runtime::Session: plans an ONNX model once (Session::create) and runs it many times,
///   from any number of threads (Session::run).
/// - Plans (parity's saved engine, TensorRT's engine files): runtime::save_plan / load_plan /
///   load_plan_bytes / summarize_plan; the build options (fp16, bf16, int8, profiles) are
///   runtime::SessionOptions, or compare::loaders::BuildConfig through the loaders (parity/loaders.h).
#pragma once

#include "runtime/plan/plan_file.h"
#include "runtime/session.h"
