/// \file
/// ONNX models: load, save and edit.
///
/// - parity::model::load_model / save_model / load_model_from_bytes: model files with their
///   external data (model::Model holds the ModelProto and the folder its data is relative to).
/// - parity::model::Graph: the editable graph IR (Values, Nodes, initializers; toposort, cleanup,
///   lookups with "did you mean"); Graph::from_model and Graph::to_model convert.
/// The ONNX protobuf classes are only forward-declared here: code that touches a ModelProto field
/// by field includes libonnx's headers itself.
#pragma once

#include "model/graph.h"
#include "model/model.h"
