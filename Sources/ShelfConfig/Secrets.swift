import Foundation
package import ShelfCore

/// API keys and tokens. They never come from `shelfd.toml`: first a systemd credential
/// (`$CREDENTIALS_DIRECTORY/<name>`, from `LoadCredential=`), then the environment variable.
package struct Secrets: Sendable, Equatable {
    package enum Name: String, Sendable, CaseIterable {
        case geminiAPIKey = "gemini_api_key"
        case cloudflareAPIToken = "cloudflare_api_token"
        case cloudflareAccountID = "cloudflare_account_id"
        case openAIAPIKey = "openai_api_key"
        case googleBooksAPIKey = "google_books_api_key"
        /// Lets the web page listen beyond loopback; the one-time login links are made from it.
        case webToken = "web_token"

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

    package var geminiAPIKey: Secret? { values[.geminiAPIKey] }
    package var cloudflareAPIToken: Secret? { values[.cloudflareAPIToken] }
    package var cloudflareAccountID: Secret? { values[.cloudflareAccountID] }
    package var openAIAPIKey: Secret? { values[.openAIAPIKey] }
    package var googleBooksAPIKey: Secret? { values[.googleBooksAPIKey] }
    package var webToken: Secret? { values[.webToken] }

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
                  let text = String(data: data, encoding: .utf8) else { continue }
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
