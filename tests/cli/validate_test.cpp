// parity validate end to end on models/demo.onnx and seeded datasets made here: one process, MPI
// ranks (Open MPI's mpirun on loopback) and shards merged all give the same summary; a rank that
// dies fails the run naming it; bad samples and short label files are one-line errors.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include <onnx/onnx_pb.h>

#include "core/formats/npy.h"
#include "core/formats/npz.h"
#include "core/formats/polygraphy_json.h"
#include "model/proto_convert.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string demo() { return (source_dir() / "models/demo.onnx").string(); }

Tensor random_input(std::mt19937& rng, Shape shape = {1, 3, 32, 32}) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Tensor t(DType::kFloat32, shape);
  for (float& v : t.values<float>()) v = u(rng);
  return t;
}

// `count` samples named s000.npz ... (or .npy), seeded.
fs::path make_dataset(const fs::path& dir, int count, const std::string& ext = ".npz", uint32_t seed = 44) {
  fs::create_directories(dir);
  std::mt19937 rng(seed);
  for (int i = 0; i < count; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "s%0*d%s", count > 1000 ? 4 : 3, i, ext.c_str());
    const Tensor x = random_input(rng);
    // Plain writes: the library's atomic, synced writes would take minutes for thousands of files.
    if (ext == ".npz") write_npz((dir / name).string(), TensorMap{{"input", x}});
    else std::ofstream((dir / name).string(), std::ios::binary) << npy_to_bytes(x);
  }
  return dir;
}

fs::path make_labels(const fs::path& path, int count) {
  std::ofstream out(path);
  for (int i = 0; i < count; ++i) out << (i * 7) % 10 << "\n";
  return path;
}

Json read_json(const fs::path& path) { return Json::parse(read_file(path)); }

// A summary without what legitimately differs between runs (wall time, ranks).
Json comparable(Json summary) {
  summary.erase("run");
  return summary;
}

std::string validate_args(const fs::path& dataset, const fs::path& labels, const fs::path& summary) {
  return "validate " + demo() + " --dataset " + dataset.string() + " --runners ref,ort --top-k 3 --labels " +
         labels.string() + " --atol 1e-6 --rtol 1e-5 --save-summary " + summary.string();
}

std::string mpirun(int ranks) {
  return "mpirun --oversubscribe --allow-run-as-root -np " + std::to_string(ranks) + " " + PARITY_BINARY + " ";
}

TEST(ValidateCli, OneProcessSummaryHasTheFigures) {
  TempDir tmp;
  const auto data = make_dataset(tmp / "data", 64);
  const auto labels = make_labels(tmp / "labels.txt", 64);
  const CommandResult r = run_shell(std::string(PARITY_BINARY) + " " + validate_args(data, labels, tmp / "s.json") +
                                    " --report " + (tmp / "r.html").string() + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json s = read_json(tmp / "s.json");
  EXPECT_EQ(s["schema"], "parity.validate.summary/1");
  EXPECT_TRUE(s["complete"].get<bool>());
  EXPECT_EQ(s["samples"]["validated"], 64);
  ASSERT_EQ(s["comparisons"].size(), 1u);
  const Json& out = s["comparisons"][0]["outputs"][0];
  EXPECT_EQ(s["comparisons"][0]["candidate"], "ort");
  EXPECT_EQ(out["name"], "probs");
  EXPECT_EQ(out["samples"], 64);
  EXPECT_EQ(out["elements"], 640);
  EXPECT_GT(out["abs_error"]["max"].get<double>(), 0.0);  // two runtimes: some round-off
  EXPECT_LE(out["abs_error"]["p50"].get<double>(), out["abs_error"]["p99"].get<double>());
  EXPECT_LE(out["abs_error"]["p99"].get<double>(), out["abs_error"]["max"].get<double>() * 1.05);
  EXPECT_EQ(out["top_k"]["rows"], 64);
  EXPECT_EQ(out["worst"].size(), 10u);
  EXPECT_TRUE(contains(out["worst"][0]["rerun"].get<std::string>(), "parity run " + demo() + " --ref --ort --load-inputs "));
  EXPECT_EQ(s["accuracy"]["samples"], 64);
  EXPECT_EQ(s["accuracy"]["runners"].size(), 2u);
  const std::string html = read_file(tmp / "r.html");
  EXPECT_TRUE(contains(html, "Worst samples")) << html;
  EXPECT_TRUE(contains(html, "class=\"mark\"")) << "no error distribution drawn";
  EXPECT_TRUE(contains(html, "Per class (top-1 hits)")) << html;
  // The rerun command of the worst sample works as printed.
  const CommandResult rerun = run_shell(out["worst"][0]["rerun"].get<std::string>().replace(0, 6, PARITY_BINARY) + " 2>&1");
  EXPECT_TRUE(contains(rerun.output, "Comparing Output: 'probs'")) << rerun.output;
}

TEST(ValidateCli, ThreeMpiRanksGiveTheSummaryOfOneProcess) {
  TempDir tmp;
  const auto data = make_dataset(tmp / "data", 64);
  const auto labels = make_labels(tmp / "labels.txt", 64);
  const CommandResult one = run_shell(std::string(PARITY_BINARY) + " " + validate_args(data, labels, tmp / "one.json") + " 2>&1");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const CommandResult three = run_shell(mpirun(3) + validate_args(data, labels, tmp / "three.json") + " 2>&1");
  ASSERT_EQ(three.exit_code, 0) << three.output;
  const Json a = read_json(tmp / "one.json"), b = read_json(tmp / "three.json");
  EXPECT_EQ(b["run"]["ranks"], 3);
  EXPECT_EQ(comparable(a).dump(1), comparable(b).dump(1));
  // No rank left a checkpoint of its own behind.
  for (const auto& entry : fs::directory_iterator(tmp.path()))
    EXPECT_FALSE(contains(entry.path().filename().string(), ".rank")) << entry.path();
}

TEST(ValidateCli, ShardsMergedGiveTheSummaryOfOneProcess) {
  TempDir tmp;
  const auto data = make_dataset(tmp / "data", 64);
  const auto labels = make_labels(tmp / "labels.txt", 64);
  const CommandResult one = run_shell(std::string(PARITY_BINARY) + " " + validate_args(data, labels, tmp / "one.json") + " 2>&1");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  std::string parts;
  for (int i : {2, 0, 1}) {  // any order
    const auto part = tmp / (std::string("part").append(std::to_string(i)).append(".json"));
    const CommandResult r = run_shell(std::string(PARITY_BINARY) + " " + validate_args(data, labels, part) + " --shard " +
                                      std::to_string(i) + "/3 2>&1");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_FALSE(read_json(part)["comparisons"][0]["outputs"][0]["samples"] == 64);
    parts.append(" ").append(part.string());
  }
  const CommandResult merge = run_parity({"validate", "merge"});  // usage error: no summaries
  EXPECT_EQ(merge.exit_code, 1);
  const CommandResult merged =
      run_shell(std::string(PARITY_BINARY) + " validate merge" + parts + " -o " + (tmp / "merged.json").string() + " 2>&1");
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_EQ(comparable(read_json(tmp / "one.json")).dump(1), comparable(read_json(tmp / "merged.json")).dump(1));
  // A shard twice is refused.
  const CommandResult twice = run_shell(std::string(PARITY_BINARY) + " validate merge " + (tmp / "part0.json").string() + " " +
                                        (tmp / "part0.json").string() + " -o " + (tmp / "bad.json").string() + " 2>&1");
  EXPECT_EQ(twice.exit_code, 1) << twice.output;
  EXPECT_TRUE(contains(twice.output, "overlap")) << twice.output;
  // A summary whose checkpoint was tampered with is refused, naming the file.
  Json broken = read_json(tmp / "part1.json");
  broken["checkpoint"]["pairs"][0]["outputs"][0]["abs"]["sum"] = Json::array({Json::array({3, -5})});
  write_file(tmp / "broken.json", broken.dump());
  const CommandResult tampered = run_shell(std::string(PARITY_BINARY) + " validate merge " + (tmp / "part0.json").string() +
                                           " " + (tmp / "broken.json").string() + " -o " + (tmp / "bad.json").string() + " 2>&1");
  EXPECT_EQ(tampered.exit_code, 1) << tampered.output;
  EXPECT_TRUE(contains(tampered.output, "summary '" + (tmp / "broken.json").string() + "'")) << tampered.output;
  EXPECT_FALSE(fs::exists(tmp / "bad.json"));
}

// The pid of the process of MPI rank `rank` whose command line mentions `marker`, or 0.
int find_rank_pid(int rank, const std::string& marker) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmd(entry.path() / "cmdline"), env(entry.path() / "environ");
    const std::string cmdline((std::istreambuf_iterator<char>(cmd)), {}), environ((std::istreambuf_iterator<char>(env)), {});
    if (contains(cmdline, marker) && contains(cmdline, "validate") &&
        contains(environ, std::string("OMPI_COMM_WORLD_RANK=") + std::to_string(rank) + '\0'))
      return std::stoi(pid);
  }
  return 0;
}

TEST(ValidateCli, ARankThatDiesFailsTheRunNamingIt) {
  TempDir tmp;
  // Enough samples that rank 2 is still at work when it is killed (about a second per rank).
  const auto data = make_dataset(tmp / "data", 3000, ".npy");
  const auto summary = tmp / "s.json";
  const std::string command = mpirun(3) + "validate " + demo() + " --dataset " + data.string() +
                              " --runners ref,ort --checkpoint-every 8 --save-summary " + summary.string() + " > " +
                              (tmp / "out.txt").string() + " 2>&1; echo $? > " + (tmp / "rc.txt").string();
  std::thread job([&] { run_shell(command); });
  // Rank 2 has validated some samples once its checkpoint exists; then it is killed.
  const auto checkpoint = tmp / "s.json.rank2-of-3";
  int pid = 0;
  for (int i = 0; i < 20000 && !fs::exists(tmp / "rc.txt") && !(fs::exists(checkpoint) && (pid = find_rank_pid(2, data.string())));
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (pid > 0) kill(pid, SIGKILL);
  job.join();
  ASSERT_GT(pid, 0) << "rank 2 was not found at work:\n" << read_file(tmp / "out.txt");
  const std::string output = read_file(tmp / "out.txt");
  EXPECT_NE(std::stoi(read_file(tmp / "rc.txt")), 0) << output;
  EXPECT_TRUE(contains(output, "rank 2 died, its samples 2000-2999 (s2000.npy .. s2999.npy, 1000 samples) not done")) << output;
  EXPECT_TRUE(contains(output, "no summary written")) << output;
  EXPECT_FALSE(fs::exists(summary));

  // The ranks' checkpoints survive: --resume does the rest, and the summary is the whole run's.
  const CommandResult resumed = run_shell(mpirun(3) + "validate " + demo() + " --dataset " + data.string() +
                                          " --runners ref,ort --checkpoint-every 8 --resume --save-summary " +
                                          summary.string() + " 2>&1");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "Resuming: ")) << resumed.output;
  const auto single = tmp / "single" / "s.json";
  fs::create_directories(single.parent_path());
  const CommandResult one = run_shell(std::string(PARITY_BINARY) + " validate " + demo() + " --dataset " + data.string() +
                                      " --runners ref,ort --save-summary " + single.string() + " 2>&1");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  // Equal but for the files the worst samples were saved to (beside each summary).
  auto figures = [](const Json& s) {
    Json f = s["comparisons"];
    for (auto& o : f[0]["outputs"])
      for (auto& w : o["worst"]) w.erase("rerun");
    return Json{{"samples", s["samples"]}, {"comparisons", f}, {"done", s["checkpoint"]["done"]}};
  };
  EXPECT_EQ(figures(read_json(single)).dump(1), figures(read_json(summary)).dump(1));
}

TEST(ValidateCli, BadSamplesAreOneLineErrorsOrCountedWhenSkipped) {
  TempDir tmp;
  const auto data = make_dataset(tmp / "data", 64, ".npy");
  const auto labels = make_labels(tmp / "labels.txt", 64);
  auto run = [&](const std::string& extra) {
    return run_shell(std::string(PARITY_BINARY) + " validate " + demo() + " --dataset " + data.string() +
                     " --runners ref --save-summary " + (tmp / "s.json").string() + extra + " 2>&1");
  };
  auto error_lines = [](const std::string& output) {
    int n = 0;
    for (size_t at = output.find("[E] "); at != std::string::npos; at = output.find("[E] ", at + 1)) ++n;
    return n;
  };
  // A label file with fewer labels than samples.
  make_labels(tmp / "short.txt", 60);
  CommandResult r = run(" --labels " + (tmp / "short.txt").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "label file '" + (tmp / "short.txt").string() + "' has 60 labels for 64 samples")) << r.output;
  // An unreadable sample, a sample of the wrong shape, one of the wrong dtype: one at a time.
  std::mt19937 rng(5);
  const std::vector<std::pair<std::string, std::string>> bad{
      {"s010.npy", "not an array"},
      {"s020.npy", npy_to_bytes(random_input(rng, {1, 3, 16, 16}))},
      {"s030.npy", npy_to_bytes(random_input(rng).cast(DType::kFloat64))}};
  for (const auto& [file, contents] : bad) {
    const std::string before = read_file(data / file);
    write_file(data / file, contents);
    r = run("");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, (data / file).string())) << r.output;
    EXPECT_EQ(error_lines(r.output), 2) << r.output;  // the error and the FAILED line
    if (file == "s020.npy") {
      EXPECT_TRUE(contains(r.output, "shape")) << r.output;
    }
    if (file == "s030.npy") {
      EXPECT_TRUE(contains(r.output, "float64")) << r.output;
    }
    write_file(data / file, before);
  }
  write_file(data / "s010.npy", bad[0].second);
  write_file(data / "s020.npy", bad[1].second);
  r = run(" --skip-bad-samples --labels " + labels.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const Json s = read_json(tmp / "s.json");
  EXPECT_EQ(s["samples"]["skipped"], 2);
  EXPECT_EQ(s["samples"]["validated"], 62);
  EXPECT_EQ(s["skipped_samples"][0]["sample"], "s010.npy");
  EXPECT_EQ(s["skipped_samples"][1]["sample"], "s020.npy");
  EXPECT_EQ(s["accuracy"]["samples"], 62);
}

TEST(ValidateCli, ResumeContinuesFromTheCheckpoint) {
  TempDir tmp;
  const auto data = make_dataset(tmp / "data", 64);
  const auto labels = make_labels(tmp / "labels.txt", 64);
  const CommandResult clean = run_shell(std::string(PARITY_BINARY) + " " + validate_args(data, labels, tmp / "clean.json") + " 2>&1");
  ASSERT_EQ(clean.exit_code, 0) << clean.output;
  // Interrupted at sample 40 (unreadable for now), with checkpoints every 8 samples.
  fs::rename(data / "s040.npz", tmp / "s040.npz");
  write_file(data / "s040.npz", "truncated");
  const std::string args = validate_args(data, labels, tmp / "s.json") + " --checkpoint-every 8";
  CommandResult r = run_shell(std::string(PARITY_BINARY) + " " + args + " 2>&1");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_FALSE(read_json(tmp / "s.json")["complete"].get<bool>());
  EXPECT_EQ(read_json(tmp / "s.json")["samples"]["done"], 40);
  fs::rename(tmp / "s040.npz", data / "s040.npz");
  r = run_shell(std::string(PARITY_BINARY) + " " + args + " --resume 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Resuming: 40 of 64 samples done already")) << r.output;
  Json resumed = comparable(read_json(tmp / "s.json")), expected = comparable(read_json(tmp / "clean.json"));
  EXPECT_EQ(expected.dump(1), resumed.dump(1));
}

// The same samples as a folder of .npz files, an ONNX test-data folder and an inputs JSON give the
// same figures.
TEST(ValidateCli, TestDataFoldersAndInputsJsonAreDatasetsToo) {
  TempDir tmp;
  std::mt19937 rng(9);
  std::vector<TensorMap> feeds;
  for (int i = 0; i < 12; ++i) {
    feeds.push_back(TensorMap{{"input", random_input(rng)}});
    char name[32];
    std::snprintf(name, sizeof(name), "s%03d.npz", i);
    fs::create_directories(tmp / "npz");
    write_npz((tmp / "npz" / name).string(), feeds.back());
    const fs::path set = tmp / "testdata" / ("test_data_set_" + std::to_string(i));
    fs::create_directories(set);
    onnx::TensorProto proto;
    model::tensor_to_proto(feeds.back().at("input"), &proto, "input");
    write_file(set / "input_0.pb", proto.SerializeAsString());
  }
  write_inputs_json((tmp / "inputs.json").string(), feeds);
  std::vector<Json> comparisons;
  for (const auto& [dataset, kind] : {std::pair{tmp / "npz", "array folder"}, std::pair{tmp / "testdata", "onnx test data"},
                                      std::pair{tmp / "inputs.json", "inputs JSON"}}) {
    const auto summary = tmp / (std::string(kind) + ".json");
    const CommandResult r = run_shell(std::string(PARITY_BINARY) + " validate " + demo() + " --dataset " + dataset.string() +
                                      " --runners ref,ort --save-summary '" + summary.string() + "' 2>&1");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const Json s = read_json(summary);
    EXPECT_EQ(s["dataset"]["kind"], kind);
    EXPECT_EQ(s["samples"]["validated"], 12);
    Json figures = s["comparisons"][0]["outputs"][0];
    figures.erase("worst");  // names and rerun files differ by layout
    comparisons.push_back(figures);
  }
  EXPECT_EQ(comparisons[0].dump(1), comparisons[1].dump(1));
  EXPECT_EQ(comparisons[0].dump(1), comparisons[2].dump(1));
}

// A plan (fp16) as one more candidate, and stored reference outputs instead of a reference runner.
TEST(ValidateCli, PlansAndStoredReferenceOutputs) {
  TempDir tmp;
  const auto data = make_dataset(tmp / "data", 16);
  const std::string plan = (tmp / "demo16.plan").string();
  ASSERT_EQ(run_parity({"convert", demo(), "--fp16", "-o", plan}).exit_code, 0);
  auto validate = [&](const std::string& extra, const fs::path& summary) {
    return run_shell(std::string(PARITY_BINARY) + " validate " + demo() + " --dataset " + data.string() + extra +
                     " --save-summary " + summary.string() + " 2>&1");
  };
  CommandResult r = validate(" --runners ref --plan-file " + plan, tmp / "strict.json");
  EXPECT_EQ(r.exit_code, 1) << r.output;  // fp16 round-off exceeds the default 1e-5
  Json s = read_json(tmp / "strict.json");
  EXPECT_EQ(s["comparisons"][0]["candidate"], "plan-file");
  EXPECT_GT(s["comparisons"][0]["outputs"][0]["abs_error"]["max"].get<double>(), 1e-5);
  r = validate(" --runners ref --plan-file " + plan + " --fail-fast", tmp / "first.json");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(read_json(tmp / "first.json")["samples"]["done"], 1);
  EXPECT_FALSE(read_json(tmp / "first.json")["complete"].get<bool>());
  r = validate(" --runners ref --plan-file " + plan + " --compare indices", tmp / "indices.json");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "validate compares with the simple function")) << r.output;
  r = validate(" --runners ref --plan-file " + plan + " --atol 1e-2 --rtol 1e-2", tmp / "loose.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_json(tmp / "loose.json")["samples"]["passed"], 16);

  // ONNX test data with its own expected outputs (here: zeros, so every sample fails by the
  // model's own output values).
  for (int i = 0; i < 4; ++i) {
    const fs::path set = tmp / "testdata" / ("test_data_set_" + std::to_string(i));
    fs::create_directories(set);
    onnx::TensorProto in, out;
    std::mt19937 rng(i);
    model::tensor_to_proto(random_input(rng), &in, "input");
    model::tensor_to_proto(Tensor(DType::kFloat32, {1, 10}), &out, "probs");
    write_file(set / "input_0.pb", in.SerializeAsString());
    write_file(set / "output_0.pb", out.SerializeAsString());
  }
  r = run_shell(std::string(PARITY_BINARY) + " validate " + demo() + " --dataset " + (tmp / "testdata").string() +
                " --runners ref --reference-outputs dataset --save-summary " + (tmp / "stored.json").string() + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  s = read_json(tmp / "stored.json");
  EXPECT_EQ(s["comparisons"][0]["reference"], "stored");
  EXPECT_EQ(s["comparisons"][0]["outputs"][0]["samples_passed"], 0);
  EXPECT_TRUE(contains(s["comparisons"][0]["outputs"][0]["worst"][0]["rerun"].get<std::string>(), "--load-outputs"));
  // A folder of stored outputs must have one per sample.
  fs::create_directories(tmp / "outs");
  r = validate(" --runners ref --reference-outputs " + (tmp / "outs").string(), tmp / "x.json");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, (tmp / "outs" / "s000").string() + ".npz or .npy")) << r.output;
}

// A navigator package: its ONNX model, or one of its plans as the candidate, from a private copy.
TEST(ValidateCli, NavigatorPackages) {
  TempDir tmp;
  const auto data = make_dataset(tmp / "data", 8);
  const fs::path ws = tmp / "ws", nav = tmp / "demo.nav";
  ASSERT_EQ(run_parity({"optimize", demo(), "--workspace", ws.string(), "--target-formats", "onnx", "plan-fp16", "--runners",
                        "ref", "--sample-count", "2", "--window-ms", "10", "--max-trials", "3"})
                .exit_code,
            0);
  ASSERT_EQ(run_parity({"package", "save", ws.string(), "-o", nav.string()}).exit_code, 0);
  const CommandResult r = run_shell(std::string(PARITY_BINARY) + " validate " + nav.string() + " --nav-format plan-fp16 --dataset " +
                                    data.string() + " --runners ref --atol 1e-2 --rtol 1e-2 --save-summary " +
                                    (tmp / "s.json").string() + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json s = read_json(tmp / "s.json");
  EXPECT_EQ(s["model"], nav.string());
  EXPECT_EQ(s["settings"]["plan"], nav.string() + ":plan-fp16");
  EXPECT_EQ(s["comparisons"][0]["candidate"], "plan-fp16");
  EXPECT_GT(s["comparisons"][0]["outputs"][0]["abs_error"]["max"].get<double>(), 0.0);  // fp16 against fp32
  EXPECT_TRUE(contains(s["comparisons"][0]["outputs"][0]["worst"][0]["rerun"].get<std::string>(),
                       "parity package load " + nav.string()));
  const CommandResult bad = run_shell(std::string(PARITY_BINARY) + " validate " + nav.string() + " --nav-format plan-int8 --dataset " +
                                      data.string() + " 2>&1");
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
}

// Files holding many samples along a stated axis: the same figures as one file per sample.
TEST(ValidateCli, BatchedArraysAlongAStatedAxis) {
  TempDir tmp;
  std::mt19937 rng(21);
  fs::create_directories(tmp / "single");
  fs::create_directories(tmp / "batched");
  for (int f = 0; f < 3; ++f) {
    Tensor batch(DType::kFloat32, {5, 3, 32, 32});
    for (int j = 0; j < 5; ++j) {
      const Tensor x = random_input(rng);
      std::copy(x.values<float>().begin(), x.values<float>().end(), batch.data<float>() + j * 3072);
      char name[32];
      std::snprintf(name, sizeof(name), "s%d_%d.npy", f, j);
      std::ofstream((tmp / "single" / name).string(), std::ios::binary) << npy_to_bytes(x);
    }
    std::ofstream((tmp / "batched" / (std::string("b").append(std::to_string(f)).append(".npy"))).string(), std::ios::binary) << npy_to_bytes(batch);
  }
  std::vector<Json> outputs;
  for (const char* layout : {"single", "batched"}) {
    std::string command = std::string(PARITY_BINARY) + " validate " + demo() + " --dataset " + (tmp / layout).string() +
                          " --runners ref,ort --save-summary " + (tmp / layout).string() + ".json";
    if (std::string(layout) == "batched") command.append(" --batch-axis 0");
    const CommandResult r = run_shell(command.append(" 2>&1"));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const Json s = read_json(tmp.path() / (std::string(layout) + ".json"));
    EXPECT_EQ(s["samples"]["validated"], 15);
    Json o = s["comparisons"][0]["outputs"][0];
    if (std::string(layout) == "batched") {
      EXPECT_TRUE(contains(o["worst"][0]["sample"].get<std::string>(), ".npy["));
    }
    o.erase("worst");
    outputs.push_back(o);
  }
  EXPECT_EQ(outputs[0].dump(1), outputs[1].dump(1));
  const CommandResult bad = run_shell(std::string(PARITY_BINARY) + " validate " + demo() + " --dataset " +
                                      (tmp / "batched").string() + " --batch-axis 4 2>&1");
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(contains(bad.output, "has 4 axes, no --batch-axis 4")) << bad.output;
}

// A binary PPM of w x h pixels, a smooth gradient that differs per image.
std::string ppm(int w, int h, int seed) {
  std::string out = "P6\n" + std::to_string(w) + " " + std::to_string(h) + "\n255\n";
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) out += static_cast<char>((x * 5 + y * 3 + c * 70 + seed * 37) % 256);
  return out;
}

TEST(ValidateCli, ImageFoldersArePreprocessedAsAsked) {
  TempDir tmp;
  fs::create_directories(tmp / "images");
  for (int i = 0; i < 8; ++i) write_file(tmp / "images" / ("img" + std::to_string(i) + ".ppm"), ppm(40, 36, i));
  make_labels(tmp / "labels.txt", 8);
  const std::string base = std::string(PARITY_BINARY) + " validate " + demo() + " --dataset " + (tmp / "images").string() +
                           " --runners ref,ort --labels " + (tmp / "labels.txt").string() + " --top-k 5";
  // Without --resize the 36x40 images do not fit the model's 32x32 input: one line naming the image.
  CommandResult r = run_shell(base + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, (tmp / "images" / "img0.ppm").string())) << r.output;
  r = run_shell(base + " --resize 32x32 --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225 --channel-order BGR --save-summary " +
                (tmp / "s.json").string() + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Json s = read_json(tmp / "s.json");
  EXPECT_EQ(s["dataset"]["kind"], "image folder");
  EXPECT_EQ(s["samples"]["validated"], 8);
  EXPECT_EQ(s["accuracy"]["samples"], 8);
  // Worst samples that no file reproduces are saved beside the summary for their rerun commands.
  const std::string rerun = s["comparisons"][0]["outputs"][0]["worst"][0]["rerun"].get<std::string>();
  EXPECT_TRUE(contains(rerun, (tmp / "s.samples").string())) << rerun;
  EXPECT_TRUE(fs::exists(tmp / "s.samples" / (s["comparisons"][0]["outputs"][0]["worst"][0]["sample"].get<std::string>().substr(0, 4) + ".npz")));
  // Wrong counts of per-channel values are one-line errors.
  r = run_shell(base + " --resize 32x32 --mean 0.5,0.5 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--mean has 2 values for 3 channel(s)")) << r.output;
}

}  // namespace
}  // namespace parity::testing
