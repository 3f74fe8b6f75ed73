import Foundation
import ShelfCore

/// A `shelfd watch` process on this database, as it registered itself: one on a machine of its own, several when
/// workers share a PostgreSQL database.
package struct WorkerRecord: Sendable, Equatable {
    /// ProcessIdentity's name for it (boot id, pid, start time): its leases carry it.
    package var owner: String
    package var host: String
    package var pid: Int32
    package var version: String
    package var since: Date
    package var watchMode: String?
    /// It keeps the files people read (results, library.json, review/, exports) current.
    package var writesFiles: Bool
    package var heartbeat: Date
    /// Photos it holds leased now (filled in by `WorkerRegistry.all`).
    package var inFlight: Int

    package init(
        owner: String, host: String, pid: Int32, version: String, since: Date, watchMode: String? = nil,
        writesFiles: Bool, heartbeat: Date, inFlight: Int = 0
    ) {
        self.owner = owner; self.host = host; self.pid = pid; self.version = version; self.since = since
        self.watchMode = watchMode; self.writesFiles = writesFiles; self.heartbeat = heartbeat; self.inFlight = inFlight
    }
}

/// The shelfd processes working from this store (`watch`, `run`), each registered with its heartbeat: what
/// `status` lists and `doctor` checks. A concern of the store with a type of its own (`Store.workers`).
package struct WorkerRegistry: StoreConcern {
    let database: Store

    package func register(_ worker: WorkerRecord) throws {
        try database.write { db in
            try db.upsert(
                into: "worker", key: "owner",
                [
                    "owner": worker.owner, "host": worker.host, "pid": Int(worker.pid), "version": worker.version,
                    "since": worker.since, "watch_mode": worker.watchMode, "writes_files": worker.writesFiles,
                    "heartbeat": worker.heartbeat,
                ])
        }
    }

    /// The worker is alive (every few seconds), and its watch mode when that changed.
    package func heartbeat(owner: String, watchMode: String?, now: Date) throws {
        try database.write { db in
            try db.execute(
                "UPDATE worker SET watch_mode = COALESCE(?, watch_mode), heartbeat = ? WHERE owner = ?",
                [watchMode, now, owner])
        }
    }

    package func unregister(owner: String) throws {
        try database.write { db in try db.execute("DELETE FROM worker WHERE owner = ?", [owner]) }
    }

    /// Every registered worker with the photos it holds, the most recently alive first. A worker killed without a
    /// chance to unregister stays, with its last heartbeat, until `forget(silentSince:)` drops it.
    package func all() throws -> [WorkerRecord] {
        try database.readStatement { db in
            try db.query(
                """
                SELECT w.*, (SELECT COUNT(*) FROM job j WHERE j.state = 'leased' AND j.lease_owner = w.owner) AS in_flight
                FROM worker w ORDER BY w.heartbeat DESC, w.owner
                """
            ).map { row in
                WorkerRecord(
                    owner: try row.required("owner", of: "worker"), host: try row.required("host", of: "worker"),
                    pid: Int32(try row.required("pid", of: "worker", as: Int64.self)),
                    version: try row.required("version", of: "worker"), since: try row.required("since", of: "worker"),
                    watchMode: row.string("watch_mode"), writesFiles: row.int("writes_files") == 1,
                    heartbeat: try row.required("heartbeat", of: "worker"), inFlight: Int(row.int("in_flight") ?? 0))
            }
        }
    }

    /// Drops workers silent since before `date` (killed, or their machine gone); their leases run out on their own.
    package func forget(silentSince date: Date) throws {
        try database.write { db in try db.execute("DELETE FROM worker WHERE heartbeat < ?", [date]) }
    }
}
