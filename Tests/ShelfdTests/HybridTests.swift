import Foundation
import ShelfConfig
import ShelfCore
import ShelfImaging
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("Hybrid: fast when it can be, accurate when it must be", .serialized)
struct HybridTests {
    static func hybridRoot(gemini: GeminiEmulator, local: OpenAIEmulator) throws -> ShelfRoot {
        try ShelfRoot(
            geminiURL: gemini.baseURL,
            overrides: [
                "pipeline": ["provider": "\"hybrid\""],
                "hybrid": ["fast": "\"openai\"", "accurate": "\"gemini\"", "escalate_below": "0.7"],
                "openai": ["base_url": "\"\(local.baseURL)\""],
            ])
    }

    @Test(
        "Confident fast answers stand; a doubtful one goes to the accurate provider and the answers merge",
        .timeLimit(.minutes(1)))
    func escalatesOnlyWhenNeeded() async throws {
        let sure = JPEGFactory.shelf(seed: 700), doubtful = JPEGFactory.shelf(seed: 701)
        let openai = Configuration.OpenAI() // the daemon's [openai] size and quality, none set
        let sent = ImagePreset.openAICompatible(maxSide: openai.maxSide, quality: openai.jpegQuality)
        let fastScript = OpenAIEmulator.Script(rules: [
            .init(
                photo: .sha256(sentSHA256(sure, preset: sent)),
                replies: [.books([.init(title: "Emma", author: "Jane Austen", confidence: 0.9)])]),
            .init(
                photo: .sha256(sentSHA256(doubtful, preset: sent)),
                replies: [
                    .books([
                        .init(title: "Dune", author: "Frank Herbert", confidence: 0.5),
                        .init(title: "Persuasion", author: "Jane Austen", confidence: 0.8),
                    ])
                ]),
        ])
        try await withGeminiEmulator(.always(.books([dune, hobbit]))) { gemini in
            try await withOpenAIEmulator(fastScript) { local in
                let root = try Self.hybridRoot(gemini: gemini, local: local)
                try root.drop(sure, as: "sure.jpg")
                try root.drop(doubtful, as: "doubtful.jpg")
                let run = try await root.shelfd("run")
                #expect(run.status == 0, "\(run.stderr)")

                #expect(
                    gemini.requests.map(\.photoSHA256) == [sentSHA256(doubtful)], "only the doubtful photo is escalated"
                )
                let results = Dictionary(uniqueKeysWithValues: try root.resultDocuments().map { ($0.photo.path, $0) })
                let confident = try #require(results["sure.jpg"])
                #expect(confident.decidedBy == "openai" && confident.runs.count == 1)
                #expect(confident.books.map(\.title) == ["Emma"])

                let merged = try #require(results["doubtful.jpg"])
                #expect(merged.decidedBy == "gemini")
                #expect(merged.runs.map(\.provider) == ["openai", "gemini"])
                #expect(merged.runs.allSatisfy { $0.latencyMs != nil && $0.response != nil })
                #expect(merged.books.map(\.title) == ["Dune", "The Hobbit", "Persuasion"])
                #expect(merged.books.map(\.source) == ["gemini", "gemini", "openai"])
                #expect(merged.books.first?.confidence == 0.93, "the accurate reading wins")
            }
        }
    }

    @Test(
        "A fast provider that cannot read images is paused; photos go straight to the accurate one",
        .timeLimit(.minutes(1)))
    func brokenFastProviderFallsThrough() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            try await withOpenAIEmulator(.always(.imageNotSupported, flavour: .llamaServer)) { local in
                let root = try Self.hybridRoot(gemini: gemini, local: local)
                for seed in 710..<714 { try root.drop(JPEGFactory.shelf(seed: seed), as: "\(seed).jpg") }
                let run = try await root.shelfd("run")
                #expect(run.status == 0, "the accurate provider did every photo: \(run.stderr)")
                #expect(gemini.requests.count == 4)
                #expect(local.requests.filter { $0.method == "POST" }.count <= 2, "paused after the first answers")

                let status = try await root.status()
                #expect(status.queue.done == 4)
                #expect(status.provider.name == "hybrid" && status.provider.state == "ok")
                let fast = try #require(status.providers.first { $0.name == "openai" })
                #expect(fast.state == "paused")
                #expect(fast.reason?.contains("mmproj") == true || fast.reason?.contains("projector") == true)
                #expect(status.problems.allSatisfy { $0.severity == "warning" })
            }
        }
    }

    @Test(
        "The accurate provider down: the fast reading is kept for review, then replaced by the accurate one when it returns",
        .timeLimit(.minutes(2)))
    func accurateDownKeepsFastReading() async throws {
        let fastScript = OpenAIEmulator.Script.always(
            .books([.init(title: "Dune", author: "Frank Herbert", confidence: 0.5)]))
        // The accurate reading of Dune is doubtful too: it would wait for review, unless a person decided already.
        let doubtfulDune = GeminiEmulator.Book(title: "Dune", author: "Frank Herbert", confidence: 0.55)
        try await withGeminiEmulator(.always(.books([doubtfulDune, hobbit]))) { gemini in
            gemini.setDown(true)
            try await withOpenAIEmulator(fastScript) { local in
                let root = try Self.hybridRoot(gemini: gemini, local: local)
                try root.writeConfig(
                    geminiURL: gemini.baseURL,
                    overrides: [
                        "pipeline": ["provider": "\"hybrid\"", "probe_max_s": "2"],
                        "hybrid": ["fast": "\"openai\"", "accurate": "\"gemini\"", "escalate_below": "0.7"],
                        "openai": ["base_url": "\"\(local.baseURL)\""],
                    ])
                try root.drop(JPEGFactory.shelf(seed: 720), as: "a.jpg")
                try root.drop(JPEGFactory.shelf(seed: 721), as: "b.jpg")

                let run = try await root.shelfd("run")
                #expect(run.status == 3, "the accurate provider is down")
                #expect(run.stderr.contains("provider: gemini — unreachable since "), "\(run.stderr)")
                let kept = try root.resultDocuments()
                #expect(kept.count == 2)
                for result in kept {
                    #expect(result.decidedBy == "openai")
                    #expect(result.books.map(\.title) == ["Dune"])
                    #expect(
                        result.books.allSatisfy {
                            $0.status == .needsReview && $0.reviewReasons?.contains("accurate_not_asked") == true
                        })
                    #expect(
                        result.notes.contains { $0.contains("gemini (the accurate provider) was not asked") },
                        "\(result.notes)")
                }
                let waiting = try await root.status()
                #expect(waiting.queue.review == 2 && waiting.queue.pending == 0 && waiting.queue.dead == 0)
                #expect(waiting.problems.contains { $0.code == "accurate_not_asked" })
                let fastRequests = local.requests.filter { $0.method == "POST" }.count
                #expect(fastRequests == 2)
                // A person accepts one photo's fast reading meanwhile: the accurate reading does not ask again.
                let item = try #require(
                    try await root.reviewList().first { $0.photo.path == "a.jpg" && $0.book.title == "Dune" })
                #expect(item.reasons.contains("accurate_not_asked"))
                let accepted = try await root.shelfd("review", "accept", item.id)
                #expect(accepted.status == 0, "\(accepted.stderr)")

                // Back: each photo is asked again once, the fast answer replayed, and the accurate reading wins.
                gemini.setDown(false)
                let daemon = try root.startDaemon()
                try await waitUntil("both photos are read again by gemini", timeout: .seconds(40)) {
                    try root.resultDocuments().allSatisfy { $0.decidedBy == "gemini" }
                }
                for result in try root.resultDocuments() {
                    #expect(result.books.map(\.title) == ["Dune", "The Hobbit"])
                    #expect(result.books.allSatisfy { $0.reviewReasons?.contains("accurate_not_asked") != true })
                    #expect(result.runs.map(\.provider) == ["openai", "gemini"])
                }
                let open = try await root.reviewList().map { "\($0.photo.path): \($0.book.title)" }.sorted()
                #expect(open == ["b.jpg: Dune"], "the decision on a.jpg's Dune is kept; b.jpg's is asked about")
                #expect(
                    local.requests.filter { $0.method == "POST" }.count == fastRequests,
                    "the fast answers were replayed")
                #expect(gemini.requests.count == 2, "asked once per photo")
                try await waitUntil("status no longer mentions the fast readings") {
                    try await !root.status().problems.contains { $0.code == "accurate_not_asked" }
                }
                #expect(try await daemon.stop() == 0)
            }
        }
    }
}
