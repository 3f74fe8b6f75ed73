import ShelfCore

/// What inspection learnt about a photo that passed it.
package struct PhotoInfo: Sendable, Equatable, Codable {
    package var format: ImageFormat
    /// Size as stored in the file, before EXIF orientation is applied.
    package var width: Int
    package var height: Int
    /// EXIF orientation, 1…8; 1 when the file has none (or an unreadable one).
    package var orientation: Int
    package var byteCount: Int

    package init(format: ImageFormat, width: Int, height: Int, orientation: Int, byteCount: Int) {
        self.format = format; self.width = width; self.height = height
        self.orientation = orientation; self.byteCount = byteCount
    }

    /// Orientations 5…8 turn the picture a quarter turn: the stored width is the displayed height.
    package var isQuarterTurned: Bool { (5...8).contains(orientation) }
    /// Size as a viewer shows it, after EXIF orientation.
    package var displayWidth: Int { isQuarterTurned ? height : width }
    package var displayHeight: Int { isQuarterTurned ? width : height }
}
