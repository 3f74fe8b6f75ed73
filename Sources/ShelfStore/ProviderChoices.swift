import Foundation

/// Jobs that asked for a provider (`scan --provider`, `rescan --provider`) belong to the process that asked
/// while it runs. When it is gone (stopped, killed), they are stranded: `watch` and `run` finish them, each
/// with the provider it asked for.
extension PhotoQueue {
    /// Says that `owner` (a running process) is working through the jobs that asked for `choice`.
    package func holdProviderChoice(_ choice: String, owner: String) throws {
        try database.settings.set(Self.choiceHolderPrefix + owner, choice)
    }

    /// The providers asked for by unfinished jobs that no live process holds, in name order. Holders that
    /// are gone are forgotten on the way.
    package func strandedProviderChoices(isAlive: (String) -> Bool) throws -> [String] {
        try write { db in
            var held: Set<String> = []
            for row in try db.query("SELECT key, value FROM setting WHERE key LIKE ?", [Self.choiceHolderPrefix + "%"])
            {
                let key: String = try row.required("key", of: "setting")
                let choice: String = try row.required("value", of: "setting")
                if isAlive(String(key.dropFirst(Self.choiceHolderPrefix.count))) {
                    held.insert(choice)
                } else {
                    try db.execute("DELETE FROM setting WHERE key = ?", [key])
                }
            }
            return try db.query(
                """
                SELECT DISTINCT provider_choice FROM job
                WHERE provider_choice IS NOT NULL AND state IN ('pending','leased','failed_retryable')
                ORDER BY provider_choice
                """
            ).compactMap { $0.string("provider_choice") }.filter { !held.contains($0) }
        }
    }

    private static var choiceHolderPrefix: String { "provider_choice_holder:" }
}
