import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfEnrichment
import ShelfHTTP
import ShelfStore

extension Runtime {
    /// The sources of `enrich.sources`, in their order: the local catalogue as it is, the remote ones behind
    /// the lookup cache (`refresh` asks them again). One HTTP client for both: their requests are few and spaced.
    /// `catalogue`: the local catalogue, in the database `StoreAccess.catalogue` opens.
    package static func makeSources(
        config: Configuration, secrets: Secrets, cache: LookupCache, catalogue: Catalogue,
        refresh: Bool, logger: Logger, time: TimeSource
    ) throws -> [any BookSource] {
        let http = HTTPClient(maxConcurrent: 2)
        let maxAge = CacheAge(days: config.enrich.cacheDays)
        return try config.enrich.sources.map { kind throws -> any BookSource in
            switch kind {
            case .catalogue:
                do { return try CatalogueSource(catalogue: catalogue) } catch {
                    throw StartupError("Cannot read the local catalogue in \(config.paths.database): \(error)")
                }
            case .openlibrary:
                let source = OpenLibrarySource(
                    baseURL: config.enrich.openlibraryBaseURL, contact: config.enrich.contact,
                    http: http, logger: Logger(label: "shelfd.openlibrary"), time: time)
                return CachedSource(wrapping: source, cache: cache, time: time, maxAge: maxAge, refresh: refresh)
            case .googlebooks:
                let source = GoogleBooksSource(
                    baseURL: config.enrich.googlebooksBaseURL, apiKey: secrets.googleBooksAPIKey,
                    http: http, logger: Logger(label: "shelfd.googlebooks"), time: time)
                return CachedSource(wrapping: source, cache: cache, time: time, maxAge: maxAge, refresh: refresh)
            }
        }
    }
}
