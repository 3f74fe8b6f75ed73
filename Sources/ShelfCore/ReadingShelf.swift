/// Where exported books land in a reading app: Goodreads' exclusive shelf, StoryGraph's read status.
/// Both apps spell the three states the same way.
package enum ReadingShelf: String, Sendable, CaseIterable, Codable {
    case toRead = "to-read"
    case currentlyReading = "currently-reading"
    case read
}
