/// What a commit changed of what the files for people show, as the commit itself knows it: the batch commit, a
/// review decision and a library edit each return one, and the process's one writer of those files follows from it
/// (review/ item by item, library.json when a work changed) instead of reading everything again.
package struct FilesChange: Sendable, Equatable {
    /// Works whose entry changed: added, seen again, edited, merged into, or removed (by row).
    package var works: Set<Int64> = []
    /// Review items opened, or written again with a new reading (a rescan), by id.
    package var openedItems: Set<String> = []
    /// Review items closed (decided, or no longer read in their photo), by id: their files go.
    package var closedItems: Set<String> = []
    /// The photos whose open items are written again: those of the items above, and those a batch read. A photo's
    /// copy in review/photos/ goes with its last open item.
    package var photos: Set<String> = []
    /// Shared store: the jobs whose result documents wait in the database for the node that writes them.
    package var storedResults: Set<Int64> = []
    /// A change that cannot be told item by item (another process's, on a shared store): review/ is brought in line
    /// with every open item, and library.json written again.
    package var reconcile = false
    /// Shared store: the files version (`ResultDocuments.filesVersion`) just before this commit and with it. A node whose files
    /// were written at `filesVersionBefore` follows this change alone; otherwise another process changed things too.
    package var filesVersionBefore: Int64?
    package var filesVersionAfter: Int64?

    package init(
        works: Set<Int64> = [], openedItems: Set<String> = [], closedItems: Set<String> = [],
        photos: Set<String> = [], storedResults: Set<Int64> = [], reconcile: Bool = false
    ) {
        self.works = works; self.openedItems = openedItems; self.closedItems = closedItems; self.photos = photos
        self.storedResults = storedResults; self.reconcile = reconcile
    }

    /// Whether library.json and the exports must be written again.
    package var changesLibrary: Bool { reconcile || !works.isEmpty }
    /// Whether review/ must be brought in line.
    package var changesReview: Bool { reconcile || !openedItems.isEmpty || !closedItems.isEmpty || !photos.isEmpty }

    package mutating func formUnion(_ other: FilesChange) {
        works.formUnion(other.works); openedItems.formUnion(other.openedItems); closedItems.formUnion(other.closedItems)
        photos.formUnion(other.photos); storedResults.formUnion(other.storedResults);
        reconcile = reconcile || other.reconcile
    }
}
