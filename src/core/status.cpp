#include "core/status.h"

namespace parity {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kInvalidModel: return "invalid model";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kIo: return "I/O error";
    case ErrorCode::kRuntime: return "runtime error";
    case ErrorCode::kInternal: return "internal error";
  }
  return "unknown error";
}

Error Error::with_node(std::string node) const {
  ErrorContext context = context_;
  context.node = std::move(node);
  return Error(code_, what(), std::move(context));
}

Error Error::prefixed(const std::string& prefix) const { return Error(code_, prefix + ": " + what(), context_); }

Error Error::with_missing(const ErrorContext& context) const {
  ErrorContext merged = context_;
  if (!merged.node) merged.node = context.node;
  if (!merged.tensor) merged.tensor = context.tensor;
  if (!merged.file) merged.file = context.file;
  return Error(code_, what(), std::move(merged));
}

namespace detail {
void assertion_failed(const char* expr, const char* file, int line, const std::string& message) {
  throw Error(ErrorCode::kInternal,
              str_cat("assertion `", expr, "` failed at ", file, ":", line,
                      message.empty() ? "" : ": ", message));
}
}  // namespace detail

}  // namespace parity
