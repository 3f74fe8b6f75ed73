import ShelfCore
import ShelfImaging
import ShelfTesting
import Testing

/// ISBN barcodes read with the real libzbar (scripts/install-deps.sh installs it), on rendered photos of book backs.
@Suite("Reading ISBN barcodes")
struct ISBNBarcodesTests {
    @Test("Every ISBN on a photo of backs is read exactly, whichever way each book lies, and none is invented")
    func backs() throws {
        let photo = BookBacks.photo([
            .init(digits: "9780451524935", centre: (0.2, 0.25)), // upright
            .init(digits: "9780141439518", centre: (0.5, 0.25), quarterTurns: 1), // turned a quarter
            .init(digits: "9780743273565", centre: (0.8, 0.25), quarterTurns: 2), // upside down
            .init(digits: "9791032305690", centre: (0.2, 0.75), quarterTurns: 3), // a 979 ISBN, turned back
            .init(digits: "9780061120084", centre: (0.45, 0.75), module: 2), // small: 2 pixels a bar
            .init(digits: "9780441172718", centre: (0.65, 0.75)), // a wrong check digit
            .init(digits: "4006381333931", centre: (0.85, 0.75)), // an EAN-13 that is no ISBN
        ])
        let found = try BarcodeReader.isbns(inPhoto: photo, maxPixels: 64_000_000)
        #expect(
            Set(found.map(\.isbn.isbn13)) == [
                "9780451524935", "9780141439518", "9780743273565", "9791032305690",
                "9780061120084",
            ])
        #expect(found.count == 5, "each symbol once: \(found.map(\.isbn.isbn13))")
        // Each box is where its symbol is drawn.
        let upright = try #require(found.first { $0.isbn.isbn13 == "9780451524935" })
        #expect(
            upright.box.x1 < 0.2 && upright.box.x2 > 0.2 && upright.box.y1 < 0.25 && upright.box.y2 > 0.25,
            "\(upright.box)")
        let turned = try #require(found.first { $0.isbn.isbn13 == "9780141439518" })
        #expect(
            turned.box.x1 < 0.5 && turned.box.x2 > 0.5 && turned.box.y1 < 0.25 && turned.box.y2 > 0.25, "\(turned.box)")
    }

    @Test("A symbol's box is on the photo as shown, after its EXIF orientation")
    func orientedBox() throws {
        let stored = BookBacks.photo(
            [
                .init(digits: "9780451524935", centre: (0.2, 0.25)),
                .init(digits: "9780141439518", centre: (0.75, 0.75)),
            ], width: 1600, height: 1000)
        // Orientation 6: the stored picture is shown turned a quarter clockwise, so its point (0.2, 0.25) shows at
        // (0.75, 0.2), and (0.75, 0.75) at (0.25, 0.75): left of it.
        let found = try BarcodeReader.isbns(inPhoto: JPEGFactory.withOrientation(stored, 6), maxPixels: 64_000_000)
        #expect(found.map(\.isbn.isbn13) == ["9780141439518", "9780451524935"], "left to right as shown")
        let box = try #require(found.last?.box)
        #expect(box.x1 < 0.75 && box.x2 > 0.75 && box.y1 < 0.2 && box.y2 > 0.2, "\(box)")
        // Shown 1,000 wide and 1,600 tall, the symbol (380 by 240 pixels as stored) stands upright.
        #expect(
            (box.y2 - box.y1) * 1600 > 1.3 * (box.x2 - box.x1) * 1000, "the symbol is turned with the photo: \(box)")
    }

    @Test("A photo with no barcode, or one that is not a photo, reads no ISBN")
    func nothing() throws {
        #expect(
            try BarcodeReader.isbns(inPhoto: JPEGFactory.shelf(width: 800, height: 600, seed: 3), maxPixels: 64_000_000)
                .isEmpty)
        #expect(try BarcodeReader.isbns(inPhoto: Array("not a photo".utf8), maxPixels: 64_000_000).isEmpty)
    }

    @Test("The reader names ZBar's version")
    func version() throws {
        #expect(try BarcodeReader.version().split(separator: ".").count == 3)
    }
}
