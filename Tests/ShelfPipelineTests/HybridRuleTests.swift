import ShelfCore
import Testing
@testable import ShelfPipeline

@Suite struct HybridRuleTests {
    static func answer(_ confidences: [Double]) -> ModelAnswer {
        ModelAnswer(
            books: confidences.enumerated().map { Detection(title: "Book \($0.offset)", confidence: $0.element) })
    }

    @Test(
        "The accurate provider is asked exactly when a book is below the line or nothing was read",
        arguments: [([0.9, 0.8], false), ([0.9, 0.69], true), ([0.70], false), ([Double](), true), ([0.2], true)])
    func escalation(confidences: [Double], escalates: Bool) {
        #expect(PhotoReader.needsAccurateProvider(Self.answer(confidences), escalateBelow: 0.70) == escalates)
    }

    @Test("The accurate reading wins per book; books only the fast provider saw stay, under its name")
    func mergeKeepsBothProvidersBooks() {
        func book(_ title: String, _ author: String?, _ confidence: Double, _ source: String) -> Book {
            Book(
                title: title, author: author, isbn13: nil, isbn10: nil, confidence: confidence, box: nil,
                status: .verified, source: source)
        }
        let fast = [book("Dune", "Frank Herbert", 0.5, "cloudflare"), book("Emma", "Jane Austen", 0.9, "cloudflare")]
        let accurate = [book("DUNE", "Herbert, Frank", 0.95, "gemini"), book("Ulysses", "James Joyce", 0.8, "gemini")]
        let merged = PhotoReader.merge(accurate: accurate, fast: fast)
        #expect(merged.map(\.title) == ["DUNE", "Ulysses", "Emma"])
        #expect(merged.map(\.source) == ["gemini", "gemini", "cloudflare"])
        #expect(merged.first?.confidence == 0.95)
    }
}
