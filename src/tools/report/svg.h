// Hand-made inline SVG charts for parity's HTML reports. Each chart is a self-contained <svg>
// string: no scripts, fonts or external references, so a report opens from a mail attachment
// under a Content-Security-Policy that forbids every fetch. Every drawn datum carries
// class="mark" (tests count them) and a <title> tooltip with its figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parity::tools::report::svg {

/// One line of a per-layer chart.
struct Series {
  std::string name;
  std::vector<double> values;  // one per label; NaN = no value (not compared)
  std::string color;
};

/// Values per layer in execution order on a log axis, with a tolerance line and one layer marked.
struct LayerChart {
  std::vector<std::string> labels;       // tensor names (tooltips)
  std::vector<Series> series;            // e.g. max and mean error
  std::vector<double> tolerance;         // per layer (a step line); empty = none
  std::optional<size_t> marked;          // the first divergence
  std::optional<size_t> start;           // where the divergence starts (its inputs agree)
  std::string y_label;
  std::string chart_id;                  // marks carry data-chart=<id> data-layer=<index>
  std::string x_label;                   // empty: "layer (execution order), N tensors"
  std::string kind = "layers";           // the <svg>'s data-kind
};
std::string layer_chart(const LayerChart& chart);

/// A histogram; bins are drawn evenly, labelled with their edges.
struct Histogram {
  std::vector<double> edges;      // counts.size() + 1
  std::vector<int64_t> counts;
  int64_t zeros = 0;              // exact zeros (a bar of their own on a log axis)
  int64_t nonfinite = 0;          // NaN/inf (a bar of their own)
  bool log_x = false;             // edges are powers of ten apart
  std::string x_label;
  std::optional<double> threshold;  // tolerance, drawn as a vertical line
};
std::string histogram(const Histogram& h);

/// A heatmap of rows x cols values (row-major), colour = value on a linear scale from 0 to the max.
struct Heatmap {
  int64_t rows = 0, cols = 0;
  std::vector<double> values;
  std::string label;  // caption
};
std::string heatmap(const Heatmap& h);

/// Distributions side by side (latency samples): box from p25 to p75, median line, whiskers at
/// min/max, each sample a dot.
struct Distribution {
  std::string label;
  std::vector<double> samples;
  std::string color;
};
std::string distributions(const std::vector<Distribution>& groups, const std::string& y_label);

/// Horizontal stacked bars (pass/fail/error/skip per operator family).
struct StackedRow {
  std::string label;
  std::vector<int64_t> counts;  // one per category
};
std::string stacked_bars(const std::vector<std::string>& categories, const std::vector<std::string>& colors,
                         const std::vector<StackedRow>& rows);

/// XML/HTML text escaping.
std::string escape(const std::string& text);
/// A number for people: 5 significant digits.
std::string number(double value);

}  // namespace parity::tools::report::svg
