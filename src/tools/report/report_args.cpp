#include "tools/report/report_args.h"

#include "tools/report/report.h"

namespace parity::tools::report {

ReportArgs::ReportArgs(std::string what, bool per_channel_option) {
  section("Report");
  add({.flags = {"--report"},
       .help = "Write a report: FILE.html, one self-contained page with charts (" + what +
               "; opens offline), or FILE.json with the same content",
       .metavar = "FILE"},
      [](ReportOptions& o, const options::Given& given) {
        o.path = given.value();
        if (o.path) check_report_path(*o.path);
      });
  if (per_channel_option)
    add({.flags = {"--report-per-channel"},
         .help = "In the report, one error heatmap per channel (axis -3) instead of one over all channels",
         .arity = options::Arity::kFlag},
        options::field(&ReportOptions::per_channel));
}

}  // namespace parity::tools::report
