import ShelfCore

extension QualitySignals {
    /// When a measure counts as clearly bad.
    package enum Threshold {
        /// Below this Laplacian variance the photo is blurred (sharp photos: several hundred; text-free
        /// out-of-focus ones: under 30).
        package static let blurrySharpness = 40.0
        /// Half the picture near black: underexposed.
        package static let darkFraction = 0.5
        /// A third of the picture near white: overexposed.
        package static let brightFraction = 0.33
        /// 3 % of the picture in glare blobs: some spines are hidden by reflections.
        package static let glareFraction = 0.03
        /// Fewer pixels than this on the long side leave spine text a few pixels tall.
        package static let minimumLongSide = 1200
    }

    /// Grey pictures are measured at most this long on their long side: cheap, and comparable between photos.
    static let measuredSide = 512

    /// Measures an upright picture; `longSide` is the original's, for the resolution check.
    static func measure(_ image: RGBImage, longSide: Int) -> QualitySignals {
        let scale = min(1, Double(measuredSide) / Double(max(image.width, image.height)))
        let small = image.withView { view in
            Resampler.render(
                view, width: Int((Double(image.width) * scale).rounded()),
                height: Int((Double(image.height) * scale).rounded()), orientation: Orientation(1))
        }
        return measure(small: small, longSide: longSide)
    }

    /// The same for an upright 4:2:0 picture: each plane is scaled down on its own, then the small one made RGB.
    static func measure(_ image: YUVImage, longSide: Int) -> QualitySignals {
        let scale = min(1, Double(measuredSide) / Double(max(image.width, image.height)))
        let small = image.rgb(
            width: max(1, Int((Double(image.width) * scale).rounded())),
            height: max(1, Int((Double(image.height) * scale).rounded())))
        return measure(small: small, longSide: longSide)
    }

    /// The measures of a picture already at most `measuredSide` long.
    private static func measure(small: RGBImage, longSide: Int) -> QualitySignals {
        let width = small.width, height = small.height, count = width * height
        var grey = [Int32](repeating: 0, count: count)
        var glare = [Bool](repeating: false, count: count)
        var dark = 0, bright = 0
        small.pixels.withUnsafeBufferPointer { rgb in
            for i in 0..<count {
                let r = Int32(rgb[i * 3]), g = Int32(rgb[i * 3 + 1]), b = Int32(rgb[i * 3 + 2])
                let luma = (77 * r + 150 * g + 29 * b) >> 8 // BT.601 weights in 8-bit fixed point
                grey[i] = luma
                if luma < 32 { dark += 1 } else if luma > 240 { bright += 1 }
                glare[i] = luma >= 250 && max(r, g, b) - min(r, g, b) <= 24
            }
        }

        var sum = 0.0, sumOfSquares = 0.0, glareInterior = 0
        if width >= 3 && height >= 3 {
            grey.withUnsafeBufferPointer { grey in
                for y in 1..<height - 1 {
                    for x in 1..<width - 1 {
                        let i = y * width + x
                        let laplacian = Double(
                            4 * grey[i] - grey[i - 1] - grey[i + 1] - grey[i - width] - grey[i + width])
                        sum += laplacian; sumOfSquares += laplacian * laplacian
                        if glare[i] && glare[i - 1] && glare[i + 1] && glare[i - width] && glare[i + width] {
                            glareInterior += 1
                        }
                    }
                }
            }
        }
        let inner = Double(max(1, (width - 2) * (height - 2)))
        let mean = sum / inner
        var signals = QualitySignals(
            sharpness: max(0, sumOfSquares / inner - mean * mean),
            darkFraction: Double(dark) / Double(count), brightFraction: Double(bright) / Double(count),
            glareFraction: Double(glareInterior) / inner, longSide: longSide, suggestions: [])
        signals.suggestions = signals.suggest()
        return signals
    }

    /// The suggestions the measures call for, worst first.
    func suggest() -> [Suggestion] {
        var suggestions: [Suggestion] = []
        let underexposed = darkFraction > Threshold.darkFraction
        let overexposed = brightFraction > Threshold.brightFraction
        if underexposed {
            suggestions.append(
                Suggestion(
                    type: .lightingIssues, severity: .warning,
                    message:
                        "The photo is too dark (\(percent(darkFraction)) of it is nearly black): turn on a light or use the flash."
                ))
        } else if overexposed {
            suggestions.append(
                Suggestion(
                    type: .lightingIssues, severity: .warning,
                    message:
                        "The photo is overexposed (\(percent(brightFraction)) of it is nearly white): avoid direct light or lower the exposure."
                ))
        }
        // A dark or washed-out photo has few edges anyway: only call it blurred when the exposure is fine.
        if !underexposed && !overexposed && sharpness < Threshold.blurrySharpness {
            suggestions.append(
                Suggestion(
                    type: .blurryImage, severity: .warning,
                    message:
                        "The photo looks blurred: hold the phone still and tap the spines to focus."))
        }
        if !overexposed && glareFraction > Threshold.glareFraction {
            suggestions.append(
                Suggestion(
                    type: .glareDetected, severity: .warning,
                    message:
                        "Reflections cover \(percent(glareFraction)) of the photo: tilt the phone or move the light to avoid glare."
                ))
        }
        if longSide < Threshold.minimumLongSide {
            suggestions.append(
                Suggestion(
                    type: .distanceTooFar, severity: .info,
                    message:
                        "The photo is only \(longSide) px on its long side, too small for spine text: use the full camera resolution or move closer."
                ))
        }
        return suggestions
    }

    private func percent(_ fraction: Double) -> String { "\(Int((fraction * 100).rounded()))%" }
}
