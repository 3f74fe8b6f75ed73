/// Local measures of how readable a photo is, taken before it is sent. Recorded with every result; they become
/// `suggestions` (the app's types) only when a measure is clearly bad, so a decent photo gets none.
/// Measured by ShelfImaging; kept here because results carry it.
package struct QualitySignals: Sendable, Codable, Equatable {
    /// Variance of the 4-neighbour Laplacian of the grey picture scaled to at most 512 px: low means no edges
    /// (out of focus or shaken). Sharp shelf photos measure in the hundreds or more.
    package var sharpness: Double
    /// Share of pixels nearly black (luma < 32) or nearly white (luma > 240): clipped shadows and highlights.
    package var darkFraction: Double, brightFraction: Double
    /// Share of pixels inside bright (luma ≥ 250), colourless (max − min ≤ 24) blobs: reflections off
    /// glossy covers. Only pixels whose four neighbours are also such pixels count, so thin white lettering does not.
    package var glareFraction: Double
    /// Pixels on the long side of the photo as taken (before resizing).
    package var longSide: Int
    package var suggestions: [Suggestion]

    enum CodingKeys: String, CodingKey {
        case sharpness, suggestions, darkFraction = "dark_fraction", brightFraction = "bright_fraction",
            glareFraction = "glare_fraction", longSide = "long_side"
    }

    package init(
        sharpness: Double, darkFraction: Double, brightFraction: Double, glareFraction: Double,
        longSide: Int, suggestions: [Suggestion]
    ) {
        self.sharpness = sharpness; self.darkFraction = darkFraction; self.brightFraction = brightFraction
        self.glareFraction = glareFraction; self.longSide = longSide; self.suggestions = suggestions
    }
}
