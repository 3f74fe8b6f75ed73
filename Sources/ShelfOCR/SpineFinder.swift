package import ShelfCore
package import ShelfImaging

/// One spine's text as OCR read it: the words of one band, in reading order.
package struct Spine: Sendable, Equatable, Codable {
    /// Which way the text runs on the upright photo.
    package typealias Reading = TextRun

    package var text: String
    /// Around the words read, normalised to the upright photo.
    package var box: Box
    /// 0…1: the words' OCR confidences, weighted by their letters.
    package var confidence: Double
    package var reading: Reading
}

/// Finds the spines on a shelf photo: Tesseract reads the photo three ways (turned each way for upright
/// spines, as it is for books lying flat), and the words of each reading are grouped into bands: a spine is
/// a long thin region whose words share a line along it. Where two readings claim the same place, the one
/// with more confident text wins (the wrong way round reads as a few unsure letters).
package enum SpineFinder {
    /// Words below this OCR confidence (0…100) are noise: a spine edge, a pattern, a shadow.
    static let minimumWordConfidence = 40.0
    /// A band needs this much evidence (letters × confidence) to be a spine: four sure letters, or more unsure ones.
    static let minimumEvidence = 4.0
    /// Words on one line further apart than this many line heights belong to different spines (shelves).
    static let splitGap = 3.0
    /// Pieces of one column further apart than this many column widths are different books (shelves).
    static let columnGap = 6.0
    /// Two claims on a place overlapping by more than this share of the smaller are the same spine.
    static let sameSpineOverlap = 0.4

    /// The spines on `image` (upright, grey), left to right (top to bottom among books lying flat).
    package static func spines(
        in image: GreyImage, readings: [Spine.Reading] = Spine.Reading.allCases,
        read: (GreyImage) throws(OCRError) -> [RecognisedWord]
    ) throws(OCRError) -> [Spine] {
        var found: [Candidate] = []
        for reading in readings {
            let turned: GreyImage =
                switch reading {
                case .upward: image.rotated(clockwise: true)
                case .downward: image.rotated(clockwise: false)
                case .across: image
                }
            let words = try read(turned).filter(isEvidence)
            for line in lines(words) {
                found.append(candidate(line, reading: reading, width: image.width, height: image.height))
            }
        }
        var kept: [Candidate] = []
        for candidate in found.sorted(by: { $0.evidence > $1.evidence }) {
            if !kept.contains(where: { overlap($0.spine.box, candidate.spine.box) > sameSpineOverlap }) {
                kept.append(candidate)
            }
        }
        return merged(kept, aspect: Double(image.width) / Double(image.height))
            .filter { $0.evidence >= minimumEvidence }.map(\.spine)
            .sorted { a, b in a.box.x1 != b.box.x1 ? a.box.x1 < b.box.x1 : a.box.y1 < b.box.y1 }
    }

    /// Pieces of one upright spine (title, author, the call-number label, read each its own way) joined: they
    /// share its column, and no more than `columnGap` of their width lies between them along it.
    static func merged(_ pieces: [Candidate], aspect: Double) -> [Candidate] {
        var spines: [Candidate] = []
        for piece in pieces.sorted(by: { $0.spine.box.y1 < $1.spine.box.y1 }) {
            guard piece.spine.reading != .across,
                let index = spines.firstIndex(where: {
                    sameColumn($0.spine.box, piece.spine.box, aspect: aspect) && $0.spine.reading != .across
                })
            else { spines.append(piece); continue }
            let a = spines[index], b = piece
            let letters = { (c: Candidate) in max(1e-9, c.evidence / max(1e-9, c.spine.confidence)) }
            let confidence = (a.evidence + b.evidence) / (letters(a) + letters(b))
            let box = a.spine.box.union(b.spine.box)
            let reading = a.evidence >= b.evidence ? a.spine.reading : b.spine.reading
            spines[index] = Candidate(
                spine: Spine(
                    text: a.spine.text + " " + b.spine.text, box: box.rounded,
                    confidence: confidence, reading: reading),
                evidence: a.evidence + b.evidence)
        }
        return spines
    }

    /// A column's pieces overlap across it by half the narrower one, with a gap along it of at most
    /// `columnGap` times the narrower one (widths in pixels: `aspect` is the photo's width over its height).
    static func sameColumn(_ a: Box, _ b: Box, aspect: Double) -> Bool {
        let across = min(a.x2, b.x2) - max(a.x1, b.x1)
        let narrower = min(a.x2 - a.x1, b.x2 - b.x1)
        let gap = max(a.y1, b.y1) - min(a.y2, b.y2)
        return across >= 0.5 * narrower && gap <= columnGap * narrower * aspect
    }

    struct Candidate {
        var spine: Spine
        var evidence: Double
    }

    static func isEvidence(_ word: RecognisedWord) -> Bool {
        let letters = word.text.unicodeScalars.filter(Character.isLetterOrDigit).count
        guard letters > 0, word.confidence >= minimumWordConfidence else { return false }
        // A lone character is as often a scratch or a logo as a letter.
        return letters > 1 || word.confidence >= 80
    }

    /// Words grouped into lines (they share a band across the reading direction), each in reading order and
    /// cut where a gap is too wide for one spine.
    static func lines(_ words: [RecognisedWord]) -> [[RecognisedWord]] {
        var bands: [[RecognisedWord]] = []
        for word in words.sorted(by: { $0.top + $0.bottom < $1.top + $1.bottom }) {
            let height = Double(word.bottom - word.top), centre = Double(word.top + word.bottom) / 2
            let index = bands.lastIndex { band in
                let bandHeight = median(band.map { Double($0.bottom - $0.top) })
                let bandCentre = median(band.map { Double($0.top + $0.bottom) / 2 })
                return abs(centre - bandCentre) < 0.5 * max(height, bandHeight)
                    && (0.5...2).contains(height / max(1, bandHeight))
            }
            if let index { bands[index].append(word) } else { bands.append([word]) }
        }
        return bands.flatMap { band -> [[RecognisedWord]] in
            let ordered = band.sorted { $0.left < $1.left }
            let limit = splitGap * median(band.map { Double($0.bottom - $0.top) })
            var pieces: [[RecognisedWord]] = [[ordered[0]]]
            for word in ordered.dropFirst() {
                let last = pieces[pieces.count - 1].map(\.right).max()!
                if Double(word.left - last) > limit {
                    pieces.append([word])
                } else {
                    pieces[pieces.count - 1].append(word)
                }
            }
            return pieces
        }
    }

    /// A line of a turned picture as a spine of the upright `width`×`height` photo.
    static func candidate(_ line: [RecognisedWord], reading: Spine.Reading, width: Int, height: Int) -> Candidate {
        let left = line.map(\.left).min()!, right = line.map(\.right).max()!
        let top = line.map(\.top).min()!, bottom = line.map(\.bottom).max()!
        let (x1, x2, y1, y2): (Int, Int, Int, Int) =
            switch reading {
            case .upward: (top, bottom, height - right, height - left) // turned clockwise: x = row, y = H - column
            case .downward: (width - bottom, width - top, left, right) // turned anticlockwise: x = W - row, y = column
            case .across: (left, right, top, bottom)
            }
        let box = Box(
            x1: Double(x1) / Double(width), y1: Double(y1) / Double(height),
            x2: Double(x2) / Double(width), y2: Double(y2) / Double(height))
        var letters = 0.0, weighted = 0.0
        for word in line {
            let count = Double(word.text.unicodeScalars.filter(Character.isLetterOrDigit).count)
            letters += count; weighted += count * word.confidence / 100
        }
        let text = line.map(\.text).joined(separator: " ")
        return Candidate(
            spine: Spine(
                text: text, box: box.rounded, confidence: letters > 0 ? weighted / letters : 0,
                reading: reading),
            evidence: weighted)
    }

    /// The share of the smaller box that the two have in common.
    static func overlap(_ a: Box, _ b: Box) -> Double {
        let w = min(a.x2, b.x2) - max(a.x1, b.x1), h = min(a.y2, b.y2) - max(a.y1, b.y1)
        guard w > 0, h > 0 else { return 0 }
        return w * h / max(1e-9, min(a.area, b.area))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}

extension Character {
    /// For filtering unicode scalars: a letter or a digit of any script.
    static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }
}
