import Foundation
import ShelfApp
import ShelfCore
import ShelfDigest
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// `/api/v1`, `/metrics` and `/healthz`, answered by the site's router: the documents the CLI prints, made by the same
/// desks, and decisions through the same review desk as `shelfd review`.
@Suite("The web API for scripts")
struct APITests {
    static let token = "api-\(UUID().uuidString)"

    /// A shelf with one photo read through the Gemini emulator: Dune matched, "Smudged Spine" waiting for review.
    static func catalogued(_ body: (InProcessSite, String) async throws -> Void) async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            root.environment["WEB_TOKEN"] = token
            let photo = JPEGFactory.shelf(seed: 71)
            try root.drop(photo, as: "den/IMG_7.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            try await body(site, SHA256.hex(of: photo))
        }
    }

    static func get(_ http: WebClient, _ path: String) async throws -> WebAnswer {
        try await http.send("GET", path, headers: [("Authorization", "Bearer \(token)")])
    }

    static func post(_ http: WebClient, _ path: String, _ json: String) async throws -> WebAnswer {
        try await http.send(
            "POST", path, headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
            body: json)
    }

    /// A document as the CLI prints it with `--json`.
    static func printed(_ document: some Encodable) throws -> String {
        String(decoding: try JSONStyle.encoder().encode(document), as: UTF8.self) + "\n"
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONStyle.decoder().decode(type, from: Data(text.utf8))
    }

    @Test("The API's documents decode with the CLI's types and equal what the desks give the CLI for the same state")
    func documentsEqualTheCLIs() async throws {
        try await Self.catalogued { site, sha in
            try await site.web { http in
                let status = try await Self.get(http, "/api/v1/status")
                #expect(status.status == 200 && status.header("content-type")?.hasPrefix("application/json") == true)
                _ = try Self.decode(StatusDocument.self, status.body)
                #expect(status.body == (try Self.printed(site.desks.status())), "what 'status --json' prints")

                let review = try await Self.get(http, "/api/v1/review")
                let items = try Self.decode([ReviewDocument].self, review.body)
                #expect(review.body == (try Self.printed(site.desks.review.items().map(site.desks.review.document))))
                let item = try #require(items.first)
                #expect(item.book.title == "Smudged Spine")
                let one = try await Self.get(http, "/api/v1/review/\(item.id)")
                #expect(try Self.decode(ReviewDocument.self, one.body) == item)
                #expect(try await Self.get(http, "/api/v1/review/ffffffffffff").status == 404)

                let library = try await Self.get(http, "/api/v1/library")
                site.desks.flushFiles()
                #expect(try Self.decode(LibraryDocument.self, library.body) == (try site.root.library()))

                let result = try await Self.get(http, "/api/v1/results/\(sha)")
                let written = try #require(try site.root.resultDocuments().first)
                #expect(try Self.decode(ResultDocument.self, result.body) == written)
                let recent = try Self.decode([ResultDocument].self, try await Self.get(http, "/api/v1/results").body)
                #expect(recent == [written])
                #expect(try await Self.get(http, "/api/v1/results/\(String(repeating: "a", count: 64))").status == 404)
                let missing = try await Self.get(http, "/api/v1/results/not-a-sha")
                #expect(
                    missing.status == 404 && missing.body.contains("\"error\"") && missing.body.contains("\"code\""))
                #expect(try await Self.get(http, "/api/v1/nothing-here").body.contains("\"not_found\""))

                for answer in [status, review, one, library, result] {
                    #expect(!answer.body.contains(Self.token))
                }
            }
        }
    }

    @Test("A decision POSTed to the API goes through the review desk: library.json and the exports change")
    func decisionsChangeTheLibrary() async throws {
        try await Self.catalogued { site, _ in
            let export = site.root.exportFile("goodreads")
            _ = try site.desks.exports.write(
                .goodreads, exclusiveShelf: nil, includeUnverified: false, to: .file(export))
            #expect(try !String(contentsOf: export, encoding: .utf8).contains("Smudged Spine"))
            try await site.web { http in
                let id = try #require(
                    try Self.decode([ReviewDocument].self, try await Self.get(http, "/api/v1/review").body).first?.id)

                let badISBN = try await Self.post(
                    http, "/api/v1/review/\(id)", #"{"decision": "edit", "isbn": "978-0-441-17271-0"}"#)
                #expect(badISBN.status == 422 && badISBN.body.contains("checksum"), "\(badISBN.body)")
                let noCandidate = try await Self.post(
                    http, "/api/v1/review/\(id)", #"{"decision": "candidate", "candidate": 9}"#)
                #expect(noCandidate.status == 422, "\(noCandidate.body)")
                #expect(try await Self.post(http, "/api/v1/review/\(id)", #"{"decision": "maybe"}"#).status == 422)
                #expect(try await Self.post(http, "/api/v1/review/\(id)", "not json").status == 400)
                site.desks.flushFiles()
                #expect(
                    try site.root.library().books.first { $0.title == "Smudged Spine" }?.status == .needsReview,
                    "nothing changed yet")

                let edited = try await Self.post(
                    http, "/api/v1/review/\(id)",
                    #"{"decision": "edit", "title": "Smudged Spine", "author": "A. Person"}"#)
                #expect(edited.status == 200, "\(edited.body)")
                #expect(edited.body.contains("\"detail\""))
                // The answer does not wait for the files: they follow within seconds.
                try await waitUntil("library.json and the export follow the decision", timeout: .seconds(10)) {
                    try String(contentsOf: export, encoding: .utf8).contains("Smudged Spine")
                        && site.root.library().books.contains {
                            $0.title == "Smudged Spine" && $0.author == "A. Person"
                        }
                }
                let entry = try #require(try site.root.library().books.first { $0.title == "Smudged Spine" })
                #expect(entry.author == "A. Person" && entry.history.contains { $0.action == "reviewed_by_user" })
                #expect(try site.desks.review.items().isEmpty)
                #expect(
                    try await Self.post(http, "/api/v1/review/\(id)", #"{"decision": "accept"}"#).status == 404,
                    "decided already")
            }
        }
    }

    @Test("/metrics is Prometheus text whose photo counts are the status's; /healthz answers ok")
    func metricsMatchTheStatus() async throws {
        try await Self.catalogued { site, _ in
            try await site.web { http in
                let health = try await http.send("GET", "/healthz")
                #expect(health.status == 200 && health.body == "ok\n")
                let metrics = try await http.send("GET", "/metrics")
                #expect(metrics.status == 200 && metrics.header("content-type")?.hasPrefix("text/plain") == true)
                let samples = try Self.prometheusSamples(metrics.body)
                let queue = try site.desks.status().queue
                for (state, count) in [
                    ("pending", queue.pending), ("leased", queue.leased), ("done", queue.done),
                    ("review", queue.review), ("failed", queue.failed), ("dead", queue.dead),
                ] {
                    #expect(samples["shelfd_photos{state=\"\(state)\"}"] == Double(count), "\(state)")
                }
                #expect(samples["shelfd_queue_depth"] == Double(queue.pending + queue.leased + queue.failed))
                #expect(samples["shelfd_provider_requests_total{provider=\"gemini\",outcome=\"ok\"}"] == 1)
                #expect(samples["shelfd_provider_latency_seconds_count{provider=\"gemini\"}"] == 1)
                #expect(samples["shelfd_provider_latency_seconds_bucket{provider=\"gemini\",le=\"+Inf\"}"] == 1)
                // The store's own statements: the first scrape's queries are in the second's count.
                let statements = try #require(samples["shelfd_store_statements_total"])
                let again = try Self.prometheusSamples(try await http.send("GET", "/metrics").body)
                #expect((again["shelfd_store_statements_total"] ?? 0) > statements)
                #expect((again["shelfd_store_transactions_total"] ?? 0) > 0)
            }
        }
    }

    @Test("Recent results come newest first, as many as asked within 1 to 200")
    func recentResultsAreBounded() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            root.environment["WEB_TOKEN"] = Self.token
            for seed in 82...84 { try root.drop(JPEGFactory.shelf(seed: seed), as: "den/IMG_\(seed).jpg") }
            let site = try InProcessSite(root)
            try await site.run()
            try await site.web { http in
                func recent(_ query: String) async throws -> [ResultDocument] {
                    try Self.decode([ResultDocument].self, try await Self.get(http, "/api/v1/results\(query)").body)
                }
                let all = try await recent("")
                #expect(all.count == 3)
                #expect(
                    zip(all, all.dropFirst()).allSatisfy { $0.timings.finishedAt >= $1.timings.finishedAt },
                    "newest first")
                #expect(try await recent("?limit=1").map(\.photo.path) == [all[0].photo.path])
                #expect(try await recent("?limit=0").count == 1, "at least one")
                #expect(try await recent("?limit=500").count == 3)
            }
        }
    }

    /// `name{labels} value` lines of the Prometheus text format, checked line by line: a line that is not a
    /// comment, a sample or blank fails the parse.
    static func prometheusSamples(_ text: String) throws -> [String: Double] {
        var samples: [String: Double] = [:]
        let sample = #/^([a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})?) ([-+0-9.eE]+|\+Inf|NaN)$/#
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") { continue }
            guard let match = String(line).wholeMatch(of: sample) else {
                Issue.record("not Prometheus text: \(line)")
                continue
            }
            samples[String(match.1)] = Double(match.3)
        }
        return samples
    }
}
