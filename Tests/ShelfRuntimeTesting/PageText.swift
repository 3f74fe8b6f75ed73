import Foundation

/// A form field's value as a browser encodes it.
package func formEncoded(_ text: String) -> String {
    text.addingPercentEncoding(
        withAllowedCharacters: CharacterSet(
            charactersIn:
                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")) ?? ""
}

/// `/library/<key>` as the pages link it.
package func workPath(_ key: String) -> String { "/library/" + formEncoded(key) }

extension String {
    package var csrfToken: String {
        guard let start = range(of: "<meta name=\"csrf-token\" content=\"") else { return "" }
        return String(self[start.upperBound...].prefix { $0 != "\"" })
    }

    /// How many library rows the page shows.
    package var libraryRows: Int { components(separatedBy: "<tr data-work=").count - 1 }
}
