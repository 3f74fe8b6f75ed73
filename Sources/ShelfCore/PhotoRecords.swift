import Foundation

/// A photo shelfd knows, with its newest job: what the web page's photo list and photo page show.
package struct PhotoSummary: Sendable, Equatable {
    package var sha256: String
    /// Where it was first seen, under incoming/.
    package var relativePath: String
    package var firstSeen: Date
    /// The newest job's state and provider (the one asked for, or the one that read it).
    package var state: JobState?
    package var provider: String?
    /// The newest result file; an earlier job's while a rescan waits.
    package var resultPath: String?
    package var finishedAt: Date?

    package init(
        sha256: String, relativePath: String, firstSeen: Date, state: JobState? = nil,
        provider: String? = nil, resultPath: String? = nil, finishedAt: Date? = nil
    ) {
        self.sha256 = sha256; self.relativePath = relativePath; self.firstSeen = firstSeen; self.state = state
        self.provider = provider; self.resultPath = resultPath; self.finishedAt = finishedAt
    }

    /// The sub-folder of incoming/ it came from; "" for the top level.
    package var shelf: String { (relativePath as NSString).deletingLastPathComponent }
}

/// What became of each reading of one photo: the decisions a person took, the items still open, and
/// the works the readings are filed under.
package struct PhotoReadings: Sendable, Equatable {
    /// Per reading (normalised title + surname): `accepted`, `edited` or `rejected`.
    package var decisions: [String: String]
    /// Per reading a person accepted or edited: the book as decided.
    package var decided: [String: Book]
    /// The photo's open review items.
    package var openItems: Set<String>
    /// The library's sightings of this photo.
    package var sightings: [Sighting]

    package init(decisions: [String: String], decided: [String: Book], openItems: Set<String>, sightings: [Sighting]) {
        self.decisions = decisions; self.decided = decided; self.openItems = openItems; self.sightings = sightings
    }

    /// A reading in the library: the work's key, the reading's title key and its box.
    package struct Sighting: Sendable, Equatable {
        package var work: String
        package var titleKey: String?
        package var box: Box?

        package init(work: String, titleKey: String? = nil, box: Box? = nil) {
            self.work = work; self.titleKey = titleKey; self.box = box
        }
    }

    /// The work a reading is filed under: the sighting with its box, else with its title and author.
    package func work(of book: Book) -> String? {
        if let box = book.box, let found = sightings.first(where: { $0.box == box }) { return found.work }
        return sightings.first { $0.titleKey == book.titleKey }?.work
    }
}
