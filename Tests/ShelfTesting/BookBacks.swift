/// Photos of book backs with real EAN-13 symbols, drawn as a printer draws them (GS1's encoding: a guard, six
/// digits in the L and G sets as the first digit's parity says, a centre guard, six in the R set, a guard), so that a
/// barcode reader reads them as it reads a real book's.
package enum BookBacks {
    /// One book's back: its 13 digits as printed (a wrong check digit stays wrong), where its symbol's middle is
    /// (fractions of the photo), how wide a bar module is in pixels, and how many quarter turns clockwise the
    /// book lies (2: upside down).
    package struct Back: Sendable {
        package var digits: String
        package var centre: (x: Double, y: Double)
        package var module: Int
        package var quarterTurns: Int

        package init(digits: String, centre: (x: Double, y: Double), module: Int = 4, quarterTurns: Int = 0) {
            self.digits = digits; self.centre = centre; self.module = module; self.quarterTurns = quarterTurns
        }
    }

    /// A JPEG of `backs` on a table: each a coloured cover with a white label holding its symbol.
    package static func photo(_ backs: [Back], width: Int = 3000, height: Int = 2000, quality: Int = 92) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        func fill(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int, _ colour: (UInt8, UInt8, UInt8)) {
            for y in max(0, y0)..<min(height, y1) {
                for x in max(0, x0)..<min(width, x1) {
                    let i = (y * width + x) * 3
                    pixels[i] = colour.0; pixels[i + 1] = colour.1; pixels[i + 2] = colour.2
                }
            }
        }
        fill(0, 0, width, height, (120, 88, 60)) // the table
        let covers: [(UInt8, UInt8, UInt8)] = [(40, 70, 120), (150, 40, 40), (50, 110, 70), (200, 170, 60)]
        for (n, back) in backs.enumerated() {
            let bars = modules(back.digits)
            // The symbol with its quiet zones, unturned: 11 modules of white each side, bars 60 modules tall.
            let long = (bars.count + 22) * back.module, short = 60 * back.module
            let turned = back.quarterTurns % 2 == 1
            let (w, h) = turned ? (short, long) : (long, short)
            let cx = Int(back.centre.x * Double(width)), cy = Int(back.centre.y * Double(height))
            // the cover
            fill(cx - w / 2 - 60, cy - h / 2 - 60, cx + w / 2 + 60, cy + h / 2 + 60, covers[n % covers.count])
            fill(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, (250, 250, 248)) // the label
            for (index, bar) in bars.enumerated() where bar {
                // Module `index` along the symbol's length, in the direction its quarter turns give.
                let along = (11 + index) * back.module
                switch back.quarterTurns % 4 {
                case 0:
                    fill(
                        cx - long / 2 + along, cy - short / 2, cx - long / 2 + along + back.module, cy + short / 2,
                        (10, 10, 10))
                case 1:
                    fill(
                        cx - short / 2, cy - long / 2 + along, cx + short / 2, cy - long / 2 + along + back.module,
                        (10, 10, 10))
                case 2:
                    fill(
                        cx + long / 2 - along - back.module, cy - short / 2, cx + long / 2 - along, cy + short / 2,
                        (10, 10, 10))
                default:
                    fill(
                        cx - short / 2, cy + long / 2 - along - back.module, cx + short / 2, cy + long / 2 - along,
                        (10, 10, 10))
                }
            }
        }
        return JPEGFactory.jpeg(rgb: pixels, width: width, height: height, quality: quality)
    }

    /// The 95 modules of a 13-digit EAN-13 symbol, left to right, true for a bar.
    package static func modules(_ digits: String) -> [Bool] {
        let d = digits.compactMap(\.wholeNumberValue)
        precondition(d.count == 13, "an EAN-13 symbol holds 13 digits")
        let l = [
            "0001101", "0011001", "0010011", "0111101", "0100011", "0110001", "0101111", "0111011", "0110111",
            "0001011",
        ]
        let g = [
            "0100111", "0110011", "0011011", "0100001", "0011101", "0111001", "0000101", "0010001", "0001001",
            "0010111",
        ]
        let r = l.map { String($0.map { $0 == "0" ? "1" : "0" }) }
        let parity = [
            "LLLLLL", "LLGLGG", "LLGGLG", "LLGGGL", "LGLLGG", "LGGLLG", "LGGGLL", "LGLGLG", "LGLGGL", "LGGLGL",
        ]
        var pattern = "101"
        for (i, kind) in parity[d[0]].enumerated() { pattern += kind == "L" ? l[d[i + 1]] : g[d[i + 1]] }
        pattern += "01010"
        for i in 7..<13 { pattern += r[d[i]] }
        pattern += "101"
        return pattern.map { $0 == "1" }
    }
}
