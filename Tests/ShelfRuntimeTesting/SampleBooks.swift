import ShelfCore
import ShelfDigest
import ShelfImaging
import ShelfTesting

/// Books the Gemini emulator answers in the tests of the runtime, the web site and the binary: one with its ISBN,
/// one without, and one read too poorly to be taken.
package let dune = GeminiEmulator.Book(
    title: "Dune", author: "Frank Herbert", isbn: "978-0-441-17271-9", confidence: 0.93,
    box2D: [120, 410, 880, 450])
package let hobbit = GeminiEmulator.Book(
    title: "The Hobbit", author: "J. R. R. Tolkien", confidence: 0.88, box2D: [100, 500, 900, 540])
package let blurry = GeminiEmulator.Book(
    title: "Smudged Spine", author: nil, confidence: 0.31, box2D: [150, 600, 850, 630])

/// Dune read as a second work, for the library's edit, merge and remove tests to merge into Dune.
package let duneDeluxe = GeminiEmulator.Book(
    title: "Dune Deluxe", author: "F. Herbert", confidence: 0.9, box2D: [150, 600, 850, 630])

/// Spines of the review queue's tests: a scrap read with little confidence, a misreading of Dune.
package let shadow = GeminiEmulator.Book(title: "Shadow", author: nil, confidence: 0.2, box2D: [100, 700, 900, 720])
package let typo = GeminiEmulator.Book(
    title: "Dnue", author: "Herbrt", confidence: 0.4, box2D: [120, 300, 880, 340])
/// The Hobbit as OpenLibrary knows it: a candidate the review queue's tests give a spine in the matcher's stead.
package let hobbitRecord = CatalogueRecord(
    source: "openlibrary", key: "/works/OL27482W", title: "The Hobbit",
    author: "J. R. R. Tolkien", isbn13: "9780261102217", isbn10: "0261102214", year: 1937)

/// A person's list as `shelfd catalogue import` takes it: Dune by its ISBN-10, Dune Messiah and The Hobbit without
/// one, Emma by its ISBN-13.
package let sampleCatalogue = """
    Title,Author,ISBN,Year
    Dune,"Herbert, Frank",0441172717,1965
    Dune Messiah,"Herbert, Frank",,1969
    The Hobbit,"Tolkien, J. R. R.",,1937
    Emma,Jane Austen,9780141439587,1815

    """

/// The sha256 of what shelfd sends a provider for this photo (upright, resized to the preset, re-encoded):
/// how an emulator's request log names it.
package func sentSHA256(_ photo: [UInt8], preset: ImagePreset = .gemini) -> String {
    (try? Preprocessor.prepare(photo, preset: preset)).map { SHA256.hex(of: $0.jpeg) } ?? "unpreparable"
}
