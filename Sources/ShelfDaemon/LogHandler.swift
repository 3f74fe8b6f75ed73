import Foundation
import Logging

/// One line per event on stderr. Under systemd (JOURNAL_STREAM set) each line starts with `<N>`, which
/// journald turns into the priority; elsewhere with a timestamp and the level's name.
package struct StderrLogHandler: LogHandler {
    package var logLevel: Logger.Level
    package var metadata: Logger.Metadata = [:]
    private let label: String
    private let journald: Bool

    package init(
        label: String, level: Logger.Level,
        journald: Bool = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
    ) {
        self.label = label; self.logLevel = level; self.journald = journald
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.quoted("\($0.value)"))" }.joined(
            separator: " ")
        let text = fields.isEmpty ? "\(event.message)" : "\(event.message) \(fields)"
        let line =
            journald
            ? "<\(Self.priority(event.level))>\(label): \(text)\n"
            : "\(Self.timestamp()) \(event.level.rawValue.uppercased()) \(label): \(text)\n"
        line.utf8CString.withUnsafeBufferPointer { _ = write(2, $0.baseAddress, $0.count - 1) } // one write per line
    }

    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    private static func quoted(_ value: String) -> String {
        value.contains(" ") || value.isEmpty ? "\"\(value.replacingOccurrences(of: "\"", with: "\\\""))\"" : value
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, now.tv_nsec / 1_000_000)
    }
}
