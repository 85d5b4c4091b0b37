// .nav packages (navigator workspaces zipped): unpack_package's entry checks and the unpacking
// itself, status.yaml with its path checks, and what `package status|triton` and the C++ API
// compute from a loaded package (formats' status and performance, models, best runtime by every
// strategy, the report section, Triton configs). Nothing is re-tested (no runner runs).
//
// Two input kinds, so that mutations reach past the zip's CRCs:
// - bytes starting with "PK": the .nav file itself;
// - anything else: an entry list, `name NUL content NUL name NUL content ...`, that the target
//   zips (stored, with correct CRCs) before unpacking; a name starting with '@' becomes a symbolic
//   link entry named by the rest, pointing at its content.
// A finding besides crashes: a file written outside the target folder, or a symbolic link in it.
#include <unistd.h>
#include <zip.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.h"
#include "tools/navigator/package.h"
#include "tools/navigator/status.h"
#include "tools/navigator/triton.h"
#include "tools/report/package_report.h"
#include "tools/report/report.h"

namespace fs = std::filesystem;
namespace nav = parity::tools::navigator;

namespace {

fs::path base;  // per process; each input unpacks into base/run/target

struct Entry {
  std::string name, content;
  bool symlink = false;
};

std::vector<Entry> parse_entry_list(std::string_view data) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (start <= data.size()) {
    const size_t end = data.find('\0', start);
    fields.push_back(data.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  std::vector<Entry> entries;
  for (size_t i = 0; i < fields.size(); i += 2) {
    if (i + 1 == fields.size() && fields[i].empty()) break;  // a trailing NUL
    Entry e{std::string(fields[i]), i + 1 < fields.size() ? std::string(fields[i + 1]) : std::string()};
    if (!e.name.empty() && e.name.front() == '@') {
      e.symlink = true;
      e.name.erase(0, 1);
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

// Writes the entries as a zip (stored); false when libzip refuses them (not parity's concern).
bool write_zip(const fs::path& path, const std::vector<Entry>& entries) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (!archive) return false;
  for (const auto& e : entries) {
    zip_source_t* source = zip_source_buffer(archive, e.content.data(), e.content.size(), 0);
    if (!source) break;
    const zip_int64_t index = zip_file_add(archive, e.name.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);
      continue;  // an empty or duplicate name libzip itself refuses
    }
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
    if (e.symlink)
      zip_file_set_external_attributes(archive, static_cast<zip_uint64_t>(index), 0, ZIP_OPSYS_UNIX, 0120777u << 16);
  }
  if (zip_close(archive) != 0) {
    zip_discard(archive);
    return false;
  }
  return true;
}

void write_bytes(const fs::path& path, std::string_view data) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (!data.empty() && std::fwrite(data.data(), 1, data.size(), f) != data.size()) std::abort();
  std::fclose(f);
}

// Everything unpacked stays in `target`, and is plain files and folders.
void check_confined(const fs::path& run, const fs::path& target) {
  for (const auto& entry : fs::directory_iterator(base))
    if (entry.path() != run) {
      std::fprintf(stderr, "unpacking wrote %s outside the target folder\n", entry.path().c_str());
      std::abort();
    }
  for (const auto& entry : fs::directory_iterator(run)) {
    const std::string name = entry.path().filename().string();
    if (name != "target" && name != "package.nav") {
      std::fprintf(stderr, "unpacking wrote %s outside the target folder\n", entry.path().c_str());
      std::abort();
    }
  }
  if (!fs::exists(target)) return;
  for (auto it = fs::recursive_directory_iterator(target); it != fs::recursive_directory_iterator(); ++it)
    if (it->is_symlink()) {
      std::fprintf(stderr, "unpacking made a symbolic link %s\n", it->path().c_str());
      std::abort();
    }
}

// What the CLI and the C++ API compute from a loaded package without running anything.
void query(const nav::PackageDescriptor& package) {
  package.get_formats_status();
  package.get_formats_performance();
  package.any_passed();
  for (const auto& format : package.status().formats) {
    parity::fuzz::expect_clean([&] { package.get_model(format.format); });
    parity::fuzz::expect_clean([&] { nav::triton_config(package.status(), format.format, "m", {}); });
    for (const auto& runtime : format.runtimes) package.get_status(format.format, runtime.runtime);
  }
  for (auto strategy : {nav::Strategy::kMinLatency, nav::Strategy::kMaxThroughput,
                        nav::Strategy::kMaxThroughputWithinLatency, nav::Strategy::kMinLatencyAndMaxThroughput})
    for (bool verified_only : {false, true}) package.best_runtime(strategy, 5.0, verified_only);
  parity::tools::report::Report report("fuzz", "fuzz");
  report.add_section(parity::tools::report::package_section(package.status()));
  report.html();
  const std::string json_path = (base / "report.json").string();
  report.write(json_path);  // what `package status --report r.json` writes
  fs::remove(json_path);
  // The status written back (set_verified, retest) must read again.
  const std::string yaml = nav::status_to_yaml(package.status());
  const nav::WorkspaceStatus again = nav::status_from_yaml(yaml, "status.yaml");
  if (again.formats.size() != package.status().formats.size()) {
    std::fprintf(stderr, "status.yaml round trip lost formats\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::limit_allocations();
  const fs::path shm("/dev/shm");
  base = (fs::is_directory(shm) ? shm : fs::temp_directory_path()) / ("parity-fuzz-nav-" + std::to_string(::getpid()));
  fs::create_directories(base);
  std::atexit([] {  // libFuzzer ends with exit(): leave no folder behind
    std::error_code ec;
    fs::remove_all(base, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const fs::path run = base / "run", package = run / "package.nav", target = run / "target";
  fs::remove_all(run);
  fs::create_directories(run);
  if (bytes.substr(0, 2) == "PK") {
    write_bytes(package, bytes);
  } else if (!write_zip(package, parse_entry_list(bytes))) {
    return 0;
  }
  parity::fuzz::expect_clean([&] {
    nav::unpack_package(package, target);
    check_confined(run, target);
    query(nav::PackageDescriptor(target));
  });
  check_confined(run, target);
  fs::remove_all(run);
  return 0;
}
