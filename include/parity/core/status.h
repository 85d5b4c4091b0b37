/// \file
/// Errors: parity::Error, Status and Result<T>, fail() and the PARITY_CHECK and PARITY_ASSERT macros.
// Error model: one user-facing error type (parity::Error) plus Result<T>/Status for API boundaries.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace parity {

/// What kind of failure happened; decides how the CLI reports it.
enum class ErrorCode {
  kInvalidArgument,  ///< bad option, bad shape, bad value supplied by the user
  kNotFound,         ///< missing file, tensor name, input
  kInvalidModel,     ///< malformed or inconsistent model or data file
  kUnsupported,      ///< operator/dtype/feature not implemented
  kUnavailable,      ///< an optional runtime is not present
  kIo,               ///< read/write failure
  kRuntime,          ///< a failure while executing a model (e.g. shape mismatch inside the graph)
  kInternal,         ///< a bug in parity
};

/// Lower-case description of the code for messages ("invalid argument", "I/O error", ...).
const char* error_code_name(ErrorCode code);

/// Where an error arose, as far as the code that raised it knew. Every field is optional; the
/// message names the same things for people, these fields name them for programs.
struct ErrorContext {
  /// The node: its name in the model, or, for a node without one, the label messages use
  /// ("Conv node (output 'y')"). For a node inside a subgraph, the node of the graph that was
  /// planned or run (the If or Loop holding it).
  std::optional<std::string> node;
  /// The tensor (value) the error concerns: an input, output, initializer or stored array.
  std::optional<std::string> tensor;
  /// The file being read or written.
  std::optional<std::string> file;
};

/// The single error type parity reports to users. Thrown inside implementations, carried by
/// Result/Status across API boundaries.
class Error : public std::runtime_error {
 public:
  /// An error of `code` with the user-facing `message` and where it arose.
  Error(ErrorCode code, std::string message, ErrorContext context = {})
      : std::runtime_error(message), code_(code), context_(std::move(context)) {}
  ErrorCode code() const { return code_; }  ///< What kind of failure this is.
  bool is_internal() const { return code_ == ErrorCode::kInternal; }  ///< True for kInternal (a parity bug).

  const ErrorContext& context() const { return context_; }  ///< Where the error arose (every field optional).
  const std::optional<std::string>& node() const { return context_.node; }  ///< The node it concerns, if known.
  const std::optional<std::string>& tensor() const { return context_.tensor; }  ///< The tensor it concerns, if known.
  const std::optional<std::string>& file() const { return context_.file; }  ///< The file it concerns, if known.

  /// A copy naming `node` (replacing any node already named); the message is kept.
  Error with_node(std::string node) const;
  /// A copy whose message is "prefix: message"; code and context are kept.
  Error prefixed(const std::string& prefix) const;
  /// A copy whose unset fields are taken from `context`; set ones and the message are kept.
  Error with_missing(const ErrorContext& context) const;

 private:
  ErrorCode code_;
  ErrorContext context_;
};

/// Outcome of an operation that returns nothing.
class Status {
 public:
  Status() = default;  ///< Success.
  /// Failure carrying `error`.
  Status(Error error) : error_(std::move(error)) {}  // NOLINT(implicit)
  static Status ok() { return Status(); }  ///< Success.
  bool is_ok() const { return !error_.has_value(); }  ///< True on success.
  explicit operator bool() const { return is_ok(); }  ///< Same as is_ok().
  const Error& error() const { return *error_; }  ///< The carried error; only valid when !is_ok().
  std::string message() const { return error_ ? error_->what() : std::string("OK"); }  ///< The error's message, or "OK".
  /// Throws the carried error, if any.
  void throw_if_error() const {
    if (error_) throw *error_;
  }

 private:
  std::optional<Error> error_;
};

/// A value or an Error (std::expected-like, C++20).
template <typename T>
class Result {
 public:
  /// Success holding `value`.
  Result(T value) : data_(std::move(value)) {}  // NOLINT(implicit)
  /// Failure carrying `error`.
  Result(Error error) : data_(std::move(error)) {}  // NOLINT(implicit)
  bool is_ok() const { return std::holds_alternative<T>(data_); }  ///< True when a value is held.
  explicit operator bool() const { return is_ok(); }  ///< Same as is_ok().
  const Error& error() const { return std::get<Error>(data_); }  ///< The carried error; only valid when !is_ok().
  /// The value; throws the carried Error when there is none.
  T& value() & {
    if (!is_ok()) throw error();
    return std::get<T>(data_);
  }
  /// As value(), const.
  const T& value() const& {
    if (!is_ok()) throw error();
    return std::get<T>(data_);
  }
  /// As value(), moving it out.
  T&& value() && {
    if (!is_ok()) throw error();
    return std::get<T>(std::move(data_));
  }
  T* operator->() { return &value(); }  ///< Pointer to the value; throws the carried Error when there is none.
  T& operator*() & { return value(); }  ///< The value; throws the carried Error when there is none.
  Status status() const { return is_ok() ? Status() : Status(error()); }  ///< Success, or the carried error without the value.

 private:
  std::variant<T, Error> data_;
};

/// Runs fn, converting a thrown parity::Error (or other exception, as an internal error) to Status.
template <typename Fn>
Status capture_status(Fn&& fn) {
  try {
    fn();
    return Status();
  } catch (const Error& e) {
    return Status(e);
  } catch (const std::bad_alloc&) {
    return Status(Error(ErrorCode::kRuntime, "out of memory"));
  } catch (const std::exception& e) {
    return Status(Error(ErrorCode::kInternal, e.what()));
  }
}

/// Runs fn returning T, converting exceptions to Result<T>.
template <typename T, typename Fn>
Result<T> capture_result(Fn&& fn) {
  try {
    return Result<T>(fn());
  } catch (const Error& e) {
    return Result<T>(e);
  } catch (const std::bad_alloc&) {
    return Result<T>(Error(ErrorCode::kRuntime, "out of memory"));
  } catch (const std::exception& e) {
    return Result<T>(Error(ErrorCode::kInternal, e.what()));
  }
}

namespace detail {
/// The end of str_cat()'s recursion: nothing left to append.
inline void append_all(std::ostringstream&) {}
/// Appends each argument to `os` with operator<< (str_cat()'s body).
template <typename A, typename... Rest>
void append_all(std::ostringstream& os, const A& a, const Rest&... rest) {
  os << a;
  append_all(os, rest...);
}
/// Throws kInternal for a failed PARITY_ASSERT, naming the condition, its file and line.
[[noreturn]] void assertion_failed(const char* expr, const char* file, int line,
                                   const std::string& message);
}  // namespace detail

/// Concatenates the arguments with operator<< into a string.
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  detail::append_all(os, args...);
  return os.str();
}

/// Throws a parity::Error of the given code with a message built from the arguments.
template <typename... Args>
[[noreturn]] void fail(ErrorCode code, const Args&... args) {
  throw Error(code, str_cat(args...));
}

/// As fail(), with the node, tensor or file the error concerns.
template <typename... Args>
[[noreturn]] void fail_at(ErrorContext context, ErrorCode code, const Args&... args) {
  throw Error(code, str_cat(args...), std::move(context));
}

/// Runs fn; a parity::Error it throws gets the fields of `context` it does not already have (a
/// file loader naming its file for every error raised while reading it).
template <typename Fn>
decltype(auto) with_error_context(const ErrorContext& context, Fn&& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    throw e.with_missing(context);
  }
}

}  // namespace parity

/// Invariant check: a failure is a parity bug and is reported as such (kInternal).
#define PARITY_ASSERT(cond, ...)                                                        \
  do {                                                                                  \
    if (!(cond))                                                                        \
      ::parity::detail::assertion_failed(#cond, __FILE__, __LINE__,                     \
                                         ::parity::str_cat("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)

/// Check on user-supplied data: throws parity::Error(code, message...) when cond is false.
#define PARITY_CHECK(cond, code, ...)                                \
  do {                                                               \
    if (!(cond)) ::parity::fail(::parity::ErrorCode::code, __VA_ARGS__); \
  } while (0)

/// PARITY_CHECK naming where (a parity::ErrorContext, or a braced list of one field: the
/// preprocessor splits a list at its commas) in the error's fields.
#define PARITY_CHECK_AT(cond, where, code, ...)                                  \
  do {                                                                           \
    if (!(cond)) ::parity::fail_at(where, ::parity::ErrorCode::code, __VA_ARGS__); \
  } while (0)
