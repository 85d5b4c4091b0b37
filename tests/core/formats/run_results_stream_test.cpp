// The streaming RunResults reader and writer agree with the whole-file ones, on Polygraphy's own
// `mark all` file.
#include "core/formats/run_results_stream.h"

#include <gtest/gtest.h>

#include "core/formats/npy.h"
#include "core/formats/polygraphy_json.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::polygraphy_fixtures_dir;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

const std::string kMarkAll = (polygraphy_fixtures_dir() / "hello_deepa_markall_outputs.json").string();

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(RunResultsIndex, ReadsEveryTensorOfPolygraphysMarkAllFile) {
  const RunResults whole = read_run_results(kMarkAll);
  const RunResultsIndex index(kMarkAll);
  ASSERT_EQ(index.runs().size(), 1u);
  EXPECT_EQ(index.runs()[0].runner, whole.runs[0].first);
  ASSERT_EQ(index.runs()[0].iterations.size(), 1u);
  const TensorMap& expected = whole.runs[0].second[0].outputs;
  EXPECT_EQ(index.runs()[0].iterations[0].names, expected.names());
  EXPECT_EQ(expected.names().size(), 25u);
  for (const auto& name : expected.names())
    EXPECT_EQ(npy_to_bytes(index.read(0, 0, name)), npy_to_bytes(expected.at(name))) << name;
  EXPECT_NE(error_of([&] { index.read(0, 0, "nope"); }).find("no tensor 'nope'"), std::string::npos);
}

TEST(RunResultsIndex, ReadsEscapedTextAndRejectsOtherFiles) {
  TempDir tmp;
  // A writer that escapes '/' as "\/" (allowed by JSON) still reads back.
  std::string text = read_file((polygraphy_fixtures_dir() / "run_results.json"));
  std::string escaped;
  for (char c : text) escaped += c == '/' ? std::string("\\/") : std::string(1, c);
  write_file(tmp / "escaped.json", escaped);
  const RunResults whole = read_run_results((polygraphy_fixtures_dir() / "run_results.json").string());
  const RunResultsIndex index((tmp / "escaped.json").string());
  ASSERT_EQ(index.runs().size(), whole.runs.size());
  for (size_t r = 0; r < whole.runs.size(); ++r)
    for (size_t i = 0; i < whole.runs[r].second.size(); ++i)
      for (const auto& name : whole.runs[r].second[i].outputs.names())
        EXPECT_EQ(npy_to_bytes(index.read(r, i, name)), npy_to_bytes(whole.runs[r].second[i].outputs.at(name)));

  const std::string inputs = (polygraphy_fixtures_dir() / "inputs_seed1.json").string();
  EXPECT_NE(error_of([&] { RunResultsIndex{inputs}; }).find("not a Polygraphy RunResults file"), std::string::npos);
  write_file(tmp / "cut.json", text.substr(0, text.size() / 2));
  EXPECT_NE(error_of([&] { RunResultsIndex{(tmp / "cut.json").string()}; }).find("invalid JSON at byte"),
            std::string::npos);
  EXPECT_NE(error_of([&] { RunResultsIndex{(tmp / "missing.json").string()}; }).find("missing.json"),
            std::string::npos);
}

TEST(RunResultsStreamWriter, WritesWhatTheWholeFileWriterWrites) {
  TempDir tmp;
  RunResults results = read_run_results(kMarkAll);
  // Two runners produced interleaved, two iterations each, one iteration with no outputs.
  RunResults expected;
  std::vector<IterationResult> a(2), b(2);
  const TensorMap& all = results.runs[0].second[0].outputs;
  for (const auto& name : all.names()) {
    a[0].outputs.set(name, all.at(name));
    b[1].outputs.set(name, all.at(name));
  }
  a[1].outputs.set("only", all.at(all.names().front()));
  for (auto* its : {&a, &b})
    for (auto& it : *its) it.runner_name = its == &a ? "ref" : "onnxrt-runner";
  expected.add("ref", a);
  expected.add("onnxrt-runner", b);

  const std::string path = (tmp / "streamed.json").string();
  {
    RunResultsStreamWriter writer(path);
    const size_t ref = writer.add_runner("ref"), peer = writer.add_runner("onnxrt-runner");
    writer.begin_iteration(ref);
    writer.begin_iteration(peer);
    for (const auto& name : all.names()) writer.add(ref, name, all.at(name));
    writer.begin_iteration(ref);
    writer.add(ref, "only", all.at(all.names().front()));
    writer.begin_iteration(peer);
    for (const auto& name : all.names()) writer.add(peer, name, all.at(name));
    writer.finish();
  }
  EXPECT_EQ(read_file(path), run_results_to_json(expected));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(tmp.path()), {}), 1) << "temporary parts left";

  RunResultsStreamWriter empty((tmp / "empty.json").string());
  empty.finish();
  EXPECT_EQ(read_file(tmp / "empty.json"), run_results_to_json(RunResults{}));
  EXPECT_NE(error_of([&] { RunResultsStreamWriter{(tmp / "no" / "dir.json").string()}; }).find("dir.json"),
            std::string::npos);
}

}  // namespace
}  // namespace parity
