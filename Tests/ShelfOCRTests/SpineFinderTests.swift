import ShelfCore
import ShelfEnrichment
import ShelfImaging
@testable import ShelfOCR
import Testing

@Suite("Finding spines in the words Tesseract read")
struct SpineFinderTests {
    /// A 1000×600 shelf photo; only the reading turned for spines read top to bottom is asked.
    let photo = GreyImage(width: 1000, height: 600, pixels: [UInt8](repeating: 200, count: 1000 * 600))

    func word(_ text: String, _ confidence: Double, x: ClosedRange<Int>, y: ClosedRange<Int>) -> RecognisedWord {
        RecognisedWord(text: text, confidence: confidence, left: x.lowerBound, top: y.lowerBound,
                       right: x.upperBound, bottom: y.upperBound)
    }

    @Test("Words sharing a line are one spine; a line far away is another; noise is dropped")
    func linesBecomeSpines() throws {
        let spines = try SpineFinder.spines(in: photo, readings: [.downward]) { turned in
            #expect(turned.width == 600 && turned.height == 1000)      // turned a quarter for the spines
            return [word("DUNE", 90, x: 50...200, y: 100...140), word("HERBERT", 88, x: 230...420, y: 102...141),
                    word("EMMA", 92, x: 50...180, y: 600...640), word("AUSTEN", 90, x: 210...380, y: 601...639),
                    word("~", 20, x: 500...520, y: 300...330)]
        }
        #expect(Set(spines.map(\.text)) == ["DUNE HERBERT", "EMMA AUSTEN"])
        for spine in spines {
            // Upright in the photo: a long thin region along the text, mapped back to the photo's coordinates.
            #expect((spine.box.y2 - spine.box.y1) * 600 > 3 * (spine.box.x2 - spine.box.x1) * 1000, "\(spine.box)")
            #expect(spine.reading == .downward)
        }
        #expect(spines.map(\.box.x1) == spines.map(\.box.x1).sorted())     // left to right
    }

    @Test("A few unsure letters are not a spine")
    func tooLittleEvidence() throws {
        let spines = try SpineFinder.spines(in: photo, readings: [.downward]) { _ in
            [word("il", 45, x: 50...70, y: 100...140)]
        }
        #expect(spines.isEmpty)
    }
}

@Suite("A spine's pieces read apart")
struct SpineFragmentTests {
    let matcher = SpineMatcher()

    func reading(_ text: String, x: ClosedRange<Double>, title: String, author: String,
                 _ decision: MatchDecision) -> OCRResponse.Reading {
        let record = CatalogueRecord(source: "catalogue", key: "catalogue:\(title)", title: title, author: author)
        let best = MatchCandidate(record: record, score: decision == .accepted ? 0.8 : 0.5)
        let spine = Spine(text: text, box: Box(x1: x.lowerBound, y1: 0.3, x2: x.upperBound, y2: 0.8), confidence: 0.9,
                          reading: .downward)
        return OCRProvider.reading(spine, result: MatchResult(best: best, candidates: [best], decision: decision),
                                   matcher: matcher)
    }

    @Test("The author's name beside the spine showing their title is part of it, not another of their books")
    func authorBesideTitle() {
        let title = reading("Jane Eyre", x: 0.31...0.34, title: "Jane Eyre", author: "Brontë, Charlotte", .accepted)
        let author = reading("Charlotte Bronte", x: 0.28...0.30, title: "Shirley", author: "Brontë, Charlotte", .review)
        #expect(OCRProvider.isFragment(author, among: [title, author]))
        #expect(!OCRProvider.isFragment(title, among: [title, author]))
    }

    @Test("An author's name on a spine of its own, or one showing its own title, stays a book")
    func separateSpines() {
        let pride = reading("Pride and Prejudice Jane Austen", x: 0.06...0.08, title: "Pride and Prejudice",
                            author: "Austen, Jane", .accepted)
        let farAway = reading("Jane Austen", x: 0.14...0.15, title: "Emma", author: "Austen, Jane", .review)
        #expect(!OCRProvider.isFragment(farAway, among: [pride, farAway]))
        let ownTitle = reading("Emma Austen", x: 0.085...0.10, title: "Emma", author: "Austen, Jane", .review)
        #expect(!OCRProvider.isFragment(ownTitle, among: [pride, ownTitle]))
    }
}
