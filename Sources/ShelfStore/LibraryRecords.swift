import Foundation
import ShelfCore

/// The library and its review queue: the works, their sightings and history, the review items and the decisions
/// taken on them. A concern of the store with a type of its own over the shared database (`Store.library`); the
/// views `ReviewStore` and `LibraryStore` are its surface. The queue's `finish` files a photo's readings here in
/// its own transaction, through this type's statements on that connection (`commitReading`, `closeStaleItems`,
/// `refresh`), so a photo's job and its books commit together.
package struct LibraryRecords: Sendable {
    let database: Store

    package var isShared: Bool { database.isShared }

    func read<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T { try database.read(body) }
    func readAside<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T { try database.readAside(body) }
    func readStatement<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T { try database.readStatement(body) }
    func write<T>(_ body: (any DatabaseConnection) throws -> T) throws -> T { try database.write(body) }

    /// The provider-ready image stored with a photo (a shared store's), as the photo's job keeps it.
    package func photoImage(sha256: String) throws -> [UInt8]? { try database.photoImage(sha256: sha256) }
    package func hasPhotoImage(sha256: String) throws -> Bool { try database.hasPhotoImage(sha256: sha256) }
}

extension Store {
    /// The library and its review queue.
    package var library: LibraryRecords { LibraryRecords(database: self) }
}
