import Foundation
import Logging
import ShelfCore
import ShelfProviders
import ShelfImaging
@testable import ShelfOCR
import Testing

@Suite("Finding spines in the words Tesseract read")
struct SpineFinderTests {
    /// A 1000×600 shelf photo; only the reading turned for spines read top to bottom is asked.
    let photo = GreyImage(width: 1000, height: 600, pixels: [UInt8](repeating: 200, count: 1000 * 600))

    func word(_ text: String, _ confidence: Double, x: ClosedRange<Int>, y: ClosedRange<Int>) -> RecognisedWord {
        RecognisedWord(
            text: text, confidence: confidence, left: x.lowerBound, top: y.lowerBound,
            right: x.upperBound, bottom: y.upperBound)
    }

    @Test("Words sharing a line are one spine; a line far away is another; noise is dropped")
    func linesBecomeSpines() throws {
        let spines = try SpineFinder.spines(in: photo, readings: [.downward]) { turned in
            #expect(turned.width == 600 && turned.height == 1000) // turned a quarter for the spines
            return [
                word("DUNE", 90, x: 50...200, y: 100...140), word("HERBERT", 88, x: 230...420, y: 102...141),
                word("EMMA", 92, x: 50...180, y: 600...640), word("AUSTEN", 90, x: 210...380, y: 601...639),
                word("~", 20, x: 500...520, y: 300...330),
            ]
        }
        #expect(Set(spines.map(\.text)) == ["DUNE HERBERT", "EMMA AUSTEN"])
        for spine in spines {
            // Upright in the photo: a long thin region along the text, mapped back to the photo's coordinates.
            #expect((spine.box.y2 - spine.box.y1) * 600 > 3 * (spine.box.x2 - spine.box.x1) * 1000, "\(spine.box)")
            #expect(spine.reading == .downward)
        }
        #expect(spines.map(\.box.x1) == spines.map(\.box.x1).sorted()) // left to right
    }

    @Test("A few unsure letters are not a spine")
    func tooLittleEvidence() throws {
        let spines = try SpineFinder.spines(in: photo, readings: [.downward]) { _ in
            [word("il", 45, x: 50...70, y: 100...140)]
        }
        #expect(spines.isEmpty)
    }
}

@Suite("What the offline provider answers")
struct OCRAnswerTests {
    @Test(
        "Each spine is a book whose title is its text, for the enrichment to match; a reading saved by an older shelfd too"
    )
    func spinesAreSpineTexts() throws {
        let saved =
            #"{"schema":"shelfd.ocr/1","languages":["eng"],"width":100,"height":60,"notes":[],"spines":[{"spine":{"text":"DUNE HERBERT","box":{"x1":0.1,"y1":0.2,"x2":0.15,"y2":0.9},"confidence":0.8,"reading":"downward"},"decision":"accepted","match":{"title":"Dune","author":"Herbert, Frank","isbn":null,"source":"catalogue","key":"catalogue:1"},"book":{"title":"Dune","author":"Herbert, Frank","confidence":0.9}}]}"#
        let provider = OCRProvider(settings: OCRSettings(), logger: Logger(label: "test"))
        let answer = try provider.parse(RawResponse(body: Array(saved.utf8), receivedAt: Date()))
        #expect(
            answer.books == [
                Detection(
                    title: "DUNE HERBERT", confidence: 0.8, box: Box(x1: 0.1, y1: 0.2, x2: 0.15, y2: 0.9),
                    form: .spineText, textRun: .downward)
            ])
    }
}
