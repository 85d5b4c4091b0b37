#include "tools/navigator/package.h"

#include <sys/stat.h>
#include <zip.h>

#include <set>

#include "core/formats/file_io.h"
#include "core/status.h"
#include "tools/navigator/cells.h"
#include "tools/navigator/pipeline.h"
#include "tools/navigator/workspace_lock.h"

namespace parity::tools::navigator {

namespace fs = std::filesystem;

namespace {

struct ZipCloser {
  void operator()(zip_t* archive) const {
    if (archive) zip_discard(archive);
  }
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;

bool is_data_path(const fs::path& relative) {
  const std::string first = relative.begin()->string();
  return first == "model_input" || first == "model_output";
}

// Why an entry name may not be unpacked, or "".
std::string unsafe_entry(const std::string& name) {
  if (name.empty()) return "an empty name";
  if (name.front() == '/' || name.front() == '\\' || (name.size() > 1 && name[1] == ':')) return "an absolute path";
  if (name.find('\\') != std::string::npos) return "a backslash";
  if (name.find('\0') != std::string::npos) return "a NUL byte";
  for (const auto& part : fs::path(name))
    if (part == "..") return "a '..' component";
  return "";
}

bool is_symlink_entry(zip_t* archive, zip_uint64_t index) {
  zip_uint8_t opsys = 0;
  zip_uint32_t attributes = 0;
  if (zip_file_get_external_attributes(archive, index, 0, &opsys, &attributes) != 0) return false;
  if (opsys != ZIP_OPSYS_UNIX) return false;
  return S_ISLNK(attributes >> 16);
}

std::optional<RuntimeChoice> pick(const std::vector<RuntimeChoice>& candidates, bool by_throughput) {
  if (candidates.empty()) return std::nullopt;
  const RuntimeChoice* best = &candidates.front();
  for (const auto& c : candidates)
    if (by_throughput ? c.throughput > best->throughput : c.p50_ms < best->p50_ms) best = &c;
  return *best;
}

}  // namespace

PackageDescriptor::PackageDescriptor(fs::path workspace) : workspace_(std::move(workspace)), status_(read_status(workspace_)) {}

std::map<std::string, bool> PackageDescriptor::get_formats_status() const {
  std::map<std::string, bool> result;
  for (const auto& f : status_.formats) result[f.format] = get_status(f.format);
  return result;
}

std::map<std::string, double> PackageDescriptor::get_formats_performance() const {
  std::map<std::string, double> result;
  for (const auto& f : status_.formats)
    for (const auto& r : f.runtimes) {
      const StepResult* perf = r.find_step("performance");
      if (!r.passed() || !perf || !perf->ok() || perf->performance.empty()) continue;
      const double p50 = perf->performance.front().p50_ms;
      auto it = result.find(f.format);
      if (it == result.end() || p50 < it->second) result[f.format] = p50;
    }
  return result;
}

bool PackageDescriptor::get_status(const std::string& format, const std::optional<std::string>& runtime) const {
  const FormatStatus* f = status_.find_format(format);
  if (!f || !f->export_step.ok()) return false;
  for (const auto& r : f->runtimes)
    if ((!runtime || r.runtime == *runtime) && r.passed()) return true;
  return false;
}

fs::path PackageDescriptor::get_model(const std::string& format) const {
  const FormatStatus* f = status_.find_format(format);
  PARITY_CHECK(f, kNotFound, "the package has no format '", format, "'");
  const fs::path path = workspace_ / f->model_path;
  PARITY_CHECK(f->export_step.ok() && fs::is_regular_file(path), kNotFound, "format ", format,
               " was not produced (export ", step_state_name(f->export_step.state),
               f->export_step.reason.empty() ? "" : ": " + f->export_step.reason, ")");
  return path;
}

std::unique_ptr<runners::Runner> PackageDescriptor::get_runner(const std::string& format, const std::string& runtime) const {
  const fs::path model = get_model(format);
  const FormatStatus* f = status_.find_format(format);
  PARITY_CHECK(f->find_runtime(runtime), kNotFound, "format ", format, " was not tested on '", runtime, "'");
  const std::string why = runtime_unavailable(runtime);
  PARITY_CHECK(why.empty(), kNotFound, runtime, " is unavailable: ", why);
  return make_runner(runtime, model);
}

void PackageDescriptor::set_verified(const std::string& format, const std::string& runtime, bool verified) {
  const WorkspaceLock lock(workspace_, WorkspaceLock::Mode::kExclusive);
  navigator::set_verified(status_, format, runtime, verified);
  write_status(workspace_, status_);
}

void PackageDescriptor::save(const fs::path& package, const SaveOptions& options) const {
  PARITY_CHECK(options.override || !fs::exists(package), kInvalidArgument, package.string(),
               " exists; pass --override to replace it");
  const WorkspaceLock lock(workspace_, WorkspaceLock::Mode::kShared);
  formats::AtomicFile file(package.string());
  int open_error = 0;
  ZipPtr archive(zip_open(file.temp_path().c_str(), ZIP_CREATE | ZIP_TRUNCATE, &open_error));
  PARITY_CHECK(archive, kIo, "cannot write ", package.string());
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(workspace_); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_symlink() || !it->is_regular_file()) continue;  // a package holds plain files only
    const fs::path relative = fs::relative(it->path(), workspace_);
    if (!options.keep_data && is_data_path(relative)) continue;
    files.push_back(relative);
  }
  std::sort(files.begin(), files.end());
  for (const auto& relative : files) {
    zip_source_t* source = zip_source_file(archive.get(), (workspace_ / relative).c_str(), 0, -1);
    PARITY_CHECK(source, kIo, "cannot add ", relative.string(), " to ", package.string(), ": ", zip_strerror(archive.get()));
    const zip_int64_t index = zip_file_add(archive.get(), relative.generic_string().c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);
      fail(ErrorCode::kIo, "cannot add ", relative.string(), " to ", package.string(), ": ", zip_strerror(archive.get()));
    }
    zip_set_file_compression(archive.get(), static_cast<zip_uint64_t>(index), ZIP_CM_DEFLATE, 1);
  }
  zip_t* raw = archive.release();
  if (zip_close(raw) != 0) {
    const std::string message = zip_strerror(raw);
    zip_discard(raw);
    fail(ErrorCode::kIo, "cannot write ", package.string(), ": ", message);
  }
  file.commit();
}

void unpack_package(const fs::path& package, const fs::path& target) {
  PARITY_CHECK(fs::is_regular_file(package), kNotFound, "the package ", package.string(), " does not exist");
  PARITY_CHECK(!fs::exists(target) || (fs::is_directory(target) && fs::is_empty(target)), kInvalidArgument,
               "the target folder ", target.string(), " exists and is not empty");
  int open_error = 0;
  ZipPtr archive(zip_open(package.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &open_error));
  PARITY_CHECK(archive, kInvalidModel, package.string(), " is not a .nav package (not a zip archive)");
  const zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  std::set<std::string> seen, files, folders;
  bool has_status = false;
  // Check every entry before writing anything.
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* raw_name = zip_get_name(archive.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_GUESS);
    const std::string name = raw_name ? raw_name : "";
    const std::string why = unsafe_entry(name);
    PARITY_CHECK(why.empty(), kInvalidModel, package.string(), ": entry '", name, "' has ", why,
                 "; refusing to unpack (it could write outside ", target.string(), ")");
    PARITY_CHECK(!is_symlink_entry(archive.get(), static_cast<zip_uint64_t>(i)), kInvalidModel, package.string(),
                 ": entry '", name, "' is a symbolic link; refusing to unpack");
    const bool is_folder = name.back() == '/';
    std::string key = fs::path(name).lexically_normal().generic_string();
    while (!key.empty() && key.back() == '/') key.pop_back();
    PARITY_CHECK(!key.empty() && key != ".", kInvalidModel, package.string(), ": entry '", name, "' names no file");
    PARITY_CHECK(seen.insert(key + (is_folder ? "/" : "")).second, kInvalidModel, package.string(), ": entry '", name,
                 "' appears twice");
    (is_folder ? folders : files).insert(key);
    for (fs::path parent = fs::path(key).parent_path(); !parent.empty(); parent = parent.parent_path())
      folders.insert(parent.generic_string());
    has_status = has_status || name == "status.yaml";
  }
  for (const auto& file : files)
    PARITY_CHECK(!folders.count(file), kInvalidModel, package.string(), ": entry '", file,
                 "' is both a file and a folder");
  PARITY_CHECK(has_status, kInvalidModel, package.string(), " is not a .nav package (no status.yaml)");
  // The checks above rule out every conflict in the archive itself; what is left is the file
  // system (full disk, permissions), named as such rather than escaping as a library exception.
  try {
    fs::create_directories(target);
    const fs::path root = fs::canonical(target);
    std::string chunk(1 << 20, '\0');  // one buffer for every entry
    for (zip_int64_t i = 0; i < count; ++i) {
      const std::string name = zip_get_name(archive.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_GUESS);
      if (name.back() == '/') {
        fs::create_directories(root / name);
        continue;
      }
      const fs::path out = (root / name).lexically_normal();
      fs::create_directories(out.parent_path());
      // The parent must still be inside the target (no folder on the way is a link).
      const fs::path parent = fs::canonical(out.parent_path());
      const std::string rel = fs::relative(parent, root).generic_string();
      PARITY_CHECK(rel.rfind("..", 0) != 0, kInvalidModel, package.string(), ": entry '", name, "' leads outside ", target.string());
      zip_stat_t st;
      zip_stat_init(&st);
      PARITY_CHECK(zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &st) == 0, kInvalidModel, package.string(),
                   ": cannot read entry '", name, "'");
      const std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> entry(
          zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0), zip_fclose);
      PARITY_CHECK(entry, kInvalidModel, package.string(), ": cannot read entry '", name, "': ", zip_strerror(archive.get()));
      // Streamed in chunks: an entry's size is only what the archive claims.
      formats::AtomicFile file(out.string());
      zip_uint64_t total = 0;
      for (;;) {
        const zip_int64_t read = zip_fread(entry.get(), chunk.data(), chunk.size());
        PARITY_CHECK(read >= 0, kInvalidModel, package.string(), ": entry '", name, "' is damaged");
        if (read == 0) break;
        file.write(std::string_view(chunk.data(), static_cast<size_t>(read)));
        total += static_cast<zip_uint64_t>(read);
      }
      PARITY_CHECK(total == st.size, kInvalidModel, package.string(), ": entry '", name, "' is damaged");
      file.commit();
      if (out.extension() == ".sh") fs::permissions(out, fs::perms::owner_exec, fs::perm_options::add);
    }
  } catch (const fs::filesystem_error& e) {
    fail(ErrorCode::kIo, "cannot unpack ", package.string(), " into ", target.string(), ": ", e.code().message());
  }
}

PackageDescriptor PackageDescriptor::load(const fs::path& package, const fs::path& target, const LoadOptions& options) {
  {
    const WorkspaceLock lock(target, WorkspaceLock::Mode::kExclusive);
    unpack_package(package, target);
  }
  PackageDescriptor descriptor(target);
  if (options.retest || options.retest_conversions || options.run_profiling)
    descriptor.retest(options.retest_conversions, options.run_profiling, options.quiet, options.isolation);
  return descriptor;
}

void PackageDescriptor::retest(bool reexport, bool run_profiling, bool quiet, const compare::Isolation& isolation) {
  const WorkspaceLock lock(workspace_, WorkspaceLock::Mode::kExclusive);
  PARITY_CHECK(status_.sample_counts["correctness"] == 0 || fs::exists(workspace_ / "model_input"), kNotFound,
               "the package has no samples (saved with --no-data), so it cannot be re-tested");
  NavigatorLog log(workspace_ / "navigator.log", quiet);
  log.line("re-test of " + workspace_.string() + (reexport ? " (formats exported again)" : ""));
  CellSelection selection;
  selection.steps = {"conversion", "correctness"};
  if (reexport) selection.steps.insert("export");
  if (run_profiling) selection.steps.insert("performance");
  const bool profiling = status_.config.run_profiling;
  status_.config.run_profiling = run_profiling;
  // Verification is the user's verdict on what was tested before; it stays.
  run_cells(workspace_, status_, selection, {}, isolation, log);
  status_.config.run_profiling = profiling || run_profiling;
  write_status(workspace_, status_);
}

void PackageDescriptor::profile(const ProfileOptions& options) {
  const WorkspaceLock lock(workspace_, WorkspaceLock::Mode::kExclusive);
  NavigatorConfig& c = status_.config;
  if (options.measurement_mode) c.measurement_mode = *options.measurement_mode;
  if (options.window_ms) c.window_ms = *options.window_ms;
  if (options.window_count) c.window_count = *options.window_count;
  if (options.max_batch_size && c.batch_dim) c.max_batch_size = *options.max_batch_size;
  if (options.stability_percentage) c.stability_percentage = *options.stability_percentage;
  if (options.throughput_cutoff) c.throughput_cutoff = *options.throughput_cutoff;
  if (options.max_trials) c.max_trials = *options.max_trials;
  c.run_profiling = true;
  NavigatorLog log(workspace_ / "navigator.log", options.quiet);
  log.line("profiling " + workspace_.string());
  CellSelection selection;
  selection.steps = {"performance"};
  for (const auto& f : status_.formats)
    for (const auto& r : f.runtimes)
      if (r.passed()) selection.runtimes.insert(r.runtime);
  if (selection.runtimes.empty()) return;
  run_cells(workspace_, status_, selection, {}, options.isolation, log);
}

bool PackageDescriptor::any_passed() const {
  for (const auto& f : status_.formats)
    if (get_status(f.format)) return true;
  return false;
}

std::optional<RuntimeChoice> PackageDescriptor::best_runtime(Strategy strategy, std::optional<double> latency_budget_ms,
                                                             bool verified_only) const {
  return choose_runtime(status_, strategy, latency_budget_ms, verified_only);
}

std::optional<RuntimeChoice> choose_runtime(const WorkspaceStatus& status, Strategy strategy,
                                            std::optional<double> latency_budget_ms, bool verified_only,
                                            const std::function<bool(const std::string&)>& allowed) {
  std::vector<RuntimeChoice> candidates;
  for (const auto& f : status.formats) {
    if (!f.export_step.ok() || (allowed && !allowed(f.format))) continue;
    for (const auto& r : f.runtimes) {
      const StepResult* perf = r.find_step("performance");
      if (!r.passed() || (verified_only && !r.verified()) || !perf || !perf->ok() || perf->performance.empty()) continue;
      RuntimeChoice choice{f.format, r.runtime, perf->performance.front().p50_ms, 0, 1};
      bool fits = false;
      for (const auto& row : perf->performance) {
        if (strategy == Strategy::kMaxThroughputWithinLatency && latency_budget_ms && row.p50_ms > *latency_budget_ms) continue;
        fits = true;
        if (row.throughput > choice.throughput) {
          choice.throughput = row.throughput;
          choice.batch_size = row.batch_size;
        }
      }
      if (fits) candidates.push_back(choice);
    }
  }
  switch (strategy) {
    case Strategy::kMinLatency: return pick(candidates, false);
    case Strategy::kMaxThroughput:
    case Strategy::kMaxThroughputWithinLatency: return pick(candidates, true);
    case Strategy::kMinLatencyAndMaxThroughput: {
      auto fastest = pick(candidates, false);
      auto widest = pick(candidates, true);
      if (fastest && widest && fastest->format == widest->format && fastest->runtime == widest->runtime) return widest;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

Strategy strategy_from_name(const std::string& name) {
  if (name == "min-latency") return Strategy::kMinLatency;
  if (name == "max-throughput") return Strategy::kMaxThroughput;
  if (name == "max-throughput-within-latency") return Strategy::kMaxThroughputWithinLatency;
  if (name == "min-latency-and-max-throughput") return Strategy::kMinLatencyAndMaxThroughput;
  fail(ErrorCode::kInvalidArgument, "unknown strategy '", name,
       "' (min-latency, max-throughput, max-throughput-within-latency, min-latency-and-max-throughput)");
}

}  // namespace parity::tools::navigator
