import Foundation
package import ShelfCore

/// API keys and tokens. They never come from `shelfd.toml`: first a systemd credential
/// (`$CREDENTIALS_DIRECTORY/<name>`, from `LoadCredential=`), then the environment variable.
package struct Secrets: Sendable, Equatable {
    /// A secret's name. Each provider's facts file declares its own (`.geminiAPIKey` …); the book sources' is here.
    package struct Name: RawRepresentable, Hashable, Sendable {
        package let rawValue: String

        init(_ rawValue: String) { self.rawValue = rawValue }

        /// Only the names shelfd knows.
        package init?(rawValue: String) {
            guard let known = Name.allCases.first(where: { $0.rawValue == rawValue }) else { return nil }
            self = known
        }

        package static let googleBooksAPIKey = Name("google_books_api_key")
        /// Lets the web page listen beyond loopback; the one-time login links are made from it.
        package static let webToken = Name("web_token")
        /// The PostgreSQL password of `[store] url` (it may also be in the URL itself).
        package static let storePassword = Name("store_password")
        /// A Hardcover API token (hardcover.app → Settings → API), for `[hardcover]`.
        package static let hardcoverToken = Name("hardcover_token")

        /// The providers' secrets in the order of `ProviderKind`, then the book sources', the web page's, the store's and Hardcover's.
        package static var allCases: [Name] {
            var names: [Name] = []
            for name in ProviderKind.allCases.flatMap({ $0.facts.required + $0.facts.optional }) + [
                googleBooksAPIKey, webToken, storePassword, hardcoverToken,
            ]
            where !names.contains(name) { names.append(name) }
            return names
        }

        /// The credential name is the lower-case form; the environment variable the upper-case one.
        package var credentialName: String { rawValue }
        package var environmentVariable: String { rawValue.uppercased() }
    }

    /// Where a secret was found, for `shelfd doctor` (which never prints the value).
    package enum Origin: String, Sendable, Equatable {
        case credential, environment
    }

    private var values: [Name: Secret] = [:]
    package private(set) var origins: [Name: Origin] = [:]

    package init() {}

    package subscript(name: Name) -> Secret? {
        get { values[name] }
        set { values[name] = newValue }
    }

    package var googleBooksAPIKey: Secret? { values[.googleBooksAPIKey] }
    package var webToken: Secret? { values[.webToken] }
    package var hardcoverToken: Secret? { values[.hardcoverToken] }

    /// The shortest `web_token` the web page takes: beyond loopback it is all that stands between the network and
    /// the library, and the throttle only slows guessing (docs/web.md, "The web page: who may open it").
    package static let webTokenMinimumLength = 32

    /// Why `web_token` cannot be used (too short), with how to make one; nil when it is absent or long enough.
    /// The token itself is never shown.
    package var webTokenProblem: String? {
        guard let token = webToken?.value, token.count < Self.webTokenMinimumLength else { return nil }
        return
            "The secret web_token is \(token.count) characters; the web page takes one of at least \(Self.webTokenMinimumLength), "
            + "so that it cannot be guessed. Make one with 'openssl rand -hex 32' and set it as WEB_TOKEN or a systemd credential."
    }

    package static func load(environment: [String: String]) -> Secrets {
        var secrets = Secrets()
        let directory = environment["CREDENTIALS_DIRECTORY"].flatMap { $0.isEmpty ? nil : $0 }
        for name in Name.allCases {
            if let directory, let value = readCredential(directory, name) {
                secrets.values[name] = Secret(value)
                secrets.origins[name] = .credential
            } else if let value = environment[name.environmentVariable].map(trimmed), !value.isEmpty {
                secrets.values[name] = Secret(value)
                secrets.origins[name] = .environment
            }
        }
        return secrets
    }

    private static func readCredential(_ directory: String, _ name: Name) -> String? {
        for file in [name.credentialName, name.environmentVariable] {
            let path = PathRules.join(directory, file)
            // An unreadable or empty credential falls through to the environment, like a missing one.
            guard let data = FileManager.default.contents(atPath: path),
                let text = String(data: data, encoding: .utf8)
            else { continue }
            let value = trimmed(text)
            if !value.isEmpty { return value }
        }
        return nil
    }

    /// `echo KEY > file` leaves a newline; no key or token contains whitespace.
    private static func trimmed(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
