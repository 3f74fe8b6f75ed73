import Foundation

/// Small facts kept by name (`setting`): a merge still to do, who holds a provider's choice, a license accepted.
package struct StoreSettings: StoreConcern {
    let database: Store

    package func value(_ key: String) throws -> String? {
        try readStatement { db in try db.queryOne("SELECT value FROM setting WHERE key = ?", [key])?.string("value") }
    }

    package func set(_ key: String, _ value: String) throws {
        try write { db in
            try db.execute(
                "INSERT INTO setting (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value])
        }
    }

    /// Sets `key` to "" when it still holds `value` (another server may have written its own since).
    package func clear(_ key: String, ifValue value: String) throws {
        try write { db in try db.execute("UPDATE setting SET value = '' WHERE key = ? AND value = ?", [key, value]) }
    }
}
