import Foundation
import Logging
import Synchronization
import ShelfConfig
import ShelfCore
import ShelfEnrichment
import ShelfImaging
import ShelfProviders
import ShelfStore
import ShelfTesting
import Testing
@testable import ShelfPipeline

/// A provider that answers from a script, one reply per request, and remembers what it was sent.
final class ScriptedProvider: VisionProvider {
    let name: String
    let model = "scripted-1"
    let preset = ImagePreset(maxSide: 600, quality: 85, targetBytes: 20_000...60_000, minQuality: 60)
    private let script: Mutex<[Result<ModelAnswer, PhotoError>]>
    private let sent = Mutex<[PhotoUpload]>([])
    private let answers = Mutex<[Int: ModelAnswer]>([:])

    init(_ name: String, _ replies: [Result<ModelAnswer, PhotoError>]) {
        self.name = name
        script = Mutex(replies)
    }

    var uploads: [PhotoUpload] { sent.withLock { $0 } }

    func send(_ photo: PhotoUpload) async throws(PhotoError) -> RawResponse {
        let index = sent.withLock {
            $0.append(photo); return $0.count - 1
        }
        let reply = script.withLock {
            $0.isEmpty ? .failure(PhotoError(.internal, "unscripted request", disposition: .dead)) : $0.removeFirst()
        }
        switch reply {
        case .success(let answer):
            answers.withLock { $0[index] = answer }
            return RawResponse(body: Array("\(index)".utf8), receivedAt: Date(), latency: .milliseconds(5))
        case .failure(let error):
            throw error
        }
    }

    func parse(_ raw: RawResponse) throws(PhotoError) -> ModelAnswer {
        guard let index = Int(String(decoding: raw.body, as: UTF8.self)), let answer = answers.withLock({ $0[index] })
        else {
            throw PhotoError(.providerNonsense, "not an answer of this provider", disposition: .retry(after: nil))
        }
        return answer
    }

    func checkReachable() async -> Result<String, PhotoError> { .success("scripted") }
}

/// Answers kept in memory; counts what was saved.
final class MemoryJournal: AnswerJournal {
    private let kept = Mutex<[String: SavedAnswer]>([:])

    func keep(_ raw: RawResponse, for provider: String) {
        kept.withLock { $0[provider] = SavedAnswer(id: nil, raw: raw, file: "saved/\(provider).json", latencyMs: 1234) }
    }
    var savedCount: Int { kept.withLock { $0.count } }

    func saved(from provider: any VisionProvider) -> SavedAnswer? { kept.withLock { $0[provider.name] } }
    func save(_ raw: RawResponse, from provider: any VisionProvider, latencyMs: Int) -> SavedAnswer {
        let saved = SavedAnswer(id: nil, raw: raw, file: "saved/\(provider.name).json", latencyMs: latencyMs)
        kept.withLock { $0[provider.name] = saved }
        return saved
    }
    func discard(_ saved: SavedAnswer) {}
}

final class CountingMeter: AttemptMeter {
    private let count = Mutex(0)
    var charges: Int { count.withLock { $0 } }
    func charge() throws -> Int {
        count.withLock {
            $0 += 1; return 1
        }
    }
}

/// A provider health that is down for the providers named, and hears every report.
final class RecordingHealth: ProviderHealthRecorder {
    let down: Set<String>
    private let reports = Mutex<[String]>([])
    init(down: Set<String> = []) { self.down = down }
    var heard: [String] { reports.withLock { $0 } }

    func turn(_ provider: String) -> ProviderTurn {
        down.contains(provider)
            ? .wait(ProviderHealth(name: provider, state: .unreachable, message: "could not connect")) : .open
    }
    func current(_ provider: String) -> ProviderHealth? { nil }
    func requested(_ provider: String, latency: Duration, outcome: String) {}
    func answered(_ provider: String) { reports.withLock { $0.append("\(provider) answered") } }
    func failed(_ provider: String, error: PhotoError, probe: Bool) -> ProviderHealth? {
        reports.withLock { $0.append("\(provider) failed: \(error.code.rawValue)") }
        return nil
    }
}

@Suite struct PhotoReaderTests {
    static let photo = JPEGFactory.shelf(width: 640, height: 480, seed: 7)
    static let logger = Logger(label: "test")

    static func answer(_ books: [(String, Double)]) -> ModelAnswer {
        ModelAnswer(books: books.map { Detection(title: $0.0, author: "Someone", confidence: $0.1) })
    }

    static func reader(
        _ lineup: Lineup, health: any ProviderHealthRecorder = UntrackedProviderHealth()
    ) -> PhotoReader {
        PhotoReader(
            lineup: lineup, enricher: Enricher(sources: [], reviewThreshold: 0.6), reviewThreshold: 0.6,
            maxPixels: 64_000_000, health: health, time: .system)
    }

    /// What `reader` makes of the photo, with a journal and a meter no test looks at.
    static func reading(_ reader: PhotoReader) async -> PhotoReading {
        await reader.read(photo, journal: MemoryJournal(), meter: CountingMeter(), logger: logger)
    }

    /// The fast provider first, the accurate one below 0.7.
    static func hybrid(_ fast: ScriptedProvider, _ accurate: ScriptedProvider) -> Lineup {
        .hybrid(fast: channel(fast), accurate: channel(accurate), escalateBelow: 0.7)
    }

    static func books(_ reading: PhotoReading) throws -> ReadPhoto {
        guard case .read(let read) = reading else { Issue.record("no reading: \(reading)"); throw CancellationError() }
        return read
    }

    @Test("One provider's answer becomes checked books, with its run recorded")
    func singleProvider() async throws {
        let gemini = ScriptedProvider("gemini", [.success(Self.answer([("Dune", 0.9), ("Emma", 0.8)]))])
        let journal = MemoryJournal(), meter = CountingMeter()
        let read = try Self.books(
            await Self.reader(.single(channel(gemini)))
                .read(Self.photo, journal: journal, meter: meter, logger: Self.logger))
        #expect(read.books.map(\.title) == ["Dune", "Emma"])
        #expect(read.books.allSatisfy { $0.source == "gemini" })
        #expect(read.runs.map(\.provider) == ["gemini"] && read.decided.books == 2)
        #expect(
            read.decided.response?.replayed == false && journal.savedCount == 1, "the answer is saved before it is used"
        )
        #expect(meter.charges == 1 && gemini.uploads.count == 1)
    }

    @Test("A photo the provider finds too large is sent again once, smaller")
    func shrinksAndRetries() async throws {
        let tooLarge = PhotoError(.photoTooLarge, "request entity too large", disposition: .dead)
        let gemini = ScriptedProvider("gemini", [.failure(tooLarge), .success(Self.answer([("Dune", 0.9)]))])
        let read = try Self.books(await Self.reading(Self.reader(.single(channel(gemini)))))
        #expect(read.books.map(\.title) == ["Dune"])
        let uploads = gemini.uploads
        #expect(uploads.count == 2)
        #expect(uploads.count == 2 && uploads[1].bytes.count < uploads[0].bytes.count)
        let sent = try #require(read.decided.sent)
        #expect(max(sent.width, sent.height) <= 600 * 7 / 10, "the run names the smaller photo that was sent")
    }

    @Test("Hybrid asks the accurate provider below escalate_below and merges both readings")
    func hybridEscalatesAndMerges() async throws {
        let fast = ScriptedProvider("cloudflare", [.success(Self.answer([("Dune", 0.5), ("Emma", 0.9)]))])
        let accurate = ScriptedProvider("gemini", [.success(Self.answer([("Dune", 0.95), ("Ulysses", 0.8)]))])
        let read = try Self.books(await Self.reading(Self.reader(Self.hybrid(fast, accurate))))
        #expect(read.books.map(\.title) == ["Dune", "Ulysses", "Emma"])
        #expect(read.books.map(\.source) == ["gemini", "gemini", "cloudflare"])
        #expect(read.runs.map(\.provider) == ["cloudflare", "gemini"] && read.decided.provider == "gemini")
        #expect(read.notAsked == nil)

        let sure = ScriptedProvider("cloudflare", [.success(Self.answer([("Emma", 0.9)]))])
        let untouched = ScriptedProvider("gemini", [])
        let confident = try Self.books(await Self.reading(Self.reader(Self.hybrid(sure, untouched))))
        #expect(
            confident.books.map(\.title) == ["Emma"] && untouched.uploads.isEmpty,
            "a sure fast reading is not escalated")
    }

    @Test("When the accurate provider fails, the fast reading is kept and every book waits for review")
    func accurateFailsFastKept() async throws {
        let fast = ScriptedProvider("cloudflare", [.success(Self.answer([("Dune", 0.5)]))])
        let blocked = PhotoError(.providerBlocked, "The answer was blocked. Try another photo.", disposition: .dead)
        let accurate = ScriptedProvider("gemini", [.failure(blocked)])
        let read = try Self.books(await Self.reading(Self.reader(Self.hybrid(fast, accurate))))
        #expect(read.books.map(\.title) == ["Dune"] && read.decided.provider == "cloudflare")
        #expect(
            read.books.allSatisfy {
                $0.status == .needsReview && $0.reviewReasons?.contains(AccurateNotAsked.reviewReason) == true
            })
        let notAsked = try #require(read.notAsked)
        #expect(notAsked.provider == "gemini" && notAsked.error?.code == .providerBlocked)
        #expect(notAsked.note.contains("The answer was blocked"))
        #expect(read.runs.map(\.provider) == ["cloudflare", "gemini"] && read.runs.last?.error != nil)
    }

    @Test("A saved answer is replayed: the provider is not asked and nothing is charged")
    func replaysSavedAnswer() async throws {
        let first = ScriptedProvider("gemini", [.success(Self.answer([("Dune", 0.9)]))])
        let journal = MemoryJournal()
        _ = try Self.books(
            await Self.reader(.single(channel(first)))
                .read(Self.photo, journal: journal, meter: CountingMeter(), logger: Self.logger))

        // The same provider after a restart: its script is empty, so any request would fail the photo.
        let meter = CountingMeter()
        let read = try Self.books(
            await Self.reader(.single(channel(first)))
                .read(Self.photo, journal: journal, meter: meter, logger: Self.logger))
        #expect(read.books.map(\.title) == ["Dune"])
        #expect(read.decided.response?.replayed == true && read.decided.response?.file == "saved/gemini.json")
        #expect(first.uploads.count == 1 && meter.charges == 0)
    }

    @Test("A provider that is down is not asked; the fast reading is kept and each outcome is reported to the health")
    func providerDownIsNotAsked() async throws {
        let fast = ScriptedProvider("cloudflare", [.success(Self.answer([("Dune", 0.5)]))])
        let accurate = ScriptedProvider("gemini", [.success(Self.answer([("Dune", 0.9)]))])
        let health = RecordingHealth(down: ["gemini"])
        let read = try Self.books(await Self.reading(Self.reader(Self.hybrid(fast, accurate), health: health)))
        #expect(accurate.uploads.isEmpty)
        #expect(read.notAsked?.provider == "gemini" && read.notAsked?.error == nil)
        #expect(read.notAsked?.reason.contains("could not connect") == true)
        #expect(health.heard == ["cloudflare answered"])

        let reported = RecordingHealth()
        let failing = ScriptedProvider(
            "gemini", [.failure(PhotoError(.providerAuth, "The key was refused.", disposition: .providerBroken))])
        let unread = await Self.reading(Self.reader(.single(channel(failing)), health: reported))
        guard case .unread(.failed(let error, _), let channel, let runs) = unread else {
            Issue.record("expected a failure: \(unread)"); return
        }
        #expect(error.code == .providerAuth && channel.name == "gemini" && runs.count == 1)
        #expect(reported.heard == ["gemini failed: provider_auth"], "reported once, by the reader")
    }
}

/// A scripted provider as the pipeline holds it: its kind is the one its name says, with no request limit.
func channel(_ provider: ScriptedProvider) -> ProviderChannel {
    ProviderChannel(provider, kind: ProviderKind(rawValue: provider.name) ?? .gemini, limits: nil)
}
