import Foundation
import ShelfApp
import ShelfConfig
import ShelfPostgres
import ShelfStore

/// `shelfd store migrate --from sqlite`: this machine's SQLite state copied into the PostgreSQL database of
/// `[store] url`, once, while no `shelfd watch` runs on it. What is copied, and how, is `StoreCopy`'s (ShelfStore).
package enum StoreMigration {
    package typealias TableRows = StoreCopy.TableRows
    package typealias Refusal = StoreCopy.Refusal

    package struct Report: Sendable, Equatable {
        package var source: String
        package var target: String
        package var dryRun: Bool
        /// In foreign-key order, as copied.
        package var tables: [TableRows]
        /// SQLite's tables PostgreSQL does not have (the local catalogue): they stay where they are.
        package var stayLocal: [String]

        package var totalRows: Int { tables.reduce(0) { $0 + $1.rows } }

        /// What the command prints.
        package var lines: [String] {
            let width = tables.map(\.table.count).max() ?? 0
            var lines = [dryRun ? "Would copy \(source) into \(target):" : "Copied \(source) into \(target):"]
            for table in tables {
                let replaced = table.replaced == 0 ? "" : " (replacing the \(table.replaced) PostgreSQL had)"
                lines.append(
                    "  \(table.table.padding(toLength: width, withPad: " ", startingAt: 0))  \(table.rows) row\(table.rows == 1 ? "" : "s")\(replaced)"
                )
            }
            lines.append(
                "  \(StoreCopy.processes): not copied (the processes that ran here; each `shelfd watch` registers itself)."
            )
            if !stayLocal.isEmpty {
                lines.append(
                    "The local catalogue (\(stayLocal.joined(separator: ", "))) stays in \(source): each worker keeps its own."
                )
            }
            if dryRun {
                lines.append(
                    "\(totalRows) rows in \(tables.count) tables would be copied. Nothing was changed (--dry-run).")
            } else {
                lines.append(
                    "\(totalRows) rows in \(tables.count) tables copied; PostgreSQL's counts match SQLite's. "
                        + "Every shelfd with this [store] url now works on PostgreSQL.")
            }
            return lines
        }
    }

    /// Copies (or with `dryRun` counts) this machine's SQLite state into `[store] url`'s PostgreSQL database.
    package static func fromSQLite(config: Configuration, secrets: Secrets, dryRun: Bool) throws -> Report {
        guard config.store.postgres != nil else {
            throw Refusal(
                "[store] url is empty: set it to the PostgreSQL database to copy into (postgresql://user@host/database), then run this again."
            )
        }
        let path = config.paths.database
        guard FileManager.default.fileExists(atPath: path) else {
            throw Refusal("There is no SQLite database at \(path): nothing to copy. Check [paths] state.")
        }
        // Held until the copy is over: no `shelfd watch` starts on this state meanwhile.
        guard let lock = try DaemonLock.acquire(stateFolder: config.paths.state) else {
            throw Refusal(
                "A shelfd watch is running on \(config.paths.state): stop it first (systemctl --user stop shelfd), then run this again."
            )
        }
        defer { withExtendedLifetime(lock) {} }

        let postgres = try StoreAccess.open(config: config, secrets: secrets)
        guard postgres.engine == .postgres else { throw Refusal("[store] url does not name a PostgreSQL database.") }
        let sqlite: Store
        do {
            sqlite = try Store.open(path: path)
        } catch {
            throw StartupError("Cannot open the SQLite database \(path): \(error)")
        }
        let (tables, stayLocal) = try StoreCopy.copy(
            from: sqlite, into: postgres, skipping: PostgresStore.tablesOfItsOwn, dryRun: dryRun)
        return Report(source: path, target: postgres.location, dryRun: dryRun, tables: tables, stayLocal: stayLocal)
    }
}
