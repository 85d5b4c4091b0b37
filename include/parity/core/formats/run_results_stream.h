// Polygraphy RunResults files too large to hold: `run --onnx-outputs mark all` golden runs. The
// reader indexes where each tensor's array lies in the file (one streaming pass, one tensor's text
// in memory at a time) and decodes a tensor only when asked; the writer appends tensors as they are
// produced and writes what polygraphy_json.h's write_run_results writes for the same data.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"

namespace parity {

/// Byte offsets of the tensors of a RunResults file, without their values.
class RunResultsIndex {
 public:
  /// One iteration of a run: its tensors' names and where their values lie in the file.
  struct Iteration {
    std::vector<std::string> names;  ///< in file order
    /// name -> [begin, end) of the JSON text holding the array's base64 string (quotes included).
    std::unordered_map<std::string, std::pair<int64_t, int64_t>> spans;
  };
  /// One runner's iterations.
  struct Run {
    std::string runner;  ///< Runner name as the file records it.
    std::vector<Iteration> iterations;  ///< Its iterations in file order.
  };

  /// Scans `path`. Throws kNotFound/kIo for an unreadable path and kInvalidModel for malformed JSON
  /// or a file that is not a RunResults file, naming the path.
  explicit RunResultsIndex(std::string path);

  const std::string& path() const { return path_; }  ///< The file this index was read from.
  const std::vector<Run>& runs() const { return runs_; }  ///< Runs in file order.
  /// Size of the file in bytes.
  int64_t file_bytes() const { return file_bytes_; }
  /// Decodes one tensor of `run`'s iteration `iteration` (kNotFound when it holds no such tensor).
  Tensor read(size_t run, size_t iteration, const std::string& name) const;

 private:
  std::string path_;
  std::vector<Run> runs_;
  int64_t file_bytes_ = 0;
};

/// Writes a RunResults file tensor by tensor. Runners may be produced interleaved (a reference and a
/// peer taking turns): each runner's part goes to its own temporary file beside `path`, and
/// finish() joins them. Nothing is left behind when the writer dies unfinished.
class RunResultsStreamWriter {
 public:
  /// Checks that `path` can be written (kIo/kNotFound naming it otherwise).
  explicit RunResultsStreamWriter(std::string path);
  ~RunResultsStreamWriter();  ///< Removes the temporary part files; `path` itself is written only by finish().
  RunResultsStreamWriter(const RunResultsStreamWriter&) = delete;
  RunResultsStreamWriter& operator=(const RunResultsStreamWriter&) = delete;

  /// Adds a runner (in the order the file lists them); returns its handle.
  size_t add_runner(const std::string& runner_name);
  /// Starts the next iteration of `runner`, ending the one before.
  void begin_iteration(size_t runner);
  /// Appends a tensor to `runner`'s current iteration.
  void add(size_t runner, const std::string& name, const Tensor& tensor);
  /// Ends every open iteration and writes the file.
  void finish();

 private:
  struct Part;
  void end_iteration(Part& part);
  std::string path_;
  std::vector<std::unique_ptr<Part>> parts_;
  bool finished_ = false;
};

}  // namespace parity
