/// \file
/// Errors: what every parity call throws or returns when it cannot do what was asked.
///
/// - parity::Error: the exception, with a code (ErrorCode) and optional context fields naming the
///   node, tensor and file it is about (Error::node(), Error::tensor(), Error::file()), so callers
///   decide by fields, never by searching the message.
/// - parity::Status and parity::Result<T>: the same information as values, at API boundaries that
///   do not throw (model::load_model, runtime::Session::create).
#pragma once

#include "core/status.h"
