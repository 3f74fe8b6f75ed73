import Foundation
import Logging
import PostgresNIO

extension PostgresStore {
    /// The channel on which PostgreSQL announces a job made due (the triggers of the migration
    /// "job-due-notifications", Migration+PostgreSQL.swift).
    package static let jobsChannel = "shelfd_jobs"

    /// Listens on `jobsChannel` and calls `wake` for each notification, so that an idle `watch` takes a job queued by
    /// any process on any machine at once instead of at its next poll. One connection of its own (a listening
    /// connection cannot also serve the store's statements), on the store's event loop; nothing here blocks it.
    ///
    /// Runs until cancelled. A lost connection is logged once and made again every 5 s; `wake` is also called after
    /// each connection is made, since whatever was announced while nobody listened is gone. Meanwhile the
    /// scheduler's idle poll still finds the jobs, only later.
    package static func listenForJobs(
        _ endpoint: Endpoint, logger: Logger = Logger(label: "shelfd.postgres"), wake: @escaping @Sendable () -> Void
    ) async {
        var lost = false
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    on: PostgresDatabase.eventLoop,
                    configuration: try endpoint.configuration(),
                    id: 2, logger: logger)
                var failure: (any Error)?
                do {
                    try await connection.listen(on: jobsChannel) { notifications in
                        if lost {
                            logger.notice(
                                "Listening for queued jobs again", metadata: ["store": "\(endpoint.redacted)"])
                        }
                        lost = false
                        wake()
                        for try await _ in notifications { wake() }
                    }
                } catch {
                    failure = error
                }
                try? await connection.close()
                if let failure { throw failure }
                if !Task.isCancelled {
                    throw PostgresStoreError(.connection, "the server ended the listening connection")
                }
            } catch {
                if Task.isCancelled { return }
                if !lost {
                    logger.warning(
                        "Not listening for queued jobs on PostgreSQL; connecting again every 5 s, and polling the queue meanwhile",
                        metadata: ["store": "\(endpoint.redacted)", "error": "\(Session.describe(error))"])
                }
                lost = true
            }
            try? await Task.sleep(for: .seconds(5))
        }
    }
}
