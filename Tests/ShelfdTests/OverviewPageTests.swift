import Foundation
import ShelfCore
import ShelfHTTP
import ShelfRuntimeTesting
import ShelfTesting
import Testing

/// Not a photo: what a half-synced or mistaken file looks like to shelfd. It fails for good (unreadable_image).
private let notAPhoto = Array("this is not a JPEG".utf8) + [UInt8](repeating: 0, count: 2048)

/// One `progress` event of `/events`, as the page's script reads it.
private struct ProgressEvent: Decodable {
    struct Counts: Decodable { var pending, leased, done, review, failed, dead: Int }
    struct Photo: Decodable { var path, stage, words: String }
    var counts: Counts
    var photos: [Photo]
}

/// The `data:` of every complete `progress` event in a server-sent event stream.
private func progressEvents(in stream: String) -> [ProgressEvent] {
    stream.components(separatedBy: "\n\n").dropLast().compactMap { block in
        let lines = block.split(separator: "\n")
        guard lines.contains("event: progress"), let data = lines.first(where: { $0.hasPrefix("data: ") }) else {
            return nil
        }
        return try? JSONStyle.decoder().decode(ProgressEvent.self, from: Data(data.dropFirst(6).utf8))
    }
}

@Suite("The overview page", .serialized)
struct OverviewPageTests {
    @Test(
        "/events sends the counts and stages as 'shelfd run' processes a photo beside 'shelfd web', and ends when the server stops",
        .timeLimit(.minutes(2)))
    func eventsFollowAPhoto() async throws {
        try await withGeminiEmulator(GeminiEmulator.Script(latency: .seconds(2), reply: .books([dune]))) { gemini in
            let shelf = try ShelfRoot(geminiURL: gemini.baseURL)
            let web = try shelf.startWeb()
            let url = try await shelf.webURL()

            // curl stands in for the browser's EventSource; --max-time is the deadline if the stream never ends.
            let output = shelf.base.appendingPathComponent("events.txt")
            try Data().write(to: output)
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = ["--silent", "--no-buffer", "--max-time", "90", url + "/events"]
            curl.standardOutput = try FileHandle(forWritingTo: output)
            try curl.run()
            defer { if curl.isRunning { curl.terminate() } }
            func events() -> [ProgressEvent] {
                progressEvents(in: (try? String(contentsOf: output, encoding: .utf8)) ?? "")
            }

            try await waitUntil("the first event, at once") { !events().isEmpty }
            #expect(events().first?.counts.done == 0)
            // Another process does the work: the server sees it in the database.
            try shelf.drop(JPEGFactory.shelf(seed: 62), as: "den/shelf.jpg")
            #expect(try await shelf.shelfd("run").status == 0)
            try await waitUntil("an event with the photo done") { events().last?.counts.done == 1 }

            let stages = events().flatMap { $0.photos.filter { $0.path == "den/shelf.jpg" }.map(\.stage) }
            #expect(stages.contains("asking"), "the two seconds the provider takes are seen: \(stages)")
            #expect(stages.last == "done")
            let steps = ["queued", "preparing", "asking", "matching", "writing", "done"]
            let order = stages.compactMap { steps.firstIndex(of: $0) }
            #expect(order == order.sorted(), "stages only move forward: \(stages)")
            let sent = events().count
            try await Task.sleep(for: .seconds(1))
            #expect(events().count == sent, "nothing is sent while nothing changes")

            // What the script polls where EventSource fails: the same document, once.
            let once = try await HTTPClient(maxConcurrent: 1).send(HTTPRequest(url: url + "/events?once=1"))
            #expect(once.header("Content-Type") == "application/json")
            let document = try JSONStyle.decoder().decode(ProgressEvent.self, from: Data(once.body))
            #expect(document.counts.done == 1 && document.photos.first?.words == "done")

            // A stream that never ends by itself must not hold the server for its grace period.
            #expect(try await web.stop(timeout: .seconds(15)) == 0)
            try await waitUntil("curl sees the stream end", timeout: .seconds(10)) { !curl.isRunning }
            #expect(curl.terminationStatus == 0, "the stream ended cleanly")
        }
    }

    @Test(
        "In a browser the overview follows the queue without a reload: the done count rises as photos are processed",
        .timeLimit(.minutes(3)))
    func liveInTheBrowser() async throws {
        try await withGeminiEmulator(GeminiEmulator.Script(latency: .milliseconds(1500), reply: .books([dune]))) {
            gemini in
            let shelf = try ShelfRoot(geminiURL: gemini.baseURL)
            try shelf.drop(notAPhoto, as: "attic/blurred.jpg")
            let daemon = try shelf.startDaemon()
            let url = try await shelf.webURL()
            try await waitUntil("the unreadable photo has failed") { try await shelf.status().queue.dead == 1 }

            try await withBrowser { browser in
                try await browser.navigate(to: url + "/")
                #expect(try await browser.find(#"[data-count="done"]"#).text() == "0")
                #expect(try await browser.findAll("[data-retry]").count == 1, "the failed photo has its Retry button")
                try await browser.waitUntil("the page goes live") {
                    try await browser.find("[data-live]").text() == "Live."
                }
                _ = try await browser.execute("window.shelfdMarker = 42; return true")

                for seed in 0..<3 {
                    try shelf.drop(JPEGFactory.shelf(seed: 70 + seed), as: "living-room/IMG_\(seed).jpg")
                }
                try await browser.waitUntil("a photo is done", timeout: .seconds(60)) {
                    try await browser.find(#"[data-count="done"]"#).text() != "0"
                }
                try await browser.screenshot("overview")
                try await browser.waitUntil("every photo is done", timeout: .seconds(60)) {
                    try await browser.find(#"[data-count="done"]"#).text() == "3"
                }
                #expect(try await browser.execute("return window.shelfdMarker") == 42, "the page was not reloaded")
                let stages = try await browser.findAll("[data-stage]")
                var shown: [String] = []
                for row in stages { shown.append(try await row.attribute("data-stage") ?? "") }
                #expect(shown.filter { $0 == "done" }.count == 3, "\(shown)")
                #expect(
                    try await browser.find("[data-pass]").isDisplayed() == false, "the pass is over: the queue is empty"
                )

                try await browser.setViewport(.phone)
                try await browser.navigate(to: url + "/")
                let width = try await browser.pageWidth()
                #expect(!width.overflows, "\(width)")
                try await browser.screenshot("overview-phone")
            }
            #expect(try await daemon.stop() == 0)
        }
    }
}
