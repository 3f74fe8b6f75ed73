import ShelfImaging
import Testing

@Suite struct RGBImageTests {
    @Test("Enlarging interpolates between the nearest pixels and keeps the edges' colours")
    func enlargedInterpolates() {
        // One row, black then a grey of 200, each channel alike.
        let image = RGBImage(width: 2, height: 1, pixels: [0, 0, 0, 200, 200, 200])
        let enlarged = image.enlarged(width: 4, height: 2)
        #expect(enlarged.width == 4 && enlarged.height == 2)
        let row = stride(from: 0, to: 12, by: 3).map { enlarged.pixels[$0] }
        #expect(row == [0, 50, 150, 200])
        #expect(Array(enlarged.pixels[12...]) == Array(enlarged.pixels[..<12]), "both rows alike")
    }
}
