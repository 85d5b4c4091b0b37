// Log line formats beyond the logger's default (Polygraphy's --log-format).
#pragma once

namespace parity {

/// Prefixes every log line with the local time, "[I] (21:05:17) ...", as Polygraphy's
/// `--log-format timestamp` does. Process-wide, like the logger.
void set_log_timestamps(bool enabled);

}  // namespace parity
