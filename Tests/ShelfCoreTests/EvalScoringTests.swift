import Foundation
import Testing
@testable import ShelfCore

@Suite struct EvalScoringTests {
    static func book(_ title: String, _ author: String?, isbn: String? = nil, status: Book.Status = .verified) -> Book {
        Book(
            title: title, author: author, isbn13: isbn, isbn10: nil, confidence: 0.9, box: nil, status: status,
            source: "test")
    }

    static let truth = [
        TruthDocument.Book(title: "The Hobbit", author: "J. R. R. Tolkien", isbn13: "978-0-261-10221-7"),
        TruthDocument.Book(title: "Dune", author: "Frank Herbert", isbn13: "9780441172719"),
        TruthDocument.Book(title: "Emma", author: "Jane Austen"),
    ]

    @Test("Two right, one wrong, one missed: recall 2/3 and precision 2/3")
    func countsRightWrongAndMissed() {
        let reported = [
            Self.book("Hobbit", "J.R.R. Tolkien"), Self.book("Neuromancer", "William Gibson", status: .needsReview),
            Self.book("DUNE: Deluxe Edition", "Herbert, Frank"),
        ]
        let judgement = EvalScoring.judge(reported, against: Self.truth)
        #expect(judgement.matches == [0, nil, 1])
        #expect(judgement.missed == [2])
        #expect(
            judgement.score
                == EvalScore(
                    photos: 1, expected: 3, reported: 3, right: 2, wrongISBNs: 0, needsReview: 1, reviewWrong: 1),
            "the wrong book left for review is a question without a right answer")
        #expect(judgement.score.recall == 2.0 / 3 && judgement.score.precision == 2.0 / 3)
        #expect(judgement.score.needsReviewShare == 1.0 / 3)
    }

    @Test("A book reported twice is right once; a right book with another ISBN counts as a wrong ISBN")
    func oneToOneAndWrongISBN() {
        let reported = [
            Self.book("Dune", "Frank Herbert", isbn: "9780340960196"), Self.book("Dune", "Frank Herbert"),
            Self.book("The Hobbit", "Tolkien", isbn: "9780261102217"),
        ]
        let judgement = EvalScoring.judge(reported, against: Self.truth)
        #expect(judgement.score.right == 2 && judgement.score.wrong == 1)
        #expect(judgement.wrongISBN == [0], "the truth's ISBN is compared in any notation")
    }

    @Test("The same title by another author is wrong; a truth book without an author is judged on its title")
    func authorsDecide() {
        #expect(!EvalScoring.isSameBook(Self.book("Emma", "Emma Donoghue"), Self.truth[2]))
        #expect(!EvalScoring.isSameBook(Self.book("Emma", nil), Self.truth[2]))
        #expect(
            EvalScoring.isSameBook(
                Self.book("The Two Towers", "Tolkien"),
                TruthDocument.Book(title: "The Lord of the Rings: The Two Towers", author: "J.R.R. Tolkien")))
        #expect(
            EvalScoring.isSameBook(
                Self.book("Beowulf", "Seamus Heaney"), TruthDocument.Book(title: "Beowulf", author: nil)))
        // The truth book's ISBN is that book, however a record spells its author.
        #expect(EvalScoring.isSameBook(Self.book("The Hobbit", "Tolkein", isbn: "9780261102217"), Self.truth[0]))
        #expect(!EvalScoring.isSameBook(Self.book("The Hobbit", "Tolkein"), Self.truth[0]))
    }

    @Test("The pairing is a maximum matching: reading order does not change the counts")
    func maximumMatching() {
        let truth = [
            TruthDocument.Book(title: "Dune", author: nil), TruthDocument.Book(title: "Dune", author: "Frank Herbert"),
        ]
        let reported = [Self.book("Dune", "Frank Herbert"), Self.book("Dune", "Kevin J. Anderson")]
        #expect(EvalScoring.judge(reported, against: truth).score.right == 2)
        #expect(EvalScoring.judge(reported.reversed(), against: truth).score.right == 2)
    }

    @Test("Scores add up, and the JSON carries the ratios worked out")
    func sumsAndJSON() throws {
        let a = EvalScore(photos: 1, expected: 3, reported: 2, right: 2, wrongISBNs: 1, needsReview: 0, seconds: 1.5)
        let b = EvalScore(photos: 1, expected: 1, reported: 2, right: 1, wrongISBNs: 0, needsReview: 1, seconds: 0.5)
        let total = a + b
        #expect(
            total == EvalScore(photos: 2, expected: 4, reported: 4, right: 3, wrongISBNs: 1, needsReview: 1, seconds: 2)
        )
        #expect(total.secondsPerPhoto == 1)
        let data = try JSONStyle.encoder().encode(total)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["recall"] as? Double == 0.75 && object["precision"] as? Double == 0.75)
        #expect(object["missed"] as? Int == 1 && object["wrong_isbns"] as? Int == 1)
        #expect(try JSONStyle.decoder().decode(EvalScore.self, from: data) == total)
        #expect(EvalScore().recall == nil && EvalScore().precision == nil)
    }
}
