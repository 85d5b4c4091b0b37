// Unit tests for the text kernels: StringNormalizer, TfIdfVectorizer.
#include "runtime/ops/tensor_test_util.h"

namespace parity::testing {
namespace {

TEST(StringNormalizer, StopwordsAndCaseChanges) {
  OpTester("StringNormalizer", 10).attr("case_change_action", "UPPER").attr_strings("stopwords", {"monday"})
      .input(str({1, 4}, {"Monday", "tuesday", "MONDAY", "x"})).output(str({1, 2}, {"TUESDAY", "X"})).run();
  OpTester("StringNormalizer", 10).attr("case_change_action", "LOWER").attr("is_case_sensitive", 1)
      .attr_strings("stopwords", {"monday"}).input(str({3}, {"Monday", "monday", "ABC"}))
      .output(str({2}, {"monday", "abc"})).run();
  OpTester("StringNormalizer", 10).input(str({2}, {"Keep", "AS is"})).output(str({2}, {"Keep", "AS is"})).run();
}

TEST(StringNormalizer, EverythingRemovedGivesOneEmptyString) {
  OpTester("StringNormalizer", 10).attr_strings("stopwords", {"a"}).input(str({2}, {"a", "A"})).output(str({1}, {""})).run();
  OpTester("StringNormalizer", 10).attr_strings("stopwords", {"a"}).input(str({1, 1}, {"a"})).output(str({1, 1}, {""})).run();
  OpTester("StringNormalizer", 10).input(str({0}, {})).output(str({1}, {""})).run();
}

TEST(StringNormalizer, BadInputsFail) {
  expect_node_error(OpTester("StringNormalizer", 10).input(str({2, 2}, {"a", "b", "c", "d"})), ErrorCode::kRuntime, "shape");
  expect_node_error(OpTester("StringNormalizer", 10).input(f32({1}, {1})), ErrorCode::kRuntime, "string");
  expect_node_error(OpTester("StringNormalizer", 10).attr("case_change_action", "LOWER").input(str({1}, {"\xff"})),
                    ErrorCode::kRuntime, "UTF-8");
  expect_node_error(OpTester("StringNormalizer", 10).attr("case_change_action", "TITLE").input(str({1}, {"a"})),
                    ErrorCode::kInvalidModel, "case_change_action");
}

OpTester string_tfidf(const std::string& mode) {
  OpTester t("TfIdfVectorizer", 9);
  // Unigrams "a", "b" (outputs 0, 1) and the bigram "a b" (output 2).
  t.attr("mode", mode).attr("min_gram_length", 1).attr("max_gram_length", 2).attr("max_skip_count", 0)
      .attr_ints("ngram_counts", {0, 2}).attr_ints("ngram_indexes", {0, 1, 2})
      .attr_strings("pool_strings", {"a", "b", "a", "b"});
  return t;
}

TEST(TfIdfVectorizer, StringPoolAndWeightModes) {
  string_tfidf("TF").input(str({4}, {"a", "b", "a", "c"})).output(f32({3}, {2, 1, 1})).run();
  string_tfidf("TFIDF").attr_floats("weights", {0.5f, 2, 3}).input(str({4}, {"a", "b", "a", "c"}))
      .output(f32({3}, {1, 2, 3})).run();
  string_tfidf("IDF").attr_floats("weights", {0.5f, 2, 3}).input(str({2, 2}, {"a", "b", "c", "c"}))
      .output(f32({2, 3}, {0.5f, 2, 3, 0, 0, 0})).run();
}

TEST(TfIdfVectorizer, SkipsCountEachBigramOnce) {
  // Bigram (1, 3) occurs with skip 1 at positions 0 and 2; skip 0 never forms it.
  OpTester("TfIdfVectorizer", 9).attr("mode", "TF").attr("min_gram_length", 2).attr("max_gram_length", 2)
      .attr("max_skip_count", 2).attr_ints("ngram_counts", {0, 0}).attr_ints("ngram_indexes", {0})
      .attr_ints("pool_int64s", {1, 3}).input(i64({4}, {1, 2, 3, 4})).output(f32({1}, {1})).run();
}

TEST(TfIdfVectorizer, BadAttributesAndInputsFail) {
  expect_node_error(OpTester("TfIdfVectorizer", 9).attr("mode", "TF").attr("min_gram_length", 1).attr("max_gram_length", 2)
                        .attr("max_skip_count", 0).attr_ints("ngram_counts", {0, 1}).attr_ints("ngram_indexes", {0, 1})
                        .attr_ints("pool_int64s", {1, 2}).input(i64({1}, {1})),
                    ErrorCode::kInvalidModel, "ngram_counts");
  expect_node_error(string_tfidf("TF").input(i64({1}, {1})), ErrorCode::kRuntime, "strings");
  expect_node_error(string_tfidf("BM25").input(str({1}, {"a"})), ErrorCode::kInvalidModel, "mode");
}

}  // namespace
}  // namespace parity::testing
