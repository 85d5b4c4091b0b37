#include "tools/report/report.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/formats/file_io.h"
#include "core/status.h"
#include "core/version.h"
#include "tools/report/svg.h"

namespace parity::tools::report {
namespace {

std::map<std::string, SectionRenderer>& renderers() {
  static std::map<std::string, SectionRenderer> r;
  return r;
}
std::mutex& renderers_mutex() {
  static std::mutex m;
  return m;
}

// No fetch of any kind is allowed: the page must open offline, from a mail attachment, and a test
// checks it made no request. Inline styles and scripts are the page's own.
constexpr const char* kCsp =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

constexpr const char* kStyle = R"(
body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}
code,.cmd{font-family:monospace;background:#f4f4f4;padding:2px 4px;word-break:break-all}
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
th{background:#f4f4f4}td.num{text-align:right;font-family:monospace}
.pass{color:#fff;background:#2ca02c;padding:1px 6px;border-radius:3px}
.fail{color:#fff;background:#d62728;padding:1px 6px;border-radius:3px}
.charts{display:flex;flex-wrap:wrap;gap:16px}.charts figure{margin:0}
figcaption{font-size:12px;color:#555}
.detail{background:#f8f8f8;border:1px solid #ddd;padding:8px;min-height:40px;font-size:13px}
svg.chart{max-width:100%;height:auto}
rect.hit:hover{fill:rgba(0,0,0,0.06)}rect.hit.selected{fill:rgba(214,39,40,0.12)}
)";

std::string html_page(const Json& doc) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"" + std::string(kCsp) + "\">\n";
  out += "<title>" + svg::escape(doc.value("title", "parity report")) + "</title><style>" + kStyle + "</style></head><body>\n";
  out += "<h1>" + svg::escape(doc.value("title", "parity report")) + "</h1>\n";
  out += "<p>Command: <span class=\"cmd\">" + svg::escape(doc.value("command", "")) + "</span><br>parity " +
         svg::escape(doc.value("parity_version", "")) + " | " + svg::escape(doc.value("created", "")) + "</p>\n";
  const auto& sections = doc["sections"];
  for (size_t i = 0; i < sections.size(); ++i) {
    const std::string type = sections[i].value("type", "");
    SectionRenderer renderer;
    {
      std::lock_guard<std::mutex> lock(renderers_mutex());
      auto it = renderers().find(type);
      PARITY_ASSERT(it != renderers().end(), "report section type '" + type + "' has no HTML renderer");
      renderer = it->second;
    }
    out += "<section data-type=\"" + svg::escape(type) + "\">\n";
    renderer(sections[i], i, out);
    out += "</section>\n";
  }
  return out + "</body></html>\n";
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace

Format check_report_path(const std::string& path, const std::string& flag) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  PARITY_CHECK(ext == ".html" || ext == ".htm" || ext == ".json", kInvalidArgument, flag, " '", path,
               "': the file name must end in .html (a page with charts) or .json (the same content as JSON)");
  formats::check_writable_location(path);
  return ext == ".json" ? Format::kJson : Format::kHtml;
}

Report::Report(std::string title, std::string command) {
  doc_["parity_report"] = 1;
  doc_["title"] = std::move(title);
  doc_["command"] = std::move(command);
  doc_["parity_version"] = kParityVersion;
  doc_["created"] = now_utc();
  doc_["sections"] = Json::array();
}

void Report::add_section(Json section) {
  PARITY_ASSERT(section.contains("type"), "a report section needs a type");
  doc_["sections"].push_back(std::move(section));
}

std::string Report::html() const { return html_page(doc_); }

void Report::write(const std::string& path) const {
  const Format format = check_report_path(path);
  // NaN and inf are not JSON: dump() writes them as null, which the renderers read as "none".
  // Names from files (a package's formats, a model's tensors) need not be UTF-8: invalid bytes
  // become U+FFFD rather than an exception.
  formats::write_binary_file(
      path, format == Format::kJson ? doc_.dump(2, ' ', false, Json::error_handler_t::replace) + "\n" : html());
}

void register_section_renderer(const std::string& type, SectionRenderer renderer) {
  std::lock_guard<std::mutex> lock(renderers_mutex());
  renderers()[type] = std::move(renderer);
}

namespace html {

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::string& css_class) {
  std::string out = "<table" + (css_class.empty() ? "" : " class=\"" + css_class + "\"") + "><tr>";
  for (const auto& h : header) out += "<th>" + svg::escape(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    // Cells are HTML (the caller escapes text); figures are right-aligned.
    for (const auto& cell : row) {
      const bool figure = !cell.empty() && (std::isdigit(static_cast<unsigned char>(cell[0])) || cell[0] == '-' ||
                                            cell[0] == '.' || cell == "nan" || cell == "inf");
      out += (figure ? "<td class=\"num\">" : "<td>") + cell + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string verdict(bool passed) { return passed ? "<span class=\"pass\">PASSED</span>" : "<span class=\"fail\">FAILED</span>"; }

std::string json_script(const std::string& id, const Json& data) {
  std::string text = data.dump(-1, ' ', false, Json::error_handler_t::replace);
  // "</" would end the script element early; "<\/" means the same to JSON.parse.
  for (size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3)) text.replace(at, 2, "<\\/");
  return "<script type=\"application/json\" id=\"" + id + "\">" + text + "</script>\n";
}

}  // namespace html
}  // namespace parity::tools::report
