import Foundation

/// What is known of a work of a shelf that a round did not see: stored in `shelf_mark`, void once a photo that arrived
/// after it saw the work.
package struct ShelfMark: Sendable, Equatable {
    /// `shelf_mark.kind`: the raw values are the stored text.
    package enum Kind: String, Sendable, CaseIterable {
        /// Not seen where it stood, by the round that found it so.
        case missing
        /// Lent to someone a person named (`name`).
        case lent
        /// Gone for good, a person said: it leaves the shelf's inventory.
        case gone
    }

    package var kind: Kind
    package var shelf: String
    /// Seconds since 1970, as stored.
    package var since: Double
    /// Whom it was lent to.
    package var name: String?

    package init(kind: Kind, shelf: String, since: Double, name: String? = nil) {
        self.kind = kind; self.shelf = shelf; self.since = since; self.name = name
    }

    /// Whether the mark still holds when the work's latest photo arrived at `lastSeen` (never seen, when nil).
    package func holds(lastSeen: Double?) -> Bool { (lastSeen ?? -.infinity) < since }

    /// What library.json, `shelf show` and `library find` say of the work.
    package var missingSince: Date? { kind == .missing ? Date(timeIntervalSince1970: since) : nil }
    package var lentTo: String? { kind == .lent ? name : nil }
    package var lentSince: Date? { kind == .lent ? Date(timeIntervalSince1970: since) : nil }
}
