/// A shelf drawn with a 5×7 bitmap font: each title runs down its spine (top to bottom, as on most English
/// spines), dark on a light colour, so the offline reader has real letters to read without any font installed.
package enum DrawnShelf {
    static let glyphs: [Character: [String]] = [
        "A": ["01110", "10001", "10001", "11111", "10001", "10001", "10001"],
        "B": ["11110", "10001", "10001", "11110", "10001", "10001", "11110"],
        "D": ["11100", "10010", "10001", "10001", "10001", "10010", "11100"],
        "E": ["11111", "10000", "10000", "11110", "10000", "10000", "11111"],
        "H": ["10001", "10001", "10001", "11111", "10001", "10001", "10001"],
        "M": ["10001", "11011", "10101", "10101", "10001", "10001", "10001"],
        "N": ["10001", "11001", "10101", "10011", "10001", "10001", "10001"],
        "R": ["11110", "10001", "10001", "11110", "10100", "10010", "10001"],
        "S": ["01111", "10000", "10000", "01110", "00001", "00001", "11110"],
        "T": ["11111", "00100", "00100", "00100", "00100", "00100", "00100"],
        "U": ["10001", "10001", "10001", "10001", "10001", "10001", "01110"],
        " ": ["00000", "00000", "00000", "00000", "00000", "00000", "00000"],
    ]

    /// A JPEG of `titles.count` spines side by side, `scale` pixels a font dot.
    package static func jpeg(_ titles: [String], scale: Int = 5) -> [UInt8] {
        let spineWidth = 9 * scale * 2, height = 760, margin = 40
        let width = margin * 2 + spineWidth * titles.count
        var pixels = [UInt8](repeating: 235, count: width * height * 3)
        let colours: [(UInt8, UInt8, UInt8)] = [(250, 228, 180), (200, 225, 245), (230, 245, 210), (245, 210, 215)]
        for (index, title) in titles.enumerated() {
            let x0 = margin + index * spineWidth, colour = colours[index % colours.count]
            for y in 20..<(height - 20) {
                for x in (x0 + 4)..<(x0 + spineWidth - 4) {
                    let p = (y * width + x) * 3
                    pixels[p] = colour.0; pixels[p + 1] = colour.1; pixels[p + 2] = colour.2
                }
            }
            // Reading down the spine: a letter's top faces right, so font row r is column (right - r).
            let right = x0 + spineWidth / 2 + 3 * scale
            for (i, character) in title.enumerated() {
                guard let rows = glyphs[character] else { continue }
                let top = 60 + i * 6 * scale
                for (r, row) in rows.enumerated() {
                    for (c, dot) in row.enumerated() where dot == "1" {
                        for dy in 0..<scale {
                            for dx in 0..<scale {
                                let x = right - r * scale - dx, y = top + c * scale + dy
                                let p = (y * width + x) * 3
                                pixels[p] = 30; pixels[p + 1] = 30; pixels[p + 2] = 40
                            }
                        }
                    }
                }
            }
        }
        return JPEGFactory.jpeg(rgb: pixels, width: width, height: height, quality: 92)
    }
}
