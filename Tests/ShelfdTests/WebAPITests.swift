import Foundation
import ShelfCore
import ShelfDigest
import ShelfTesting
import Testing

/// `/api/v1`, `/metrics`, `/healthz`, and the address in `status` and `doctor`: the same documents as the CLI's,
/// decisions through the same code as `shelfd review`.
@Suite("The web API for scripts", .serialized)
struct WebAPITests {
    static let token = "api-\(UUID().uuidString)"

    /// A shelf with one photo read through the Gemini emulator: Dune matched, "Smudged Spine" waiting for review.
    static func catalogued(_ body: (ShelfRoot, String) async throws -> Void) async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let shelf = try ShelfRoot(geminiURL: gemini.baseURL)
            shelf.environment["WEB_TOKEN"] = token
            let photo = JPEGFactory.shelf(seed: 71)
            try shelf.drop(photo, as: "den/IMG_7.jpg")
            let run = try await shelf.shelfd("run")
            #expect(run.status == 0 || run.status == 3, "\(run.stderr)")
            try await body(shelf, SHA256.hex(of: photo))
        }
    }

    static func get(_ http: RawHTTP, _ path: String) throws -> RawHTTP.Answer {
        try http.send("GET", path, headers: [("Authorization", "Bearer \(token)")])
    }

    static func post(_ http: RawHTTP, _ path: String, _ json: String) throws -> RawHTTP.Answer {
        try http.send(
            "POST", path, headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
            body: json)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONStyle.decoder().decode(type, from: Data(text.utf8))
    }

    @Test(
        "The API's documents decode with the CLI's types and equal what the CLI prints for the same state",
        .timeLimit(.minutes(3)))
    func documentsEqualTheCLIs() async throws {
        try await Self.catalogued { shelf, sha in
            let server = try shelf.startWeb()
            let http = RawHTTP(url: try await shelf.webURL())

            let status = try Self.get(http, "/api/v1/status")
            #expect(status.status == 200 && status.header("content-type")?.hasPrefix("application/json") == true)
            let cli = try await shelf.shelfd("status", "--json")
            #expect(try Self.decode(StatusDocument.self, status.body) == Self.decode(StatusDocument.self, cli.stdout))
            #expect(status.body == cli.stdout, "the same bytes as 'status --json'")

            let review = try Self.get(http, "/api/v1/review")
            let list = try await shelf.shelfd("review", "list", "--json")
            let items = try Self.decode([ReviewDocument].self, review.body)
            #expect(items == (try Self.decode([ReviewDocument].self, list.stdout)))
            let item = try #require(items.first)
            #expect(item.book.title == "Smudged Spine")
            let one = try Self.get(http, "/api/v1/review/\(item.id)")
            let show = try await shelf.shelfd("review", "show", "--json", item.id)
            #expect(
                try Self.decode(ReviewDocument.self, one.body) == (try Self.decode(ReviewDocument.self, show.stdout)))
            #expect(try Self.get(http, "/api/v1/review/ffffffffffff").status == 404)

            let library = try Self.get(http, "/api/v1/library")
            #expect(try Self.decode(LibraryDocument.self, library.body) == (try shelf.library()))

            let result = try Self.get(http, "/api/v1/results/\(sha)")
            let written = try #require(try shelf.resultDocuments().first)
            #expect(try Self.decode(ResultDocument.self, result.body) == written)
            let recent = try Self.decode([ResultDocument].self, try Self.get(http, "/api/v1/results").body)
            #expect(recent == [written])
            #expect(try Self.get(http, "/api/v1/results/\(String(repeating: "a", count: 64))").status == 404)
            let missing = try Self.get(http, "/api/v1/results/not-a-sha")
            #expect(missing.status == 404 && missing.body.contains("\"error\"") && missing.body.contains("\"code\""))
            #expect(try Self.get(http, "/api/v1/nothing-here").body.contains("\"not_found\""))

            for answer in [status, review, one, library, result] {
                #expect(!answer.body.contains(Self.token))
            }
            #expect(try await server.stop() == 0)
            #expect(!server.logText.contains(Self.token))
        }
    }

    @Test(
        "A decision POSTed to the API goes through the review desk: library.json and the exports change",
        .timeLimit(.minutes(3)))
    func decisionsChangeTheLibrary() async throws {
        try await Self.catalogued { shelf, _ in
            #expect(try await shelf.shelfd("export", "--format", "goodreads").status == 0)
            let export = shelf.root.appendingPathComponent("exports/goodreads.csv")
            #expect(try !String(contentsOf: export, encoding: .utf8).contains("Smudged Spine"))
            let server = try shelf.startWeb()
            let http = RawHTTP(url: try await shelf.webURL())
            let id = try #require(
                try Self.decode([ReviewDocument].self, try Self.get(http, "/api/v1/review").body).first?.id)

            let badISBN = try Self.post(
                http, "/api/v1/review/\(id)", #"{"decision": "edit", "isbn": "978-0-441-17271-0"}"#)
            #expect(badISBN.status == 422 && badISBN.body.contains("checksum"), "\(badISBN.body)")
            let noCandidate = try Self.post(http, "/api/v1/review/\(id)", #"{"decision": "candidate", "candidate": 9}"#)
            #expect(noCandidate.status == 422, "\(noCandidate.body)")
            #expect(try Self.post(http, "/api/v1/review/\(id)", #"{"decision": "maybe"}"#).status == 422)
            #expect(try Self.post(http, "/api/v1/review/\(id)", "not json").status == 400)
            #expect(
                try shelf.library().books.first { $0.title == "Smudged Spine" }?.status == .needsReview,
                "nothing changed yet")

            let edited = try Self.post(
                http, "/api/v1/review/\(id)", #"{"decision": "edit", "title": "Smudged Spine", "author": "A. Person"}"#)
            #expect(edited.status == 200, "\(edited.body)")
            #expect(edited.body.contains("\"detail\""))
            // The answer does not wait for the files: they follow within seconds.
            try await waitUntil("library.json and the export follow the decision", timeout: .seconds(10)) {
                try String(contentsOf: export, encoding: .utf8).contains("Smudged Spine")
                    && shelf.library().books.contains { $0.title == "Smudged Spine" && $0.author == "A. Person" }
            }
            let entry = try #require(try shelf.library().books.first { $0.title == "Smudged Spine" })
            #expect(entry.author == "A. Person" && entry.history.contains { $0.action == "reviewed_by_user" })
            #expect(try await shelf.reviewList().isEmpty)
            #expect(
                try Self.post(http, "/api/v1/review/\(id)", #"{"decision": "accept"}"#).status == 404, "decided already"
            )
            #expect(try await server.stop() == 0)
        }
    }

    @Test(
        "/metrics is Prometheus text whose photo counts are the status's; /healthz answers ok", .timeLimit(.minutes(3)))
    func metricsMatchTheStatus() async throws {
        try await Self.catalogued { shelf, _ in
            let server = try shelf.startWeb()
            let http = RawHTTP(url: try await shelf.webURL())
            let health = try http.send("GET", "/healthz")
            #expect(health.status == 200 && health.body == "ok\n")
            let metrics = try http.send("GET", "/metrics")
            #expect(metrics.status == 200 && metrics.header("content-type")?.hasPrefix("text/plain") == true)
            let samples = try Self.prometheusSamples(metrics.body)
            let queue = try await shelf.status().queue
            for (state, count) in [
                ("pending", queue.pending), ("leased", queue.leased), ("done", queue.done), ("review", queue.review),
                ("failed", queue.failed), ("dead", queue.dead),
            ] {
                #expect(samples["shelfd_photos{state=\"\(state)\"}"] == Double(count), "\(state)")
            }
            #expect(samples["shelfd_queue_depth"] == Double(queue.pending + queue.leased + queue.failed))
            #expect(samples["shelfd_provider_requests_total{provider=\"gemini\",outcome=\"ok\"}"] == 1)
            #expect(samples["shelfd_provider_latency_seconds_count{provider=\"gemini\"}"] == 1)
            #expect(samples["shelfd_provider_latency_seconds_bucket{provider=\"gemini\",le=\"+Inf\"}"] == 1)
            // This process's own statements: the first scrape's queries are in the second's count.
            let statements = try #require(samples["shelfd_store_statements_total"])
            let again = try Self.prometheusSamples(try http.send("GET", "/metrics").body)
            #expect((again["shelfd_store_statements_total"] ?? 0) > statements)
            #expect((again["shelfd_store_transactions_total"] ?? 0) > 0)
            #expect(again["shelfd_store_claims_total"] == 0, "shelfd web alone claims no photos")
            #expect(try await server.stop() == 0)
        }
    }

    @Test(
        "status and doctor give the page's address while it is served, and status drops it when it stops",
        .timeLimit(.minutes(2)))
    func statusAndDoctorGiveTheAddress() async throws {
        let shelf = try ShelfRoot(overrides: ["pipeline": ["provider": "\"ocr\""]])
        #expect(try await shelf.shelfd("doctor").stdout.contains("not served now"))
        let server = try shelf.startWeb()
        let url = try await shelf.webURL()
        let text = try await shelf.shelfd("status")
        #expect(text.stdout.contains("web:      \(url)/"), "\(text.stdout)")
        #expect(try await shelf.status().web?.url == url + "/")
        #expect(try await shelf.shelfd("doctor").stdout.contains("served at \(url)/"))
        #expect(try await server.stop() == 0)
        #expect(try await shelf.status().web == nil)
        #expect(!(try await shelf.shelfd("status").stdout.contains("web:")))

        let open = try ShelfRoot(overrides: [
            "pipeline": ["provider": "\"ocr\""], "web": ["listen": "\"0.0.0.0:8787\""],
        ])
        let doctor = try await open.shelfd("doctor")
        #expect(doctor.stdout.contains("web_token") && doctor.status == 1, "\(doctor.stdout)")
        let off = try ShelfRoot(overrides: ["pipeline": ["provider": "\"ocr\""], "web": ["listen": "\"\""]])
        #expect(try await off.shelfd("doctor").stdout.contains("the web page is off"))
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
