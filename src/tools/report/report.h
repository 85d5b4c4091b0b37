// Reports: one document written as a self-contained HTML page (inline SVG charts, an inline
// script for the interactive parts, a strict Content-Security-Policy so the page cannot fetch
// anything) or as JSON with the same content, for CI dashboards. The content is JSON first: each
// command adds typed sections ("run", "layerwise", "bench", "conformance"), and the HTML page is
// rendered from them, so both files always say the same. New report kinds (debug, package status)
// register a renderer for their section type (register_section_renderer).
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace parity::tools::report {

using Json = nlohmann::ordered_json;

/// Output format, from the file name's extension.
enum class Format { kHtml, kJson };
/// FILE.html / FILE.htm -> HTML, FILE.json -> JSON; anything else is a kInvalidArgument error
/// naming `flag`. Also checks the folder exists, so a long run does not fail at its end.
Format check_report_path(const std::string& path, const std::string& flag = "--report");

class Report {
 public:
  /// `title` heads the page; `command` is the command line that made the report.
  Report(std::string title, std::string command);
  /// Adds a section: a JSON object with at least "type" (a registered renderer's name).
  void add_section(Json section);
  const Json& json() const { return doc_; }
  /// The self-contained HTML page.
  std::string html() const;
  /// Writes HTML or JSON by the path's extension (check_report_path).
  void write(const std::string& path) const;

 private:
  Json doc_;
};

/// Appends one section's HTML to `out`. `index` is the section's position (unique element ids).
using SectionRenderer = std::function<void(const Json& section, size_t index, std::string& out)>;
/// Registers the renderer of a section type; a later registration of the same type replaces it.
void register_section_renderer(const std::string& type, SectionRenderer renderer);

/// Shared HTML pieces for renderers.
namespace html {
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::string& css_class = "");
/// A pass/fail badge.
std::string verdict(bool passed);
/// JSON embedded in a <script type="application/json"> element, safe against "</script>".
std::string json_script(const std::string& id, const Json& data);
}  // namespace html

}  // namespace parity::tools::report
