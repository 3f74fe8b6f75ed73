import Foundation
import ShelfCore
import ShelfDigest
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("Reading photos again", .serialized)
struct RescanTests {
    @Test(
        "rescan asks again, keeps the earlier result, and the library follows the new reading",
        .timeLimit(.minutes(1)))
    func rescanKeepsEveryRun() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let photo = JPEGFactory.shelf(seed: 600)
            let path = try root.drop(photo, as: "den/IMG_7.jpg")
            #expect(try await root.shelfd("run").status == 0, "a book to review is not a failure")
            #expect(try root.library().books.map(\.title).sorted() == ["Dune", "Smudged Spine"])

            // A better reading this time: the smudged spine turns out to be The Hobbit.
            gemini.setScript(.always(.books([dune, hobbit])))
            let byPath = try await root.shelfd("rescan", path.path)
            #expect(byPath.status == 0, "\(byPath.stderr)")
            #expect(byPath.stdout.contains("The Hobbit"))
            #expect(gemini.requests.count == 2, "a rescan asks again")

            let current = try #require(try root.resultDocuments().first)
            #expect(current.books.map(\.title) == ["Dune", "The Hobbit"])
            let history = root.results.appendingPathComponent(".history/den/IMG_7")
            let kept = try FileManager.default.contentsOfDirectory(atPath: history.path)
            #expect(kept.count == 1)
            let earlier = try JSONStyle.decoder().decode(
                ResultDocument.self,
                from: Data(contentsOf: history.appendingPathComponent(kept[0])))
            #expect(earlier.books.map(\.title) == ["Dune", "Smudged Spine"])

            let library = try root.library()
            #expect(library.books.map(\.title).sorted() == ["Dune", "The Hobbit"], "the old misreading is gone")
            #expect(library.books.first { $0.title == "Dune" }?.sightingsCount == 1)

            // By the start of its hash, as a result file shows it.
            let byHash = try await root.shelfd("rescan", String(SHA256.hex(of: photo).prefix(10)))
            #expect(byHash.status == 0, "\(byHash.stderr)")
            #expect(gemini.requests.count == 3)

            let unknown = try await root.shelfd("rescan", "abcdef1234")
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("has not seen this photo"))
        }
    }

    @Test(
        "A rescan killed while keeping the earlier result leaves no half copy; the next start removes shelfd's leftovers, no one else's",
        .timeLimit(.minutes(2)))
    func killedHistoryCopyAndLeftovers() async throws {
        try await withGeminiEmulator(.always(.books([dune, blurry]))) { gemini in
            let root = try ShelfRoot(geminiURL: gemini.baseURL)
            let path = try root.drop(JPEGFactory.shelf(seed: 615), as: "den/IMG_8.jpg")
            #expect(try await root.shelfd("run").status == 0)
            let earlier = try Data(contentsOf: root.results.appendingPathComponent("den/IMG_8.json"))

            gemini.setScript(.always(.books([dune, hobbit])))
            let killed = try await root.shelfd(["rescan", path.path], environment: ["SHELFD_FAILPOINT": "mid_history"])
            #expect(killed.status == SIGKILL, "killed while copying the earlier result: \(killed.stderr)")
            let history = root.results.appendingPathComponent(".history/den/IMG_8")
            let halfway = try FileManager.default.contentsOfDirectory(atPath: history.path)
            #expect(
                halfway.count == 1 && halfway.allSatisfy { $0.hasPrefix(".shelfd-") && $0.hasSuffix(".tmp") },
                "only a temporary file, never a part of the copy under its own name: \(halfway)")

            // What a killed shelfd leaves in the folders it writes, and other programs' files that look alike.
            let ours = [root.root, root.results, root.results.appendingPathComponent("den")].map {
                $0.appendingPathComponent(".shelfd-library.json.99999999.tmp")
            }
            let theirs = [
                root.root.appendingPathComponent(".foo.tmp"), root.root.appendingPathComponent(".notes.txt.4242.tmp"),
                root.results.appendingPathComponent("den/.foo.tmp"),
            ]
            for file in ours + theirs { try Data("half".utf8).write(to: file) }

            let restarted = try await root.shelfd("run")
            #expect(restarted.status == 0, "\(restarted.stderr)")
            for file in ours {
                #expect(!FileManager.default.fileExists(atPath: file.path), "\(file.path) is shelfd's leftover")
            }
            for file in theirs {
                #expect(FileManager.default.fileExists(atPath: file.path), "\(file.path) is another program's")
            }
            let kept = try FileManager.default.contentsOfDirectory(atPath: history.path)
            #expect(
                kept.count == 1 && kept.allSatisfy { !$0.hasPrefix(".") }, "the copy, finished by the next run: \(kept)"
            )
            if let name = kept.first {
                #expect(
                    try Data(contentsOf: history.appendingPathComponent(name)) == earlier, "the whole earlier result")
            }
            #expect(try root.resultDocuments().first?.books.map(\.title) == ["Dune", "The Hobbit"])
            #expect(gemini.requests.count == 2, "the rescan's saved answer is replayed, not paid for again")
        }
    }

    @Test(
        "A rescan --provider killed after its claim is finished by the next run or watch, with the provider it asked for",
        .timeLimit(.minutes(2)), arguments: ["run", "watch"])
    func killedRescanIsFinishedByTheNextRun(command: String) async throws {
        let emma = CloudflareEmulator.Book(
            title: "Emma", author: "Jane Austen", confidence: 0.9, box2D: [100, 100, 900, 150])
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            try await withCloudflareEmulator(.init(licenseAgreed: true, reply: .books([emma]))) { cloudflare in
                let root = try ShelfRoot(geminiURL: gemini.baseURL, cloudflareURL: cloudflare.baseURL)
                let path = try root.drop(JPEGFactory.shelf(seed: 610), as: "hall/IMG_1.jpg")
                #expect(try await root.shelfd("run").status == 0)
                #expect(try root.resultDocuments().first?.decidedBy == "gemini")

                let killed = try await root.shelfd(
                    "rescan", "--provider", "cloudflare", path.path,
                    environment: ["SHELFD_FAILPOINT": "after_claim"])
                #expect(killed.status == SIGKILL, "the failpoint killed the rescan after its claim: \(killed.stderr)")
                #expect(cloudflare.requests.isEmpty, "killed before it asked")
                #expect(try await root.status().queue.leased == 1, "the job is left claimed by a dead process")

                // The configured provider is Gemini; the stranded job asked for Cloudflare and gets it.
                if command == "run" {
                    let run = try await root.shelfd("run")
                    #expect(run.status == 0, "\(run.stderr)")
                } else {
                    let daemon = try root.startDaemon()
                    try await waitUntil("the daemon finishes the rescan") { try await root.status().queue.done == 2 }
                    #expect(try await daemon.stop() == 0)
                }
                #expect(
                    cloudflare.requests.filter { !$0.isAgreement }.count == 1,
                    "Cloudflare, which the rescan asked for, read it")
                #expect(gemini.requests.count == 1, "Gemini read the photo once, before the rescan, and never again")
                let result = try #require(try root.resultDocuments().first)
                #expect(result.decidedBy == "cloudflare")
                #expect(result.books.map(\.title) == ["Emma"])
                let status = try await root.status()
                #expect(status.queue.pending == 0 && status.queue.leased == 0 && status.queue.done == 2)
            }
        }
    }
}
