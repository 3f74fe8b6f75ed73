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

    @Test("Sharpening steepens an edge, leaves flat colour as it is, and stays within a byte")
    func sharpenedSteepensEdges() {
        // Eight columns, a soft step from 40 to 220 in the middle; four rows alike.
        let ramp: [UInt8] = [40, 40, 40, 100, 160, 220, 220, 220]
        let image = RGBImage(width: 8, height: 4, pixels: (0..<4).flatMap { _ in ramp.flatMap { [$0, $0, $0] } })
        let sharp = image.sharpened(sigma: 1, amount: 1.5)
        let row = stride(from: 0, to: 24, by: 3).map { Int(sharp.pixels[$0]) }
        #expect(row[3] < 100 && row[4] > 160, "the step is steeper")
        #expect(row[2] < 40 && row[5] > 220, "with the mask's overshoot on either side")
        #expect(row[0] == 40 && row[7] == 220, "flat colour far from the edge stays")
        #expect(Array(sharp.pixels[24..<48]) == Array(sharp.pixels[0..<24]), "every row alike")
        let harsh = image.sharpened(sigma: 1, amount: 20)
        #expect(harsh.pixels[2 * 3] == 0 && harsh.pixels[5 * 3] == 255, "clamped, not wrapped")
    }
}
