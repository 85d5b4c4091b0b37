#include "tools/report/report_args.h"

#include "tools/report/report.h"

namespace parity::tools::report {

void ReportArgs::add_to(options::ArgParser& parser) const {
  parser.group("Report");
  parser.add({.flags = {"--report"},
              .help = "Write a report: FILE.html, one self-contained page with charts (" + what_ +
                      "; opens offline), or FILE.json with the same content",
              .metavar = "FILE"});
  if (per_channel_option_)
    parser.add({.flags = {"--report-per-channel"},
                .help = "In the report, one error heatmap per channel (axis -3) instead of one over all channels",
                .arity = options::Arity::kFlag});
}

ReportOptions ReportArgs::parse(const options::Args& args) const {
  ReportOptions o;
  o.path = args.get("report");
  if (o.path) check_report_path(*o.path);
  o.per_channel = per_channel_option_ && args.flag("report_per_channel");
  return o;
}

}  // namespace parity::tools::report
