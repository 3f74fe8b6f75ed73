import Foundation
import ShelfApp
import ShelfCore
import ShelfDaemon
import ShelfDigest
import ShelfRuntimeTesting
import ShelfStore
import ShelfTesting
import Testing

/// The text of an HTML element as the page escaped it, back to the characters.
private func unescaped(_ html: Substring) -> String {
    var text = String(html)
    for (entity, character) in [
        ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&#x27;", "'"), ("&#x2F;", "/"),
        ("&amp;", "&"),
    ] {
        text = text.replacingOccurrences(of: entity, with: character)
    }
    return text
}

/// The overview, the shelves, a photo's decisions at once and the progress feed, through the site's router over a
/// run of the daemon's machinery. (How the page follows the queue in a browser is tested in ShelfdTests.)
@Suite("The overview and the API's other documents, in-process")
struct OverviewAndAPITests {
    static func json(_ http: WebClient, _ method: String, _ path: String, _ body: String = "") async throws
        -> WebAnswer
    {
        let (cookie, csrf) = try await http.session(from: "/")
        return try await http.send(
            method, path,
            headers: [("Content-Type", "application/json"), ("Cookie", cookie), ("X-CSRF-Token", csrf)], body: body)
    }

    @Test("The overview counts the photos and gives a failed one's reason; its Retry queues that photo again")
    func overviewAndRetry() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 74), as: "den/IMG_74.jpg")
            try root.drop(Array("not a photo".utf8), as: "den/IMG_75.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            let failed = try #require(
                try site.desks.status().problems.first { $0.path?.hasSuffix("IMG_75.jpg") == true })
            let job = try #require(failed.job, "a failed photo can be retried")
            try await site.web { http in
                let overview = try await http.send("GET", "/")
                #expect(overview.status == 200)
                #expect(
                    overview.body.contains(#"data-count="done">1<"#) && overview.body.contains(#"data-count="dead">1<"#)
                )
                #expect(overview.body.contains("den/IMG_75.jpg"), "the failed photo is named")
                let reasons = overview.body.components(separatedBy: #"<p class="reason">"#).dropFirst().map {
                    unescaped($0.prefix { $0 != "<" })
                }
                #expect(reasons.contains(failed.message), "the reason in words: \(reasons)")
                #expect(overview.body.contains("name=\"job\" value=\"\(job)\""), "with its own Retry")

                let retried = try await http.post("/retry", form: ["job": "\(job)"])
                #expect(retried.status == 303 && retried.header("location") == "/?requeued=1", "\(retried.body)")
                let notice = try await http.send("GET", "/?requeued=1")
                #expect(
                    notice.body.contains("class=\"notice\" role=\"status\"")
                        && notice.body.contains("Requeued 1 photo."))
                #expect(notice.body.contains(#"data-count="pending">1<"#))
                let status = try site.desks.status()
                #expect(status.queue.dead == 0 && status.queue.pending == 1, "queued again, as 'shelfd retry' does")
                #expect(!status.problems.contains { $0.job == job })

                // A photo that is no longer failed is not requeued again, and the page says why.
                let again = try await http.post("/retry", form: ["job": "\(job)"])
                let refused = try await http.send("GET", again.header("location") ?? "/")
                #expect(refused.body.contains("Requeued 0 photos. job \(job) not requeued: it is pending, not failed."))
                #expect(try await http.post("/retry", form: ["job": "nonsense"]).status == 400)
            }
        }
    }

    @Test("The overview says which photos in progress a stopped process holds, as status does")
    func photosHeldByAStoppedProcess() async throws {
        let site = try InProcessSite(try ShelfRoot())
        let queue = site.runtime.store.queue
        for photo in ["p1", "p2"] {
            _ = try queue.recordSighting(
                path: "/in/\(photo).jpg", relativePath: "\(photo).jpg", sha256: photo, size: 1, mtime: 1,
                provider: "gemini", now: Date())
        }
        // Claimed by a process this machine does not have (killed before it finished).
        _ = try queue.claim(limit: 2, provider: "gemini", owner: "a-stopped-process:4242:1", lease: 600, now: Date())
        #expect(try site.desks.status().queue.leasedByStopped == 2)
        try await site.web { http in
            let overview = unescaped(try await http.send("GET", "/").body[...])
            #expect(
                overview.contains(
                    "2 photos in progress are held by a process that stopped: the next start of shelfd takes them again."
                ))
        }
    }

    @Test("A provider that is down gives its next try by the daemon's clock, then leaves it to the next photo")
    func outageOnTheDaemonsClock() async throws {
        let clock = ManualClock() // months from the wall's date: a page that read the wall would say otherwise
        let site = try InProcessSite(try ShelfRoot(), time: clock.time)
        let down = try site.runtime.store.providers.recordOutage(
            "gemini", state: .unreachable, code: "network", message: "no route", probe: false, ceiling: 300,
            notBefore: nil, now: clock.time.now)
        let (since, next) = (try #require(down.since), try #require(down.until))
        let sentence = "provider: gemini — unreachable since \(since.timeOfDay) (no route)"
        try await site.web { http in
            let waiting = try await http.send("GET", "/").body
            #expect(
                waiting.contains(#"<span class="why">\#(sentence), next try \#(next.timeOfDay)"#),
                "the provider's line counts to its next try on the daemon's clock: \(waiting)")
            #expect(!waiting.contains("next try with the next photo"))

            clock.advance(by: .seconds(next.timeIntervalSince(clock.time.now) + 1))
            let due = try await http.send("GET", "/").body
            #expect(
                due.contains(#"<span class="why">\#(sentence), next try with the next photo"#),
                "its time has come on the daemon's clock: \(due)")
        }
    }

    @Test("The progress feed's snapshot is the queue's counts as JSON")
    func progressSnapshot() async throws {
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 76), as: "IMG_76.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            try await site.web { http in
                let once = try await http.send("GET", "/events?once")
                #expect(once.status == 200 && once.header("content-type") == "application/json")
                let fields = try #require(
                    try JSONSerialization.jsonObject(with: Data(once.body.utf8)) as? [String: Any])
                let counts = try #require(fields["counts"] as? [String: Int], "\(once.body)")
                #expect(counts["done"] == 1 && counts["pending"] == 0, "\(once.body)")
                #expect((fields["photos"] as? [Any])?.count == 1, "the photo just finished: \(once.body)")
            }
        }
    }

    @Test("A photo's items decided at once through the API: a plan first, then exactly the items listed, then undone")
    func photoDecisionsAtOnce() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(seed: 77)
            try root.drop(photo, as: "den/IMG_77.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            let sha = SHA256.hex(of: photo)
            let open = try site.desks.review.items().map(\.id)
            #expect(open.count == 1)
            try await site.web { http in
                let plan = try await Self.json(http, "POST", "/api/v1/photos/\(sha)/review", #"{"bulk": "not_books"}"#)
                #expect(plan.status == 200 && plan.body.contains("\"applied\" : false"), "\(plan.body)")
                #expect(try site.desks.review.items().map(\.id) == open, "a plan decides nothing")
                let unlisted = try await Self.json(
                    http, "POST", "/api/v1/photos/\(sha)/review", #"{"bulk": "not_books", "apply": true}"#)
                #expect(unlisted.status == 422 && unlisted.body.contains("items_needed"))
                #expect(
                    try await Self.json(http, "POST", "/api/v1/photos/\(sha)/review", #"{"bulk": "maybe"}"#).status
                        == 422)

                let applied = try await Self.json(
                    http, "POST", "/api/v1/photos/\(sha)/review",
                    #"{"bulk": "not_books", "apply": true, "items": ["\#(open[0])"]}"#)
                #expect(applied.status == 200, "\(applied.body)")
                #expect(try site.desks.review.items().isEmpty)
                let undo = try #require(applied.body.firstMatch(of: /"undo" : "([^"]+)"/)?.1)
                let back = try await Self.json(http, "POST", "/api/v1/review/undo", #"{"undo": "\#(undo)"}"#)
                #expect(back.status == 200 && back.body.contains(open[0]), "\(back.body)")
                #expect(try site.desks.review.items().map(\.id) == open, "reopened")
                let twice = try await Self.json(http, "POST", "/api/v1/review/undo", #"{"undo": "\#(undo)"}"#)
                #expect(twice.status == 410, "an undo is taken once")
            }
        }
    }

    @Test("A work's whole history and the shelves are the CLI's documents; an unknown work or shelf is 404")
    func workAndShelves() async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            try root.drop(JPEGFactory.shelf(seed: 78), as: "den/IMG_78.jpg")
            let site = try InProcessSite(root)
            try await site.run()
            site.desks.flushFiles()
            let dune = try #require(try root.library().books.first { $0.title == "Dune" })
            try await site.web { http in
                let work = try await http.send("GET", "/api/v1/library/\(formEncoded(dune.work))")
                #expect(work.status == 200)
                #expect(
                    work.body
                        == String(
                            decoding: try JSONStyle.encoder().encode(site.desks.library.work(dune.work)), as: UTF8.self)
                        + "\n")
                #expect(try await http.send("GET", "/api/v1/library/no-such-work").status == 404)

                let shelves = try await http.send("GET", "/api/v1/shelves")
                #expect(shelves.status == 200 && shelves.body.contains("\"den\""), "\(shelves.body)")
                let den = try await http.send("GET", "/api/v1/shelves/den")
                #expect(den.status == 200 && den.body.contains("Dune") && den.body.contains("The Hobbit"))
                #expect(try await http.send("GET", "/api/v1/shelves/attic").status == 404)

                let page = try await http.send("GET", "/shelves/den")
                #expect(page.status == 200 && page.body.contains("Dune") && page.body.contains("The Hobbit"))
                #expect(try await http.send("GET", "/shelves").body.contains("href=\"/shelves/den\""))
            }
        }
    }
}
