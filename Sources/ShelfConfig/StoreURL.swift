import Foundation
package import ShelfCore

extension Configuration {
    /// Where the queue, the providers' health and their budgets live: SQLite in the state folder (the default), or a
    /// PostgreSQL server that several shelfd workers share.
    package struct StoreLocation: Sendable, Equatable {
        /// `postgresql://user@host:port/database`; empty: SQLite (`shelfd.db` in the state folder).
        package var url = ""
        /// `writes_files`: whether this node keeps the files for people (results/, library.json, review/, exports/)
        /// current from a shared store. Nil: unset, decided at start (`FilesRole`). SQLite stores always write them.
        package var writesFiles: Bool?
        package init() {}

        /// The PostgreSQL server, when `url` names one (parsing checked it).
        package var postgres: PostgresURL? { url.isEmpty ? nil : try? PostgresURL(url) }
    }
}

/// `[store] url` taken apart. The password may be in the URL (`user:password@`), but the secret `store_password`
/// is the better place and wins; neither is ever printed: `description` is the URL without it.
package struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    /// libpq's `sslmode` words: TLS when the server offers it (`prefer`, the default), always, never, or always with
    /// the certificate checked against the system's roots and the host name (`verify-full`).
    package enum SSLMode: String, Sendable, Equatable, CaseIterable {
        case disable, prefer, require
        case verifyFull = "verify-full"
    }

    package var user: String
    package var host: String
    package var port: Int
    package var database: String
    package var sslMode: SSLMode
    /// The URL's own password, if it has one.
    package var password: Secret?

    /// Why a URL is not one shelfd can use; the message never holds the password.
    package struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        package var description: String
    }

    package init(_ text: String) throws(Problem) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw Problem(description: "is not a URL. Write postgresql://user@host:5432/database")
        }
        let shown = Self.redact(components)
        guard scheme == "postgresql" || scheme == "postgres" else {
            throw Problem(description: "= \"\(shown)\" is not a PostgreSQL URL: it starts with postgresql://")
        }
        guard let host = components.host, !host.isEmpty else {
            throw Problem(description: "= \"\(shown)\" names no server: postgresql://user@host:5432/database")
        }
        guard let user = components.user, !user.isEmpty else {
            throw Problem(description: "= \"\(shown)\" names no user: postgresql://user@\(host)/database")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw Problem(description: "= \"\(shown)\" names no database: postgresql://\(user)@\(host)/shelfd")
        }
        var sslMode = SSLMode.prefer
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw Problem(description: "= \"\(shown)\": unknown parameter \(item.name); only sslmode is read")
            }
            guard let mode = item.value.flatMap(SSLMode.init(rawValue:)) else {
                throw Problem(
                    description: "= \"\(shown)\": sslmode must be one of "
                        + SSLMode.allCases.map(\.rawValue).joined(separator: ", "))
            }
            sslMode = mode
        }
        self.user = user
        self.host = host
        self.port = components.port ?? 5432
        self.database = database.removingPercentEncoding ?? database
        self.sslMode = sslMode
        self.password = components.password.flatMap { $0.isEmpty ? nil : Secret($0) }
    }

    /// The password to log in with: the secret `store_password` first, else the URL's own.
    package func password(from secrets: Secrets) -> Secret? {
        secrets[.storePassword] ?? password
    }

    /// The URL for people and logs: never the password.
    package var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "postgresql://\(user)@\(shownHost):\(port)/\(database)"
            + (sslMode == .prefer ? "" : "?sslmode=\(sslMode.rawValue)")
    }

    private static func redact(_ components: URLComponents) -> String {
        var shown = components
        if shown.password != nil { shown.password = "<redacted>" }
        return shown.string ?? "<not a URL>"
    }
}
