import Foundation
/// CSV and TSV as the reading apps write them: UTF-8 without a byte-order mark, rows ending in LF (what the
/// Goodreads, StoryGraph and Libib exports themselves use), a header row first.
/// Hand-written: TSV here is unquoted (tabs and breaks become spaces), which CSV libraries' writers do not do.
package enum DelimitedText {
    package enum Separator: Sendable {
        /// RFC 4180 quoting: a field holding a comma, a quote or a line break is quoted, its quotes doubled.
        case comma
        /// TSV has no quoting: a tab or line break inside a field becomes a space, quotes stay as they are.
        case tab

        package func text(_ rows: [[String]]) -> String {
            var out = ""
            for row in rows {
                out += row.map(field).joined(separator: self == .comma ? "," : "\t")
                out += "\n"
            }
            return out
        }

        private func field(_ value: String) -> String {
            switch self {
            case .comma:
                guard value.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return value }
                return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            case .tab:
                return String(value.map { $0 == "\t" || $0.isNewline ? " " : $0 })
            }
        }
    }
}
