import Foundation
import ShelfRuntimeTesting
import ShelfTesting
import Testing

@Suite("[store] url on the command line", .serialized)
struct StoreSettingTests {
    /// A server at a closed port of this machine: doctor tries it, and no name is looked up.
    private let url = "postgresql://shelf:hunter2@127.0.0.1:9/books"

    @Test("doctor shows the PostgreSQL URL and where its password comes from, never the password")
    func doctorShowsTheURL() async throws {
        let root = try ShelfRoot(
            apiKey: nil, overrides: ["pipeline": ["provider": "\"ocr\""], "store": ["url": "\"\(url)\""]])
        let fromURL = try await root.shelfd("doctor")
        #expect(
            fromURL.stdout.contains("PostgreSQL at postgresql://shelf@127.0.0.1:9/books (password: the URL)"),
            "\(fromURL.stdout)")
        let fromSecret = try await root.shelfd(["doctor"], environment: ["STORE_PASSWORD": "s3cret-pass"])
        #expect(fromSecret.stdout.contains("(password: the secret store_password)"))
        for output in [fromURL.stdout + fromURL.stderr, fromSecret.stdout + fromSecret.stderr] {
            #expect(!output.contains("hunter2") && !output.contains("s3cret-pass"))
        }
    }

    @Test("A URL that is not PostgreSQL's stops every command with the key and what to write, without the password")
    func badURLStops() async throws {
        let root = try ShelfRoot(overrides: ["store": ["url": "\"mysql://shelf:hunter2@db/books\""]])
        let result = try await root.shelfd("status")
        #expect(result.status == 1)
        #expect(result.stderr.contains("store.url"))
        #expect(result.stderr.contains("postgresql://"))
        #expect(!result.stderr.contains("hunter2"))
    }
}
