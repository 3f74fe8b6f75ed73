import Foundation
import ShelfCore
import ShelfHTTP
import ShelfProviders
import ShelfTesting
import Testing

@Suite("Reading the model's answer")
struct AnswerParserTests {
    static let answer =
        #"{"books": [{"title": "Dune", "author": "Frank Herbert", "isbn": null, "confidence": 0.9, "box_2d": [100, 200, 900, 260]}], "suggestions": []}"#

    @Test(
        "Fences, prose and whitespace around the object are tolerated",
        arguments: [
            answer, "  \n" + answer + " \n", "```json\n" + answer + "\n```",
            "Here are the books:\n" + answer + "\nHope this helps {really}.",
            "```\n" + answer + "\n```\nNote: one spine was unreadable.",
        ])
    func tolerated(_ text: String) throws {
        let parsed = try #require(AnswerParser.answer(from: text))
        #expect(
            parsed.books == [
                Detection(
                    title: "Dune", author: "Frank Herbert", confidence: 0.9,
                    box: Box(x1: 0.2, y1: 0.1, x2: 0.26, y2: 0.9))
            ])
    }

    @Test(
        "Text that is not the answer gives nil",
        arguments: [
            "", "I can see several books but cannot read them.", #"{"books": [{"title": "Du"#, #"{"shelf": "oak"}"#,
            "[1, 2, 3]",
        ])
    func notAnAnswer(_ text: String) {
        #expect(AnswerParser.answer(from: text) == nil)
    }

    @Test("Braces inside strings do not confuse the object's end")
    func bracesInStrings() throws {
        let text = #"{"books": [{"title": "Sets {and} \"braces\"", "confidence": 0.7}]} trailing }"#
        #expect(try #require(AnswerParser.answer(from: text)).books.first?.title == #"Sets {and} "braces""#)
    }

    @Test("Loose values are cleaned up and noted")
    func looseValues() throws {
        let text = #"""
            {"books": [
              {"title": "  ", "confidence": 0.9},
              {"author": "Nobody", "confidence": 0.9},
              {"title": "Emma", "author": "", "isbn": 9780141439587, "confidence": 1.7, "box_2d": [-20, 100, 1200, 150]},
              {"title": "Persuasion", "confidence": "0.4", "box_2d": [1, 2, 3]},
              {"title": "Sanditon"}
            ],
            "suggestions": [{"type": "glare_detected", "severity": "WARNING", "message": "Glare."},
                            {"type": "cat_in_photo", "severity": "info", "message": "A cat."}]}
            """#
        let parsed = try #require(AnswerParser.answer(from: text))
        #expect(parsed.books.map(\.title) == ["Emma", "Persuasion", "Sanditon"])
        let emma = parsed.books[0]
        #expect(emma.author == nil && emma.isbn == "9780141439587" && emma.confidence == 1)
        #expect(emma.box == Box(x1: 0.1, y1: 0, x2: 0.15, y2: 1))
        #expect(parsed.books[1].confidence == 0.4 && parsed.books[1].box == nil)
        #expect(parsed.books[2].confidence == 0)
        #expect(parsed.suggestions == [Suggestion(type: .glareDetected, severity: .warning, message: "Glare.")])
        let notes = parsed.notes.joined(separator: "\n")
        for expected in [
            "book_without_title_dropped", "confidence_clamped: Emma", "box_clamped: Emma", "box_invalid: Persuasion",
            "confidence_missing: Sanditon", "unknown_suggestion_type_ignored: cat_in_photo",
        ] {
            #expect(notes.contains(expected), "\(expected) missing from \(notes)")
        }
    }

    /// A generateContent body around `parts`, as saved to disk.
    func raw(parts: String, finishReason: String = "STOP") -> RawResponse {
        RawResponse(
            body: Array(
                #"{"candidates": [{"content": {"role": "model", "parts": \#(parts)}, "finishReason": "\#(finishReason)", "index": 0}]}"#
                    .utf8),
            receivedAt: Date())
    }

    func provider() -> GeminiProvider {
        GeminiProvider(
            settings: .unsent, http: HTTPClient(maxConcurrent: 1),
            logger: CapturedLogs().logger)
    }

    func encoded(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text], options: .fragmentsAllowed), as: UTF8.self)
            .dropFirst().dropLast().description
    }

    @Test("A saved body parses again, thought parts skipped")
    func reparseSavedBody() throws {
        let parts = #"[{"text": "Thinking about {books}", "thought": true}, {"text": \#(encoded(Self.answer))}]"#
        let answer = try provider().parse(raw(parts: parts))
        #expect(answer.books.map(\.title) == ["Dune"])
    }

    @Test("A cut answer with MAX_TOKENS is truncated; with STOP it is nonsense")
    func cutAnswer() throws {
        let cut = encoded(String(Self.answer.prefix(60)))
        do {
            _ = try provider().parse(raw(parts: #"[{"text": \#(cut)}]"#, finishReason: "MAX_TOKENS"));
            Issue.record("parsed")
        } catch { #expect(error.code == .providerTruncated && error.disposition == .retry(after: nil)) }
        do { _ = try provider().parse(raw(parts: #"[{"text": \#(cut)}]"#)); Issue.record("parsed") } catch {
            #expect(error.code == .providerNonsense && error.disposition == .retry(after: nil))
        }
    }

    @Test(
        "Retry delays in Gemini's notations",
        arguments: [("59s", 59.0), ("0.5s", 0.5), ("900ms", 0.9), ("1.25s", 1.25)])
    func retryDelays(_ text: String, _ seconds: Double) {
        #expect(GeminiProvider.seconds(text) == seconds)
    }
}

@Suite("The Gemini emulator rejects requests Gemini would not take")
struct GeminiEmulatorValidationTests {
    func post(_ gemini: GeminiEmulator, _ body: String, model: String = "gemini-2.5-flash") async throws -> HTTPResponse
    {
        try await HTTPClient(maxConcurrent: 1).send(
            HTTPRequest(
                method: "POST",
                url: gemini.baseURL + "/v1beta/models/\(model):generateContent?key=\(GeminiEmulator.defaultKey)",
                headers: [("Content-Type", "application/json")], body: Array(body.utf8)))
    }

    static let image = Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]).base64EncodedString()
    static let goodConfig =
        #""generationConfig": {"responseMimeType": "application/json", "responseSchema": {"type": "OBJECT", "properties": {"books": {"type": "ARRAY", "items": {"type": "STRING"}}}}, "maxOutputTokens": 8192, "thinkingConfig": {"thinkingBudget": 512}}"#

    @Test("A well-formed snake_case request with the key in the query is answered")
    func accepted() async throws {
        try await withGeminiEmulator { gemini in
            let body =
                #"{"contents": [{"parts": [{"inlineData": {"mimeType": "image/jpeg", "data": "\#(Self.image)"}}, {"text": "list"}]}], \#(Self.goodConfig)}"#
            let response = try await post(gemini, body)
            #expect(response.status == 200)
            #expect(gemini.requests.first?.keySource == .query)
        }
    }

    @Test(
        "Malformed requests get 400 with BadRequest field violations",
        arguments: [
            #"{"contents": [{"parts": [{"text": "list"}, {"inline_data": {"mime_type": "image/jpeg", "data": "\#(image)"}}]}], \#(goodConfig)}"#,
            #"{"contents": [{"parts": [{"inline_data": {"mime_type": "image/gif", "data": "\#(image)"}}, {"text": "list"}]}], \#(goodConfig)}"#,
            #"{"contents": [{"parts": [{"inline_data": {"mime_type": "image/jpeg", "data": "@@@"}}, {"text": "list"}]}], \#(goodConfig)}"#,
            #"{"contents": [{"parts": [{"inline_data": {"mime_type": "image/jpeg", "data": "\#(image)"}}, {"text": "list"}]}], \#(goodConfig.replacingOccurrences(of: "\"OBJECT\"", with: "\"object\""))}"#,
            #"{"contents": [{"parts": [{"inline_data": {"mime_type": "image/jpeg", "data": "\#(image)"}}, {"text": "list"}]}], \#(goodConfig.replacingOccurrences(of: "8192", with: "2048"))}"#,
            #"{"contents": [{"parts": [{"inline_data": {"mime_type": "image/jpeg", "data": "\#(image)"}}, {"text": "list"}]}], \#(goodConfig.replacingOccurrences(of: "\"type\": \"OBJECT\"", with: "\"title\": \"Answer\", \"type\": \"OBJECT\""))}"#,
            "not json",
        ])
    func rejected(_ body: String) async throws {
        try await withGeminiEmulator { gemini in
            let response = try await post(gemini, body)
            #expect(response.status == 400)
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(
                text.contains("INVALID_ARGUMENT") && text.contains("google.rpc.BadRequest")
                    && text.contains("fieldViolations"))
        }
    }
}
