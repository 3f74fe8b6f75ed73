import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Prometheus
import ShelfApp
import ShelfCore

/// `/metrics` (Prometheus text) and `/healthz`. The figures are read from the database at scrape time, where the
/// daemon keeps them (the queue, every provider request with its outcome and latency), so `shelfd web` alone
/// reports what the daemon did, and a restart loses nothing; only `shelfd_store_*` count this process's own
/// statements since it started.
enum Metrics {
    /// `/healthz` on `open` (a supervisor asks without a token), `/metrics` on `api`.
    static func register(open router: RouterGroup<WebContext>, api: RouterGroup<WebContext>, site: WebSite) {
        router.get("healthz") { _, _ -> Response in
            let answering = site.desks.metrics.databaseAnswers()
            return text(
                answering ? "ok\n" : "the database does not answer\n", status: answering ? .ok : .serviceUnavailable)
        }
        api.get("metrics") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(
                status: .ok, headers: headers,
                body: .init(byteBuffer: ByteBuffer(bytes: try scrape(site.desks.metrics.read()))))
        }
    }

    /// Buckets of the provider latency histogram, in seconds: a local OCR answers in under a second, a vision
    /// model in a few, a slow one in tens.
    static let latencyBuckets: [Double] = [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120]

    static func scrape(_ reading: MetricsDesk.Reading) -> [UInt8] {
        let registry = PrometheusCollectorRegistry()
        // This process's own traffic with the database: a database server's round trips per photo (divide by the
        // photos done), and how long a claim waits for the write lock.
        let activity = reading.activity
        let storeCounts: [(name: String, help: String, value: Int)] = [
            (
                "store_statements",
                "Statements this process sent its database (each a round trip to a server), BEGIN and COMMIT included.",
                activity.statements
            ),
            ("store_transactions", "Transactions this process ran on its database.", activity.transactions),
            (
                "store_write_transactions",
                "Write transactions this process ran on its database, each holding its one write lock.",
                activity.writeTransactions
            ),
            ("store_claims", "Batches of photos this process tried to claim from the queue.", activity.claims),
        ]
        for count in storeCounts {
            registry.makeCounter(descriptor: metric(count.name, "total", count.help)).increment(by: Int64(count.value))
        }
        registry.makeCounter(
            descriptor: metric(
                "store_claim", "seconds_total", "Time this process spent claiming, waiting for the write lock included."
            )
        )
        .increment(by: activity.claimSeconds)
        let counts = reading.queue
        let states: [(String, Int)] = [
            ("pending", counts.pending), ("leased", counts.leased), ("done", counts.done),
            ("review", counts.review), ("failed", counts.failed), ("dead", counts.dead),
        ]
        for (state, n) in states {
            registry.makeGauge(
                descriptor: metric(
                    "photos", "",
                    "Photos by state, as 'shelfd status' counts them (failed: will be retried; dead: will not)."),
                labels: [("state", state)]
            ).set(to: Double(n))
        }
        registry.makeGauge(
            descriptor: metric("queue_depth", "", "Photos waiting to be read: pending, in progress, or to be retried.")
        )
        .set(to: Double(counts.pending + counts.leased + counts.failed))
        registry.makeGauge(
            descriptor: metric("oldest_pending", "seconds", "Age of the oldest photo waiting to be claimed (0: none).")
        )
        .set(to: Double(counts.oldestPendingSeconds ?? 0))
        for row in reading.requests {
            registry.makeCounter(
                descriptor: metric("provider_requests", "total", "Requests sent to each provider, by outcome."),
                labels: [("provider", row.provider), ("outcome", row.outcome)]
            )
            .increment(by: Int64(row.count))
        }
        var histograms: [String: ValueHistogram] = [:]
        for row in reading.latencies {
            let histogram =
                histograms[row.provider]
                ?? registry.makeValueHistogram(
                    descriptor: metric(
                        "provider_latency", "seconds",
                        "How long each provider took to answer, for the requests it answered."),
                    labels: [("provider", row.provider)], buckets: latencyBuckets)
            histograms[row.provider] = histogram
            for _ in 0..<row.count { histogram.record(Double(row.latencyMs) / 1000) }
        }
        return registry.emitToBuffer()
    }

    static func metric(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "shelfd", metricName: name, unitName: unit, helpText: help)
    }

    static func text(_ body: String, status: HTTPResponse.Status) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
