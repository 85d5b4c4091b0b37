#include "tools/report/svg.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/stats.h"
#include "core/text.h"

namespace parity::tools::report::svg {
namespace {

constexpr double kWidth = 960;
constexpr double kLeft = 72, kRight = 16, kTop = 16, kBottom = 44;
constexpr const char* kAxisColor = "#555";
constexpr const char* kToleranceColor = "#d62728";
constexpr const char* kStartColor = "#9467bd";
constexpr size_t kMaxDots = 300;

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string svg_open(double width, double height, const std::string& kind) {
  return "<svg class=\"chart\" data-kind=\"" + kind + "\" width=\"" + fmt(width) +
         "\" height=\"" + fmt(height) + "\" viewBox=\"0 0 " + fmt(width) + " " + fmt(height) + "\" font-family=\"sans-serif\" "
         "font-size=\"11\">";
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle", const std::string& extra = "") {
  return "<text x=\"" + fmt(x) + "\" y=\"" + fmt(y) + "\" text-anchor=\"" + anchor + "\"" + extra + ">" + escape(s) +
         "</text>";
}

std::string line(double x1, double y1, double x2, double y2, const std::string& stroke, const std::string& extra = "") {
  return "<line x1=\"" + fmt(x1) + "\" y1=\"" + fmt(y1) + "\" x2=\"" + fmt(x2) + "\" y2=\"" + fmt(y2) + "\" stroke=\"" +
         stroke + "\"" + extra + "/>";
}

// Pixels under a log axis's lowest decade where exact zeros are drawn (a log axis has no 0).
constexpr double kZeroBand = 14;

// A log10 axis over [lo, hi] (powers of ten) mapped onto pixels [bottom, top]; zeros sit
// kZeroBand below `bottom`.
struct LogAxis {
  double lo_exp = -8, hi_exp = 0;
  double bottom = 0, top = 0;
  double y(double v) const {
    if (!(v > 0)) return bottom + kZeroBand;
    const double e = std::clamp(std::log10(v), lo_exp, hi_exp);
    return bottom - (e - lo_exp) / (hi_exp - lo_exp) * (bottom - top);
  }
};

LogAxis log_axis_for(const std::vector<double>& values, double bottom, double top) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (double v : values)
    if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  LogAxis axis;
  axis.bottom = bottom;
  axis.top = top;
  if (hi > 0) {
    axis.lo_exp = std::floor(std::log10(lo));
    axis.hi_exp = std::max(std::ceil(std::log10(hi)), axis.lo_exp + 1);
  }
  return axis;
}

std::string log_ticks(const LogAxis& axis, double left, double right) {
  std::string out = text(left - 4, axis.bottom + kZeroBand + 4, "0", "end");
  const int step = std::max(1, static_cast<int>((axis.hi_exp - axis.lo_exp) / 8));
  for (double e = axis.lo_exp; e <= axis.hi_exp; e += step) {
    const double y = axis.y(std::pow(10.0, e));
    out += line(left, y, right, y, "#e4e4e4");
    out += text(left - 4, y + 4, "1e" + std::to_string(static_cast<int>(e)), "end");
  }
  return out;
}

// Linear "nice" tick step for [0, hi].
double nice_step(double hi, int target) {
  if (!(hi > 0)) return 1;
  const double raw = hi / target;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

// Viridis-like colour ramp, t in [0, 1].
std::string ramp(double t) {
  static constexpr double kStops[][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(std::isfinite(t) ? t : 1.0, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(kStops[i][0] + f * (kStops[i + 1][0] - kStops[i][0])),
                static_cast<int>(kStops[i][1] + f * (kStops[i + 1][1] - kStops[i][1])),
                static_cast<int>(kStops[i][2] + f * (kStops[i + 1][2] - kStops[i][2])));
  return buf;
}

}  // namespace

std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string number(double value) { return format_g(value, 5); }

std::string layer_chart(const LayerChart& chart) {
  const double height = 320, bottom = height - kBottom, right = kWidth - kRight;
  const size_t n = chart.labels.size();
  std::vector<double> all = chart.tolerance;
  for (const auto& s : chart.series) all.insert(all.end(), s.values.begin(), s.values.end());
  const LogAxis axis = log_axis_for(all, bottom - kZeroBand, kTop);
  const double step = n ? (right - kLeft) / static_cast<double>(n) : 1;
  auto x = [&](size_t i) { return kLeft + (static_cast<double>(i) + 0.5) * step; };

  std::string out = svg_open(kWidth, height, chart.kind);
  out += log_ticks(axis, kLeft, right);
  out += line(kLeft, bottom, right, bottom, kAxisColor) + line(kLeft, kTop, kLeft, bottom, kAxisColor);
  out += text((kLeft + right) / 2, height - 8, chart.x_label.empty() ? "layer (execution order), " + std::to_string(n) + " tensors" : chart.x_label);
  out += text(14, (kTop + bottom) / 2, chart.y_label, "middle", " transform=\"rotate(-90 14 " + fmt((kTop + bottom) / 2) + ")\"");
  // Clickable columns under the marks, so a layer is easy to hit even when hundreds share the width.
  for (size_t i = 0; i < n; ++i)
    out += "<rect class=\"hit\" data-chart=\"" + chart.chart_id + "\" data-layer=\"" + std::to_string(i) + "\" x=\"" +
           fmt(x(i) - step / 2) + "\" y=\"" + fmt(kTop) + "\" width=\"" + fmt(std::max(step, 0.5)) + "\" height=\"" +
           fmt(bottom - kTop) + "\" fill=\"transparent\"><title>" + std::to_string(i) + ": " + escape(chart.labels[i]) +
           "</title></rect>";
  if (!chart.tolerance.empty()) {
    std::string points;
    for (size_t i = 0; i < n && i < chart.tolerance.size(); ++i)
      points += fmt(x(i) - step / 2) + "," + fmt(axis.y(chart.tolerance[i])) + " " + fmt(x(i) + step / 2) + "," +
                fmt(axis.y(chart.tolerance[i])) + " ";
    out += "<polyline class=\"tolerance\" points=\"" + points + "\" fill=\"none\" stroke=\"" + kToleranceColor +
           "\" stroke-dasharray=\"5 3\" pointer-events=\"none\"/>";
  }
  if (chart.marked && *chart.marked < n) {
    const double mx = x(*chart.marked);
    out += line(mx, kTop, mx, bottom, kToleranceColor, " class=\"divergence\" stroke-width=\"1.5\" pointer-events=\"none\"");
    out += text(std::min(mx + 4, right - 4), kTop + 12, "first divergence: " + chart.labels[*chart.marked],
                mx > kWidth * 0.6 ? "end" : "start", " fill=\"" + std::string(kToleranceColor) + "\"");
  }
  // Where the divergence starts, when it is not the first failing layer itself: a dotted line.
  if (chart.start && *chart.start < n && chart.start != chart.marked) {
    const double sx = x(*chart.start);
    out += line(sx, kTop, sx, bottom, kStartColor,
                " class=\"divergence-start\" stroke-width=\"1.5\" stroke-dasharray=\"2 2\" pointer-events=\"none\"");
    out += text(std::min(sx + 4, right - 4), kTop + 26, "divergence starts: " + chart.labels[*chart.start],
                sx > kWidth * 0.6 ? "end" : "start", " fill=\"" + std::string(kStartColor) + "\"");
  } else if (chart.start && *chart.start < n) {
    out += text(std::min(x(*chart.start) + 4, right - 4), kTop + 26, "(the divergence starts here)",
                x(*chart.start) > kWidth * 0.6 ? "end" : "start", " class=\"divergence-start\" fill=\"" +
                std::string(kStartColor) + "\"");
  }
  const double radius = n > 300 ? 1.6 : n > 100 ? 2.2 : 3;
  for (const auto& s : chart.series) {
    // The line joins non-zero errors only: exact zeros (marks on the bottom edge) would drag it down
    // to the axis and hide the trend.
    std::string points;
    for (size_t i = 0; i < n && i < s.values.size(); ++i)
      if (s.values[i] > 0) points += fmt(x(i)) + "," + fmt(axis.y(s.values[i])) + " ";
    out += "<polyline points=\"" + points + "\" fill=\"none\" stroke=\"" + s.color +
           "\" stroke-opacity=\"0.5\" pointer-events=\"none\"/>";
    for (size_t i = 0; i < n && i < s.values.size(); ++i) {
      if (std::isnan(s.values[i])) continue;
      out += "<circle class=\"mark\" data-series=\"" + escape(s.name) + "\" cx=\"" + fmt(x(i)) + "\" cy=\"" +
             fmt(axis.y(s.values[i])) + "\" r=\"" + fmt(radius) + "\" fill=\"" + s.color +
             "\" pointer-events=\"none\"/>";
    }
  }
  // Legend.
  double lx = kLeft + 8;
  for (const auto& s : chart.series) {
    out += "<rect x=\"" + fmt(lx) + "\" y=\"" + fmt(bottom - 16) + "\" width=\"10\" height=\"10\" fill=\"" + s.color + "\"/>";
    out += text(lx + 14, bottom - 7, s.name, "start");
    lx += 20 + 7.0 * static_cast<double>(s.name.size());
  }
  if (!chart.tolerance.empty()) {
    out += line(lx, bottom - 11, lx + 14, bottom - 11, kToleranceColor, " stroke-dasharray=\"5 3\"");
    out += text(lx + 18, bottom - 7, "tolerance", "start");
  }
  return out + "</svg>";
}

std::string histogram(const Histogram& h) {
  const double width = 440, height = 220, bottom = height - kBottom, left = 56, right = width - 8;
  std::vector<std::pair<std::string, int64_t>> bars;
  if (h.zeros) bars.emplace_back("0", h.zeros);
  for (size_t i = 0; i < h.counts.size(); ++i) bars.emplace_back(number(h.edges[i]) + " to " + number(h.edges[i + 1]), h.counts[i]);
  if (h.nonfinite) bars.emplace_back("NaN/inf", h.nonfinite);
  int64_t top_count = 1;
  for (const auto& b : bars) top_count = std::max(top_count, b.second);
  const double step = bars.empty() ? 1 : (right - left) / static_cast<double>(bars.size());
  std::string out = svg_open(width, height, "histogram");
  const double tick = nice_step(static_cast<double>(top_count), 4);
  for (double c = 0; c <= top_count; c += tick) {
    const double y = bottom - c / static_cast<double>(top_count) * (bottom - kTop);
    out += line(left, y, right, y, "#e4e4e4") + text(left - 4, y + 4, number(c), "end");
  }
  for (size_t i = 0; i < bars.size(); ++i) {
    const double bh = static_cast<double>(bars[i].second) / static_cast<double>(top_count) * (bottom - kTop);
    const bool special = (h.zeros && i == 0) || (h.nonfinite && i + 1 == bars.size());
    out += "<rect class=\"mark\" x=\"" + fmt(left + i * step + 0.5) + "\" y=\"" + fmt(bottom - bh) + "\" width=\"" +
           fmt(std::max(step - 1, 0.5)) + "\" height=\"" + fmt(bh) + "\" fill=\"" + (special ? "#999" : "#4c78a8") +
           "\"><title>" + escape(bars[i].first) + ": " + std::to_string(bars[i].second) + "</title></rect>";
  }
  out += line(left, bottom, right, bottom, kAxisColor);
  // Edge labels at the first, middle and last bins; the bars of zeros and NaN/inf are labelled on top.
  if (!h.counts.empty()) {
    const size_t offset = h.zeros ? 1 : 0;
    const size_t n = h.counts.size();
    out += text(left + offset * step, bottom + 14, number(h.edges[0]), "start");
    if (n >= 4) out += text(left + (n / 2 + offset) * step, bottom + 14, number(h.edges[n / 2]));
    out += text(left + (n + offset) * step, bottom + 14, number(h.edges[n]), "end");
  }
  const double label_y = kTop - 3;
  if (h.zeros) out += text(left + step / 2, label_y + 12, "=0", "middle", " fill=\"#555\"");
  if (h.nonfinite) out += text(right - step / 2, label_y + 12, "NaN/inf", "end", " fill=\"#555\"");
  if (h.threshold && h.counts.size() && *h.threshold > h.edges.front() && *h.threshold < h.edges.back()) {
    // Position within the bins, logarithmic when the bins are.
    size_t i = 0;
    while (i + 1 < h.counts.size() && h.edges[i + 1] < *h.threshold) ++i;
    const double lo = h.edges[i], hi = h.edges[i + 1];
    const double f = h.log_x ? std::log(*h.threshold / lo) / std::log(hi / lo) : (*h.threshold - lo) / (hi - lo);
    const double tx = left + (static_cast<double>(i + (h.zeros ? 1 : 0)) + f) * step;
    out += line(tx, kTop, tx, bottom, kToleranceColor, " stroke-dasharray=\"5 3\" class=\"tolerance\"");
    out += text(tx + 3, kTop + 10, "tolerance", "start", " fill=\"" + std::string(kToleranceColor) + "\"");
  }
  out += text((left + right) / 2, height - 10, h.x_label);
  return out + "</svg>";
}

std::string heatmap(const Heatmap& h) {
  const double cell = std::clamp(std::floor(420.0 / static_cast<double>(std::max(h.rows, h.cols))), 1.0, 24.0);
  const double width = h.cols * cell + 70, height = h.rows * cell + 34;
  double top = 0;
  for (double v : h.values)
    if (std::isfinite(v)) top = std::max(top, v);
  std::string out = svg_open(std::max(width, 160.0), height, "heatmap");
  for (int64_t r = 0; r < h.rows; ++r)
    for (int64_t c = 0; c < h.cols; ++c) {
      const double v = h.values[static_cast<size_t>(r * h.cols + c)];
      out += "<rect class=\"mark\" x=\"" + fmt(c * cell) + "\" y=\"" + fmt(r * cell) + "\" width=\"" + fmt(cell) +
             "\" height=\"" + fmt(cell) + "\" fill=\"" + ramp(top > 0 ? v / top : 0) + "\"/>";
    }
  // Colour bar.
  const double bx = h.cols * cell + 10;
  for (int i = 0; i < 20; ++i)
    out += "<rect x=\"" + fmt(bx) + "\" y=\"" + fmt(h.rows * cell * (19 - i) / 20.0) + "\" width=\"10\" height=\"" +
           fmt(h.rows * cell / 20.0 + 0.5) + "\" fill=\"" + ramp(i / 19.0) + "\"/>";
  out += text(bx + 14, 10, number(top), "start") + text(bx + 14, h.rows * cell, "0", "start");
  out += text(0, h.rows * cell + 16, h.label, "start");
  return out + "</svg>";
}

std::string distributions(const std::vector<Distribution>& groups, const std::string& y_label) {
  const double height = 300, bottom = height - kBottom - 14;
  const double slot = std::clamp((kWidth - kLeft - kRight) / std::max<double>(1, groups.size()), 40.0, 140.0);
  const double width = kLeft + slot * groups.size() + kRight;
  // The axis ends above every group's 99th percentile: one stall of a millisecond must not flatten
  // the distributions; samples beyond it sit on the top edge (their tooltips keep the value).
  double top = 0;
  for (const auto& g : groups) {
    std::vector<double> s = g.samples;
    std::sort(s.begin(), s.end());
    if (!s.empty()) top = std::max(top, s[std::min(s.size() - 1, static_cast<size_t>(0.99 * static_cast<double>(s.size())))]);
  }
  top = top > 0 ? top * 1.15 : 1;
  auto y = [&](double v) { return bottom - std::min(v, top) / top * (bottom - kTop); };
  std::string out = svg_open(std::max(width, 300.0), height, "distributions");
  const double tick = nice_step(top, 5);
  for (double v = 0; v <= top; v += tick) out += line(kLeft, y(v), width - kRight, y(v), "#e4e4e4") + text(kLeft - 4, y(v) + 4, number(v), "end");
  out += text(14, (kTop + bottom) / 2, y_label, "middle", " transform=\"rotate(-90 14 " + fmt((kTop + bottom) / 2) + ")\"");
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<double> s = groups[g].samples;
    std::sort(s.begin(), s.end());
    const double cx = kLeft + slot * (g + 0.5);
    const std::string& color = groups[g].color;
    if (!s.empty()) {
      const double q1 = s[s.size() / 4], med = s[s.size() / 2], q3 = s[s.size() * 3 / 4];
      out += line(cx, y(s.front()), cx, y(s.back()), color);
      out += "<rect x=\"" + fmt(cx - slot * 0.25) + "\" y=\"" + fmt(y(q3)) + "\" width=\"" + fmt(slot * 0.5) + "\" height=\"" +
             fmt(std::max(1.0, y(q1) - y(q3))) + "\" fill=\"" + color + "\" fill-opacity=\"0.25\" stroke=\"" + color + "\"/>";
      out += line(cx - slot * 0.25, y(med), cx + slot * 0.25, y(med), color, " stroke-width=\"2\"");
      // At most kMaxDots dots, evenly spread over the sorted samples (the box uses them all).
      const size_t stride = (s.size() + kMaxDots - 1) / kMaxDots;
      for (size_t i = 0; i < s.size(); i += stride) {
        // Deterministic jitter so equal samples stay visible side by side.
        const double jx = cx + slot * 0.3 * (std::fmod(i * 0.618034, 1.0) - 0.5);
        out += "<circle class=\"mark\" cx=\"" + fmt(jx) + "\" cy=\"" + fmt(y(s[i])) + "\" r=\"1.8\" fill=\"" + color +
               "\" fill-opacity=\"0.7\"><title>" + number(s[i]) + "</title></circle>";
      }
      out += text(cx, bottom + 28, "median " + number(med));
    }
    out += text(cx, bottom + 14, groups[g].label);
  }
  out += line(kLeft, bottom, width - kRight, bottom, kAxisColor);
  return out + "</svg>";
}

std::string stacked_bars(const std::vector<std::string>& categories, const std::vector<std::string>& colors,
                         const std::vector<StackedRow>& rows) {
  const double row_h = 18, left = 150, right = kWidth - 60;
  const double height = kTop + row_h * rows.size() + 30;
  int64_t top = 1;
  for (const auto& r : rows) {
    int64_t total = 0;
    for (int64_t c : r.counts) total += c;
    top = std::max(top, total);
  }
  std::string out = svg_open(kWidth, height, "stacked");
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = kTop + i * row_h;
    out += text(left - 6, y + 12, rows[i].label, "end");
    double x = left;
    int64_t total = 0;
    for (size_t c = 0; c < rows[i].counts.size() && c < categories.size(); ++c) {
      const int64_t count = rows[i].counts[c];
      total += count;
      if (count == 0) continue;
      const double w = static_cast<double>(count) / static_cast<double>(top) * (right - left);
      out += "<rect class=\"mark\" data-category=\"" + escape(categories[c]) + "\" x=\"" + fmt(x) + "\" y=\"" + fmt(y + 2) +
             "\" width=\"" + fmt(w) + "\" height=\"" + fmt(row_h - 4) + "\" fill=\"" + colors[c] + "\"><title>" +
             escape(rows[i].label) + ": " + std::to_string(count) + " " + escape(categories[c]) + "</title></rect>";
      x += w;
    }
    out += text(x + 4, y + 12, std::to_string(total), "start");
  }
  double lx = left;
  const double ly = kTop + rows.size() * row_h + 10;
  for (size_t c = 0; c < categories.size(); ++c) {
    out += "<rect x=\"" + fmt(lx) + "\" y=\"" + fmt(ly) + "\" width=\"10\" height=\"10\" fill=\"" + colors[c] + "\"/>";
    out += text(lx + 14, ly + 9, categories[c], "start");
    lx += 24 + 7.0 * static_cast<double>(categories[c].size());
  }
  return out + "</svg>";
}

}  // namespace parity::tools::report::svg
