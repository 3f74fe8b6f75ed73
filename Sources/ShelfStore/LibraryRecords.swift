import Foundation
import ShelfCore

/// The library and its review queue: the works, their sightings and history, the review items and the decisions
/// taken on them. A concern of the store with a type of its own over the shared database (`Store.library`); the
/// views `ReviewStore` and `LibraryStore` are its surface. The queue's `finish` files a photo's readings here in
/// its own transaction, through this type's statements on that connection (`commitReading`, `closeStaleItems`,
/// `refresh`), so a photo's job and its books commit together.
package struct LibraryRecords: StoreConcern {
    let database: Store

    package var isShared: Bool { database.isShared }

    /// The provider-ready image stored with a photo (a shared store's), as the photo's job keeps it.
    package func photoImage(sha256: String) throws -> [UInt8]? { try database.queue.photoImage(sha256: sha256) }
    package func hasPhotoImage(sha256: String) throws -> Bool { try database.queue.hasPhotoImage(sha256: sha256) }
}
