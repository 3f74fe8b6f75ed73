import Foundation
import ShelfCore
import ShelfStore

/// What the pipeline needs from the configuration, resolved to absolute paths.
package struct PipelineSettings: Sendable {
    package var batchSize: Int
    package var concurrency: Int
    package var reviewThreshold: Double
    package var maxAttempts: Int
    /// What a failure does to a photo, with these settings' attempts.
    package var failures: FailurePolicy { FailurePolicy(maxAttempts: maxAttempts) }
    /// `pipeline.after = move`: finished originals go to `processed/`, keeping their sub-path.
    package var moveAfter: Bool
    package var incoming: URL
    package var results: URL
    package var processed: URL
    package var libraryFile: URL
    /// review/: one file per book waiting for a person, and its crop.
    package var review: URL
    /// Exports already written there under their default names are rewritten after each change.
    package var exports: URL?
    package var exclusiveShelf: ReadingShelf = .toRead
    package var responses: URL
    /// Held while library.json, review/ and exports/ are written (`paths.filesLock`).
    package var filesLock: URL
    /// Whether this process keeps the files for people (results/, library.json, review/, exports/). False only on a
    /// shared store, on a node that leaves them to another: its results go to the database only.
    package var writesFiles = true
    /// Shared store: this node's name (`FilesRole.node`). The photos it ingests carry it when it writes files, and
    /// their results are written here. Nil on one machine.
    package var node: String?
    /// Shared store, `writes_files = true`: this node also writes the results of photos whose node writes no files.
    package var writesOthersResults = false
    /// `[shelves] round_minutes`: a shelf quiet this long ends its round (ShelfRounds.swift).
    package var roundQuiet: TimeInterval = ShelfRounds.defaultQuiet
    /// `[pipeline] barcodes`: whether each photo's ISBN barcodes are read, and whether they spare the provider.
    package var barcodes = BarcodeMode.also
    /// How long a claim holds a job without a heartbeat.
    package var lease: TimeInterval = 600
    /// Photos above this are refused before decoding (decompression bombs, 100 MP panoramas).
    package var maxPixels = 64_000_000
    /// `run`/`scan` wait this long for a retry or a provider backoff before giving up for this pass.
    package var maxWaitInPass: TimeInterval = 120
    /// The longest wait between two probes of a provider that is down (`pipeline.probe_max_s`).
    package var probeMax: TimeInterval = 300
    /// How often an idle `watch` looks at the queue for jobs another process made due (`shelfd retry`, a lease
    /// given back). On PostgreSQL, where such jobs are announced (LISTEN/NOTIFY), it can be long.
    package var idlePoll: TimeInterval = 5

    package init(
        batchSize: Int, concurrency: Int, reviewThreshold: Double, maxAttempts: Int, moveAfter: Bool,
        incoming: URL, results: URL, processed: URL, libraryFile: URL, review: URL, responses: URL, filesLock: URL
    ) {
        self.batchSize = batchSize; self.concurrency = concurrency; self.reviewThreshold = reviewThreshold
        self.maxAttempts = maxAttempts; self.moveAfter = moveAfter; self.incoming = incoming; self.results = results
        self.processed = processed; self.libraryFile = libraryFile; self.review = review
        self.responses = responses; self.filesLock = filesLock
    }

}
