#include "core/formats/run_results_stream.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/formats/base64.h"
#include "core/formats/file_io.h"
#include "core/formats/npy.h"
#include "core/status.h"

namespace parity {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

// Closes a FILE* when the scope ends.
struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

FilePtr open_file(const std::string& path, const char* mode) {
  FilePtr f(std::fopen(path.c_str(), mode));
  PARITY_CHECK(f, kIo, "cannot open '", path, "' (", std::strerror(errno), ")");
  return f;
}

// Walks a RunResults file event by event and records, per runner and iteration, where each array's
// base64 text lies. The nesting it expects: {"lst": [[runner, [{"outputs": {name: LazyArray or
// ndarray}, ...}]]], "polygraphy_class": "RunResults"}. Positions come from ftell: nlohmann reads a
// FILE* one fgetc at a time, so the position is exact at every callback.
class IndexBuilder : public nlohmann::json_sax<Json> {
 public:
  IndexBuilder(std::FILE* file, const std::string& path, std::vector<RunResultsIndex::Run>& runs)
      : file_(file), path_(path), runs_(runs) {}

  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t) override { return scalar(); }
  bool number_unsigned(number_unsigned_t) override { return scalar(); }
  bool number_float(number_float_t, const string_t&) override { return scalar(); }
  bool binary(binary_t&) override { return scalar(); }

  bool string(string_t& value) override {
    const size_t depth = stack_.size();
    if (depth == 1 && stack_[0].key == "polygraphy_class") root_class_ = value;
    // The runner name: element 0 of an entry of "lst".
    if (depth == 3 && in_lst() && !stack_[2].object && stack_[2].index == 0) runs_.back().runner = value;
    if (depth >= 7 && stack_.back().object && stack_.back().key == "array" && in_outputs()) {
      RunResultsIndex::Iteration& it = runs_.back().iterations.back();
      const std::string& name = stack_[5].key;
      if (it.spans.emplace(name, std::make_pair(key_end_, static_cast<int64_t>(std::ftell(file_)))).second)
        it.names.push_back(name);
    }
    return scalar();
  }

  bool start_object(std::size_t) override {
    // An iteration object: element of the iterations list of an "lst" entry.
    if (stack_.size() == 4 && in_lst()) runs_.back().iterations.emplace_back();
    stack_.push_back({true});
    return true;
  }
  bool key(string_t& value) override {
    stack_.back().key = value;
    key_end_ = static_cast<int64_t>(std::ftell(file_));
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override {
    if (stack_.size() == 2 && in_lst()) runs_.emplace_back();
    stack_.push_back({false});
    return true;
  }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    std::string message = e.what();
    if (message.rfind("[json.exception", 0) == 0 && message.find("] ") != std::string::npos)
      message = message.substr(message.find("] ") + 2);
    if (const size_t echo = message.find("; last read:"); echo != std::string::npos) message.resize(echo);
    fail(ErrorCode::kInvalidModel, path_, ": invalid JSON at byte ", position, ": ", message);
  }

  const std::string& root_class() const { return root_class_; }

 private:
  struct Frame {
    bool object = false;
    std::string key;  // objects: the key whose value is being read
    size_t index = 0;  // arrays: the element being read
  };

  bool in_lst() const { return stack_.size() >= 2 && stack_[0].object && stack_[0].key == "lst" && !stack_[1].object; }
  // Inside the "outputs" object of an iteration, below one tensor's name.
  bool in_outputs() const {
    return stack_.size() >= 7 && in_lst() && !stack_[2].object && stack_[2].index == 1 && !stack_[3].object &&
           stack_[4].object && stack_[4].key == "outputs" && stack_[5].object;
  }
  bool scalar() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
    return true;
  }
  bool close() {
    stack_.pop_back();
    return scalar();
  }

  std::FILE* file_;
  const std::string& path_;
  std::vector<RunResultsIndex::Run>& runs_;
  std::vector<Frame> stack_;
  std::string root_class_;
  int64_t key_end_ = 0;
};

}  // namespace

RunResultsIndex::RunResultsIndex(std::string path) : path_(std::move(path)) {
  formats::check_readable_file(path_);
  file_bytes_ = static_cast<int64_t>(fs::file_size(path_));
  FilePtr file = open_file(path_, "rb");
  IndexBuilder builder(file.get(), path_, runs_);
  Json::sax_parse(file.get(), &builder);
  PARITY_CHECK(builder.root_class() == "RunResults", kInvalidModel, path_, ": not a Polygraphy RunResults file",
               builder.root_class().empty() ? std::string() : " (polygraphy_class '" + builder.root_class() + "')");
}

Tensor RunResultsIndex::read(size_t run, size_t iteration, const std::string& name) const {
  PARITY_ASSERT(run < runs_.size() && iteration < runs_[run].iterations.size(), "run results index out of range");
  const Iteration& it = runs_[run].iterations[iteration];
  auto span = it.spans.find(name);
  PARITY_CHECK(span != it.spans.end(), kNotFound, path_, ": no tensor '", name, "' in runner '", runs_[run].runner,
               "', iteration ", iteration);
  const auto [begin, end] = span->second;
  std::string text(static_cast<size_t>(end - begin), '\0');
  FilePtr file = open_file(path_, "rb");
  PARITY_CHECK(std::fseek(file.get(), begin, SEEK_SET) == 0 &&
                   std::fread(text.data(), 1, text.size(), file.get()) == text.size(),
               kIo, path_, ": cannot read tensor '", name, "' (the file changed since it was indexed?)");
  // The span starts right after the key "array": skip ':' and whitespace up to the opening quote.
  const size_t quote = text.find('"');
  PARITY_CHECK(quote != std::string::npos && text.back() == '"', kInvalidModel, path_, ": tensor '", name,
               "' is not where the index found it (the file changed?)");
  std::string base64;
  if (text.find('\\', quote) == std::string::npos) {
    base64 = text.substr(quote + 1, text.size() - quote - 2);
  } else {
    base64 = Json::parse(text.substr(quote)).get<std::string>();  // escaped characters, e.g. "\/"
  }
  text.clear();
  text.shrink_to_fit();
  const std::string what = path_ + ", tensor '" + name + "'";
  return npy_from_string(base64_decode(base64, what), what);
}

// ---- writer --------------------------------------------------------------------------------------

// Indentation of nlohmann's dump(4) at each nesting level of a RunResults file.
namespace {
std::string indent(int level) { return std::string(static_cast<size_t>(level) * 4, ' '); }
std::string quoted(const std::string& s) { return Json(s).dump(-1, ' ', true); }
}  // namespace

struct RunResultsStreamWriter::Part {
  std::string path;
  std::ofstream out;
  std::string runner;
  int iterations = 0;
  bool iteration_open = false;
  int tensors = 0;  // in the open iteration
};

RunResultsStreamWriter::RunResultsStreamWriter(std::string path) : path_(std::move(path)) {
  formats::check_writable_location(path_);
}

RunResultsStreamWriter::~RunResultsStreamWriter() {
  std::error_code ec;
  for (const auto& part : parts_) {
    part->out.close();
    fs::remove(part->path, ec);
  }
}

size_t RunResultsStreamWriter::add_runner(const std::string& runner_name) {
  auto part = std::make_unique<Part>();
  part->path = path_ + ".part" + std::to_string(parts_.size()) + ".tmp";
  part->out.open(part->path, std::ios::binary | std::ios::trunc);
  PARITY_CHECK(part->out, kIo, "cannot write '", part->path, "' (", std::strerror(errno), ")");
  part->runner = runner_name;
  parts_.push_back(std::move(part));
  return parts_.size() - 1;
}

void RunResultsStreamWriter::begin_iteration(size_t runner) {
  PARITY_ASSERT(runner < parts_.size() && !finished_, "RunResultsStreamWriter: bad runner handle");
  Part& part = *parts_[runner];
  if (part.iteration_open) end_iteration(part);
  part.out << (part.iterations ? ",\n" : "\n") << indent(4) << "{\n" << indent(5) << "\"outputs\": {";
  part.iteration_open = true;
  part.tensors = 0;
  ++part.iterations;
}

void RunResultsStreamWriter::add(size_t runner, const std::string& name, const Tensor& tensor) {
  PARITY_ASSERT(runner < parts_.size() && parts_[runner]->iteration_open, "RunResultsStreamWriter: no open iteration");
  Part& part = *parts_[runner];
  std::string npy;
  try {
    npy = npy_to_bytes(tensor);
  } catch (const Error& e) {
    throw e.prefixed("tensor '" + name + "'").with_missing({.tensor = name});
  }
  part.out << (part.tensors ? ",\n" : "\n") << indent(6) << quoted(name) << ": {\n"
           << indent(7) << "\"values\": {\n"
           << indent(8) << "\"array\": \"" << base64_encode(npy) << "\",\n"
           << indent(8) << "\"polygraphy_class\": \"ndarray\"\n"
           << indent(7) << "},\n"
           << indent(7) << "\"polygraphy_class\": \"LazyArray\"\n"
           << indent(6) << "}";
  ++part.tensors;
  PARITY_CHECK(part.out, kIo, "cannot write '", part.path, "' (disk full?)");
}

void RunResultsStreamWriter::end_iteration(Part& part) {
  part.out << (part.tensors ? "\n" + indent(5) + "}" : "}") << ",\n"
           << indent(5) << "\"runtime\": null,\n"
           << indent(5) << "\"runner_name\": " << quoted(part.runner) << ",\n"
           << indent(5) << "\"polygraphy_class\": \"IterationResult\"\n"
           << indent(4) << "}";
  part.iteration_open = false;
}

void RunResultsStreamWriter::finish() {
  PARITY_ASSERT(!finished_, "RunResultsStreamWriter::finish called twice");
  finished_ = true;
  // The parts are joined in a temporary file beside the target and renamed into place (AtomicFile):
  // a killed run leaves the old file or none, and an input of the command is never written over.
  formats::AtomicFile file(path_);
  const std::string& tmp = file.temp_path();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    PARITY_CHECK(out, kIo, "cannot write '", tmp, "' (", std::strerror(errno), ")");
    out << "{\n" << indent(1) << "\"lst\": [";
    for (size_t i = 0; i < parts_.size(); ++i) {
      Part& part = *parts_[i];
      if (part.iteration_open) end_iteration(part);
      part.out.close();
      PARITY_CHECK(part.out, kIo, "cannot write '", part.path, "' (disk full?)");
      out << (i ? ",\n" : "\n") << indent(2) << "[\n" << indent(3) << quoted(part.runner) << ",\n" << indent(3) << "[";
      std::ifstream in(part.path, std::ios::binary);
      if (part.iterations) out << in.rdbuf() << "\n" << indent(3);
      out << "]\n" << indent(2) << "]";
    }
    out << (parts_.empty() ? "]" : "\n" + indent(1) + "]") << ",\n" << indent(1) << "\"polygraphy_class\": \"RunResults\"\n}";
    out.close();
    PARITY_CHECK(out, kIo, "cannot write '", tmp, "' (disk full?)");
  }
  file.commit();
}

}  // namespace parity
