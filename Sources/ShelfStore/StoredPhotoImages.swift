import Foundation

/// A photo's provider-ready image in the database (upright, scaled to the provider's preset, re-encoded, no
/// metadata: as it is sent), for workers on other machines that cannot read the file it arrived as. Stored only when
/// the store is shared (PostgreSQL); about 0.2 to 0.6 MB a photo at the hosted providers' presets.
extension PhotoQueue {
    package func photoImage(sha256: String) throws -> [UInt8]? {
        try readStatement { db in
            guard
                case .blob(let bytes) = try db.queryOne("SELECT jpeg FROM photo_image WHERE sha256 = ?", [sha256])?[
                    "jpeg"]
            else {
                return nil
            }
            return bytes
        }
    }

    /// Whether the store keeps the photo's image, without reading it (a page that only links to a crop).
    package func hasPhotoImage(sha256: String) throws -> Bool {
        try readStatement { db in try db.queryOne("SELECT 1 AS one FROM photo_image WHERE sha256 = ?", [sha256]) != nil
        }
    }
}
