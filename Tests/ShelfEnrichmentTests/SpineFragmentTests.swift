import ShelfCore
@testable import ShelfMatching
@testable import ShelfEnrichment
import Testing

@Suite("A spine's pieces read apart")
struct SpineFragmentTests {
    /// A spine's text as the offline OCR reads it, and what the matcher made of it.
    struct Reading {
        var book: Book
        var result: MatchResult
    }

    func reading(
        _ text: String, x: ClosedRange<Double>, title: String, author: String, tag: String? = nil,
        _ decision: MatchDecision
    ) -> Reading {
        let record = CatalogueRecord(
            source: "catalogue", key: "catalogue:\(title)", title: title, author: author, tag: tag)
        let best = MatchCandidate(record: record, score: decision == .accepted ? 0.8 : 0.5)
        var book = Book(
            title: text, author: nil, isbn13: nil, isbn10: nil, confidence: 0.9,
            box: Box(x1: x.lowerBound, y1: 0.3, x2: x.upperBound, y2: 0.8), status: .verified, source: "ocr")
        book.form = .spineText
        return Reading(book: book, result: MatchResult(best: best, candidates: [best], decision: decision))
    }

    func isFragment(_ reading: Reading, among readings: [Reading]) -> Bool {
        let index = readings.firstIndex { $0.book == reading.book }!
        return Enricher.fragmentOwner(at: index, texts: readings.map(\.book), results: readings.map(\.result)) != nil
    }

    @Test("The author's name beside the spine showing their title is part of it, not another of their books")
    func authorBesideTitle() {
        let title = reading("Jane Eyre", x: 0.31...0.34, title: "Jane Eyre", author: "Brontë, Charlotte", .accepted)
        let author = reading("Charlotte Bronte", x: 0.28...0.30, title: "Shirley", author: "Brontë, Charlotte", .review)
        #expect(isFragment(author, among: [title, author]))
        #expect(!isFragment(title, among: [title, author]))
    }

    @Test("A subtitle beside its title and the authors set across the spine above it are the spine's, not books")
    func piecesOfOneSpine() {
        let tale = reading(
            "Guardian The Ancestor's Tale WEN", x: 0.378...0.442,
            title: "The Ancestor's Tale: A Pilgrimage to the Dawn of Life",
            author: "Dawkins, Richard", .review)
        let taleRecord = tale.result.best!
        var subtitle = reading(
            "A Pilgrimage to the Dawn of Life", x: 0.375...0.41, title: "The Possibility of Life",
            author: "Green, Jaime",
            .review)
        subtitle.result.candidates.append(MatchCandidate(record: taleRecord.record, score: 0.4))
        var authors = reading(
            "DAWKINS WONG 'Extraordinary'", x: 0.3425...0.4645, title: "El Contracte", author: "Wong, Anna", .review)
        authors.result.candidates.append(MatchCandidate(record: taleRecord.record, score: 0.3))
        #expect(isFragment(subtitle, among: [tale, subtitle, authors]))
        #expect(isFragment(authors, among: [tale, subtitle, authors]))
        #expect(!isFragment(tale, among: [tale, subtitle, authors]))
        // Not beside it: another spine, whatever its candidates.
        var elsewhere = subtitle
        elsewhere.book.box = Box(x1: 0.6, y1: 0.3, x2: 0.64, y2: 0.8)
        #expect(!isFragment(elsewhere, among: [tale, elsewhere]))
        // A spine that shows the title too is another copy or volume, not a piece.
        var volume = reading("The Ancestor's Tale II", x: 0.40...0.45, title: "Other", author: "Someone", .review)
        volume.result.candidates.append(MatchCandidate(record: taleRecord.record, score: 0.6))
        #expect(!isFragment(volume, among: [tale, volume]))
    }

    @Test("An author's name on a spine of its own, or one showing its own title, stays a book")
    func separateSpines() {
        let pride = reading(
            "Pride and Prejudice Jane Austen", x: 0.06...0.08, title: "Pride and Prejudice",
            author: "Austen, Jane", .accepted)
        let farAway = reading("Jane Austen", x: 0.14...0.15, title: "Emma", author: "Austen, Jane", .review)
        #expect(!isFragment(farAway, among: [pride, farAway]))
        let ownTitle = reading("Emma Austen", x: 0.085...0.10, title: "Emma", author: "Austen, Jane", .review)
        #expect(!isFragment(ownTitle, among: [pride, ownTitle]))
    }

    @Test("A piece with a call-number label of its own, beside a spine showing the same class, is the next book")
    func ownLabelIsAnotherBook() {
        // A library shelves one author's books side by side, each with its label: 796.422 Ali three times.
        let feliç = reading(
            "796.422 Ali Arcadi Alibés Córrer per ser feliç", x: 0.77...0.79, title: "Córrer per ser feliç",
            author: "Alibés, Arcadi", tag: "796.422 Ali", .accepted)
        let next = reading(
            "796.422 Al1 OERR 3 ARCADH ALIBES", x: 0.79...0.80, title: "Córrer per ser feliç",
            author: "Alibés, Arcadi", tag: "796.422 Ali", .review)
        #expect(!isFragment(next, among: [feliç, next]))
        // The label read apart from its own spine's title is still that spine's.
        let label = reading(
            "796.422 Ali", x: 0.79...0.80, title: "Córrer per ser feliç", author: "Alibés, Arcadi",
            tag: "796.422 Ali", .review)
        let titleOnly = reading(
            "Arcadi Alibés Córrer per ser feliç", x: 0.77...0.79, title: "Córrer per ser feliç",
            author: "Alibés, Arcadi", tag: "796.422 Ali", .accepted)
        #expect(isFragment(label, among: [titleOnly, label]))
        // A call number of letters only ("N Pal") shows its author's code: a spine with the author's name and its
        // own label beside one showing its title and label is the author's next book.
        let amor = reading(
            "N Pal Alejandro Palomas Un amor", x: 0.82...0.85, title: "Un amor", author: "Palomas, Alejandro",
            tag: "N Pal", .accepted)
        let agua = reading(
            "199 ALEJANDRO PALOMAS Pal", x: 0.85...0.89, title: "Agua cerrada", author: "Palomas, Alejandro",
            tag: "N Pal", .review)
        #expect(!isFragment(agua, among: [amor, agua]))
        // Without its label it is the name beside the title: part of that spine.
        let name = reading(
            "199 ALEJANDRO PALOMAS", x: 0.85...0.89, title: "Agua cerrada", author: "Palomas, Alejandro",
            tag: "N Pal", .review)
        #expect(isFragment(name, among: [amor, name]))
    }
}
