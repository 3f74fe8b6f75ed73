import Foundation
import ShelfApp
import ShelfConfig
import ShelfPostgres
import ShelfStore

/// Where every command finds the store: `shelfd.db` in the state folder, or the PostgreSQL database of `[store] url`
/// that several workers share. The local catalogue is always the state folder's SQLite file: it is reference data each
/// worker keeps beside it (`shelfd catalogue import` on each machine), not state the workers share.
package enum StoreAccess {
    /// The store, created or brought up to date as needed.
    /// `secrets`: for `store_password`; nil reads them from the environment, as the daemon does.
    package static func open(config: Configuration, secrets: Secrets? = nil) throws -> Store {
        if let url = config.store.postgres {
            let secrets = secrets ?? Secrets.load(environment: ProcessInfo.processInfo.environment)
            do { return try PostgresStore.open(endpoint(url, secrets: secrets)) } catch {
                throw StartupError("Cannot open the store at \(url): \(error)")
            }
        }
        let path = config.paths.database
        do {
            try FileManager.default.createDirectory(atPath: config.paths.state, withIntermediateDirectories: true)
            return try Store.open(path: path)
        } catch {
            throw StartupError("Cannot open the database \(path): \(error). Check paths.state in the configuration.")
        }
    }

    /// The store as it is, for reading; nil when there is none yet (no SQLite file: nothing has run here).
    package static func openForReading(config: Configuration, secrets: Secrets? = nil) throws -> Store? {
        if config.store.postgres != nil { return try open(config: config, secrets: secrets) }
        return try Store.openForReading(path: config.paths.database)
    }

    /// Whether there is any state to act on (a retry or an edit before anything ran has nothing to change).
    package static func exists(config: Configuration) -> Bool {
        config.store.postgres != nil || FileManager.default.fileExists(atPath: config.paths.database)
    }

    /// The local catalogue's database: the state folder's SQLite file, whichever store holds the rest.
    package static func catalogue(config: Configuration, shared store: Store?) throws -> Store {
        if let store, !store.isShared { return store }
        do {
            try FileManager.default.createDirectory(atPath: config.paths.state, withIntermediateDirectories: true)
            return try Store.open(path: config.paths.database)
        } catch {
            throw StartupError("Cannot open the local catalogue's database \(config.paths.database): \(error)")
        }
    }

    static func endpoint(_ url: PostgresURL, secrets: Secrets) -> PostgresStore.Endpoint {
        PostgresStore.Endpoint(
            host: url.host, port: url.port, user: url.user,
            password: secrets[.storePassword] ?? url.password, database: url.database,
            tls: PostgresStore.TLSMode(rawValue: url.sslMode.rawValue) ?? .prefer)
    }
}
