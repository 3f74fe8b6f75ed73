import Foundation

/// The rule that closes a round (the photos of one shelf taken within a quiet time of each other): which works
/// arrived, moved out or went missing, what becomes of their marks, and the shelf's new order.
///
/// It holds what the store read of the round and of the shelf before it; `outcome(at:)` decides, and the store writes
/// the outcome. The lookups (`cameFrom`, `seenElsewhere`, `marks`, `lastSeen`) may hold more works than the rule asks
/// about: it reads each only for the works it concerns.
package struct ShelfRoundRule: Sendable {
    /// One book a photo of the round saw.
    package struct Sighting: Sendable, Equatable {
        package var bookID: Int64
        package var box: Box?
        package var isVerified: Bool
        /// A reading left for review: its first candidate.
        package var firstCandidate: CatalogueRecord?

        package init(bookID: Int64, box: Box?, isVerified: Bool, firstCandidate: CatalogueRecord? = nil) {
            self.bookID = bookID; self.box = box; self.isVerified = isVerified; self.firstCandidate = firstCandidate
        }
    }

    /// The keys a candidate may name a work of the shelf by: its work key, a record one of its readings matched, an
    /// ISBN (`isbn:<13 digits>`).
    package struct WorkKeys: Sendable, Equatable {
        package var byKey: [String: Int64]

        package init(byKey: [String: Int64] = [:]) { self.byKey = byKey }

        package func work(for record: CatalogueRecord) -> Int64? {
            if record.source == LibraryWork.source, let id = byKey[record.key] { return id }
            let matchKey = record.key.hasPrefix("\(record.source):") ? record.key : "\(record.source):\(record.key)"
            return byKey[matchKey] ?? record.isbn13.flatMap { byKey[LibraryWork.isbnKey($0)] }
        }
    }

    /// A step of a work's history the round takes.
    package struct Step: Sendable, Equatable {
        package var bookID: Int64
        package var decision: LibraryDocument.Decision
    }

    /// What the round decides.
    package struct Outcome: Sendable, Equatable {
        /// The works the round saw, left to right: they stand here now, whatever shelf placed them before.
        package var seen: [Int64]
        /// The shelf's works left to right after the round.
        package var order: [Int64]
        /// Arrivals, then works missing, then works moved out.
        package var changes: [ShelfChange]
        /// Works seen (here or on another shelf) whose marks are void.
        package var clearedMarks: [Int64]
        /// Works to mark missing since the round opened.
        package var newlyMissing: [Int64]
        package var history: [Step]
        /// The works whose entry changed: now missing, back from a loan, moved.
        package var changedWorks: Set<Int64>

        package func works(_ kind: ShelfChange.Kind) -> [Int64] {
            changes.filter { $0.kind == kind }.map(\.bookID)
        }
    }

    package var shelf: String
    /// The shelf's works before the round, left to right.
    package var before: [Int64]
    /// The round's photos in name order, each with the books it saw.
    package var photos: [[Sighting]]
    /// Photos of the round that could not be read: while any, no work is missing.
    package var unreadPhotos: Int
    /// The keys of the works of `before`.
    package var keys: WorkKeys
    /// Per work new to the shelf: the shelf it stood on before the round opened.
    package var cameFrom: [Int64: String]
    /// Per work of `before`: another shelf a photo that arrived since the round opened saw it on.
    package var seenElsewhere: [Int64: String]
    /// The marks recorded, void or not.
    package var marks: [Int64: ShelfMark]
    /// Per marked work: the arrival of the latest photo that saw it, anywhere.
    package var lastSeen: [Int64: Double]

    package init(
        shelf: String, before: [Int64], photos: [[Sighting]], unreadPhotos: Int = 0, keys: WorkKeys = WorkKeys(),
        cameFrom: [Int64: String] = [:], seenElsewhere: [Int64: String] = [:], marks: [Int64: ShelfMark] = [:],
        lastSeen: [Int64: Double] = [:]
    ) {
        self.shelf = shelf; self.before = before; self.photos = photos; self.unreadPhotos = unreadPhotos
        self.keys = keys; self.cameFrom = cameFrom; self.seenElsewhere = seenElsewhere; self.marks = marks
        self.lastSeen = lastSeen
    }

    package func outcome(at now: Date) -> Outcome {
        let stood = Set(before)
        // What the round saw, left to right: verified readings, and a reading left for review as its first candidate
        // when that candidate is a work of this shelf.
        var seen: [Int64] = []
        var seenSet = Set<Int64>()
        for photo in photos {
            for book in photo.sorted(by: { ($0.box?.midX ?? 2) < ($1.box?.midX ?? 2) }) {
                let work =
                    stood.contains(book.bookID) || book.isVerified
                    ? book.bookID : book.firstCandidate.flatMap { keys.work(for: $0) }
                if let work, seenSet.insert(work).inserted { seen.append(work) }
            }
        }
        let arrived = seen.filter { !stood.contains($0) }
        let unseen = before.filter { !seenSet.contains($0) }
        var movedTo: [Int64: String] = [:]
        for work in unseen { movedTo[work] = seenElsewhere[work] }
        let standing = marks.filter { $0.value.holds(lastSeen: lastSeen[$0.key]) }
        let lent = Set(unseen.filter { standing[$0]?.kind == .lent })

        let missing =
            unreadPhotos == 0
            ? Self.missing(
                among: before.filter { movedTo[$0] == nil && !lent.contains($0) }, seen: seenSet,
                ends: Self.endsShown(first: photos.first, last: photos.last)) : []

        // Marks: a work seen (here or on another shelf) is no longer missing, lent or gone; a loan it ends is a step
        // of its history.
        let cleared = seen.filter { marks[$0] != nil } + unseen.filter { movedTo[$0] != nil && marks[$0] != nil }
        var history = cleared.filter { marks[$0]?.kind == .lent }.map { work in
            Step(
                bookID: work,
                decision: LibraryDocument.Decision(
                    action: "returned", by: "shelfd", at: now, detail: "seen again on \(movedTo[work] ?? shelf)"))
        }
        let newlyMissing = missing.filter { standing[$0]?.kind != .missing }
        history += newlyMissing.map { work in
            Step(
                bookID: work,
                decision: LibraryDocument.Decision(
                    action: "missing", by: "shelfd", at: now, detail: "not seen where it stood on \(shelf)"))
        }

        var changes = arrived.map { ShelfChange(.arrived, $0, otherShelf: cameFrom[$0]) }
        changes += missing.map { ShelfChange(.missing, $0) }
        changes += unseen.compactMap { work in movedTo[work].map { ShelfChange(.movedOut, work, otherShelf: $0) } }
        let changed = Set(cleared).union(newlyMissing).union(movedTo.keys)

        // The shelf's order: the round's, with the works it did not see kept after the neighbour they stood beside.
        return Outcome(
            seen: seen, order: Self.merge(before.filter { movedTo[$0] == nil }, with: seen), changes: changes,
            clearedMarks: cleared, newlyMissing: newlyMissing, history: history, changedWorks: changed)
    }

    /// A work not seen is missing only where the round saw its place: the works on both sides of it (or the shelf's
    /// end, when the photo shows room beyond the last book) were seen. `standing` leaves out lent and moved works:
    /// they are not there.
    static func missing(among standing: [Int64], seen: Set<Int64>, ends: (left: Bool, right: Bool)) -> [Int64] {
        var missing: [Int64] = []
        var index = 0
        while index < standing.count {
            guard !seen.contains(standing[index]) else {
                index += 1
                continue
            }
            var end = index
            while end + 1 < standing.count && !seen.contains(standing[end + 1]) { end += 1 }
            let leftSeen = index == 0 ? ends.left : true
            let rightSeen = end == standing.count - 1 ? ends.right : true
            if leftSeen && rightSeen { missing.append(contentsOf: standing[index...end]) }
            index = end + 1
        }
        return missing
    }

    /// `before`, with each work of `sequence` where the round saw it: a work of `before` the round did not see follows
    /// the work it stood after (or leads, when it stood first).
    package static func merge(_ before: [Int64], with sequence: [Int64]) -> [Int64] {
        var result = sequence
        let inRound = Set(sequence)
        var anchor: Int64?
        for work in before {
            if inRound.contains(work) {
                anchor = work
                continue
            }
            let at = anchor.flatMap { result.firstIndex(of: $0) }.map { $0 + 1 } ?? 0
            result.insert(work, at: at)
            anchor = work
        }
        return result
    }

    /// Whether the round's first photo shows room left of its first book, and its last photo right of its last
    /// book: more than a book's width (the median of the photo's boxes). A photo cut at a book says nothing of what
    /// stands beyond it.
    package static func endsShown(first: [Sighting]?, last: [Sighting]?) -> (left: Bool, right: Bool) {
        func room(_ books: [Sighting]?, left: Bool) -> Bool {
            let boxes = (books ?? []).compactMap(\.box)
            guard !boxes.isEmpty else { return false }
            let widths = boxes.map { $0.x2 - $0.x1 }.sorted()
            let width = widths[widths.count / 2]
            return left ? boxes.map(\.x1).min()! > width : 1 - boxes.map(\.x2).max()! > width
        }
        return (room(first, left: true), room(last, left: false))
    }
}
