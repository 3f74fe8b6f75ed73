import Foundation
import ShelfCore
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("Cloudflare Workers AI, end to end", .serialized)
struct CloudflareTests {
    @Test(
        "scan --provider cloudflare reads a photo Gemini already read; the license is agreed once, for good",
        .timeLimit(.minutes(1)))
    func scanWithAnotherProvider() async throws {
        let fast = CloudflareEmulator.Book(
            title: "Emma", author: "Jane Austen", confidence: 0.8, box2D: [100, 100, 900, 150])
        try await withGeminiEmulator(.always(.books([dune]))) { gemini in
            try await withCloudflareEmulator(.init(reply: .books([fast]))) { cloudflare in
                let root = try ShelfRoot(geminiURL: gemini.baseURL, cloudflareURL: cloudflare.baseURL)
                let photo = try root.drop(JPEGFactory.shelf(seed: 800), as: "a.jpg")
                #expect(try await root.shelfd("run").status == 0)
                #expect(try root.resultDocuments().first?.decidedBy == "gemini")

                let scan = try await root.shelfd("scan", "--provider", "cloudflare", photo.path)
                #expect(scan.status == 0, "\(scan.stderr)")
                #expect(scan.stdout.contains("Emma — Jane Austen"))
                #expect(scan.stdout.contains("(cloudflare, @cf/meta/llama-3.2-11b-vision-instruct)"))
                #expect(try root.resultDocuments().first?.decidedBy == "cloudflare")
                #expect(cloudflare.requests.filter(\.isAgreement).count == 1)

                // Another process, another photo: the agreement is remembered.
                let second = try root.drop(JPEGFactory.shelf(seed: 801), as: "b.jpg")
                #expect(try await root.shelfd("scan", "--provider", "cloudflare", second.path).status == 0)
                #expect(cloudflare.requests.filter(\.isAgreement).count == 1)
                #expect(gemini.requests.count == 1, "the cloudflare scans never touched Gemini")
                #expect(try await root.status().queue.pending == 0)
            }
        }
    }
}
