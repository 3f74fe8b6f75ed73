import Foundation

/// What one store sent its database since it was opened, for /metrics and scripts/bench-workers.sh: on a server
/// every statement is a round trip, and claims wait for the one write lock that every worker shares.
package struct StoreActivity: Sendable, Equatable {
    /// Every statement, BEGIN, COMMIT and PostgreSQL's write-lock statement included: each is one round trip to a server.
    package var statements = 0
    /// Write and read transactions begun.
    package var transactions = 0
    /// Write transactions begun: each holds the database's one write lock (PostgreSQL's advisory lock) to its end.
    package var writeTransactions = 0
    /// `claim` calls, and the seconds they took, waiting for the write lock included (what a worker waits per batch).
    package var claims = 0
    package var claimSeconds = 0.0

    package init() {}
}
