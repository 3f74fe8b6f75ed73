// swift-tools-version:6.1
import PackageDescription

let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// swift-log's products, named once: most targets log, and their tests read the lines back.
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let inMemoryLogging: Target.Dependency = .product(name: "InMemoryLogging", package: "swift-log")

let package = Package(
    name: "shelfd",
    platforms: [.macOS(.v15)],
    products: [.executable(name: "shelfd", targets: ["shelfd"])],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
        // The web page: the HTTP server (without swift-configuration, which shelfd.toml makes unneeded),
        // its templates, and /metrics.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // PostgreSQL, the store several workers share ([store] url); SQLite stays the default.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // C libraries, each through a modulemap and a header of static inline shims.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CInotifyTools", providers: [.apt(["libinotifytools0-dev"])]),
        .systemLibrary(name: "CMalloc"),
        // libheif, libtesseract and libzbar: headers only (in the compiler's default paths); the libraries are opened
        // with dlopen on first use (see their shim.h), so no pkgConfig, whose libs would link them at start.
        .systemLibrary(name: "CHeif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CTesseract", providers: [.apt(["libtesseract-dev", "tesseract-ocr-eng"])]),
        // libzbar: EAN-13 barcodes (ISBNs) on photos; headers only, opened with dlopen like libheif.
        .systemLibrary(name: "CZBar", providers: [.apt(["libzbar-dev"])]),
        // libcrypto is on the machine anyway (libcurl links it); swift-crypto would add minutes to every CI build.
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CExif", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),

        // Values and rules: no I/O, no C.
        .target(name: "ShelfCore", swiftSettings: settings),
        // SHA-256 (libcrypto): a photo's identity, a review item's id.
        .target(name: "ShelfDigest", dependencies: ["CCrypto"], swiftSettings: settings),
        // shelfd.toml: lookup, parsing, validation, secrets; what the configuration says of each provider kind, once
        // (Providers/<Name>Facts.swift). A new provider touches six files: ARCHITECTURE.md, "Where to look", lists them.
        .target(
            name: "ShelfConfig",
            dependencies: [
                "ShelfCore", .product(name: "TOMLKit", package: "TOMLKit"),
            ], swiftSettings: settings),
        // SQLite: schema, migrations, job queue, library, provider state, events.
        .target(name: "ShelfStore", dependencies: ["ShelfCore", "ShelfDigest", "CSQLite"], swiftSettings: settings),
        // PostgreSQL behind the store's seams (StoreSeams.swift), for several workers on one database. A target of its
        // own so that SQLite-only code does not link PostgresNIO.
        .target(
            name: "ShelfPostgres",
            dependencies: [
                "ShelfCore", "ShelfStore", .product(name: "PostgresNIO", package: "postgres-nio"),
                logging,
            ], swiftSettings: settings),
        // Photo inspection and preprocessing: JPEG (TurboJPEG) and HEIC (libheif) in, upright resized JPEG out; the ISBN
        // barcodes on a photo (ZBar).
        .target(
            name: "ShelfImaging", dependencies: ["ShelfCore", "CTurboJPEG", "CHeif", "CExif", "CZBar"],
            swiftSettings: settings),
        // One libcurl-based async HTTP client.
        .target(
            name: "ShelfHTTP",
            dependencies: ["CCurl", "ShelfCore", logging],
            swiftSettings: settings),
        // Vision providers: request, parse, classify errors.
        .target(
            name: "ShelfProviders",
            dependencies: [
                "ShelfCore", "ShelfHTTP", "ShelfImaging", logging,
            ], swiftSettings: settings),
        // inotify + polling, stability tracking, ignore rules.
        .target(
            name: "ShelfWatch",
            dependencies: [
                "ShelfCore", "CInotifyTools", logging,
            ], swiftSettings: settings),
        // Spine text against records: the matcher, its scoring and the acceptance rule. Pure: no store, no I/O.
        .target(name: "ShelfMatching", dependencies: ["ShelfCore"], swiftSettings: settings),
        // Books: the local catalogue, OpenLibrary and Google Books, the lookup cache, the enricher.
        .target(
            name: "ShelfEnrichment",
            dependencies: [
                "ShelfCore", "ShelfMatching", "ShelfStore", "ShelfHTTP", "CZlib",
                logging,
            ], swiftSettings: settings),
        // Hardcover's GraphQL API, and the push of verified works to a person's library there.
        .target(
            name: "ShelfHardcover",
            dependencies: [
                "ShelfCore", "ShelfStore", "ShelfHTTP", logging,
            ], swiftSettings: settings),
        // The offline provider: PP-OCR's models through ONNX Runtime (opened with dlopen) read the spines, or Tesseract
        // with `[ocr] engine = "tesseract"`; the enrichment matches their text like any reading.
        .target(
            name: "ShelfOCR",
            dependencies: [
                "ShelfCore", "ShelfImaging", "ShelfProviders", "CTesseract", "CMalloc",
                logging,
            ], swiftSettings: settings),
        // The library in the files other apps import (Goodreads, StoryGraph, LibraryThing, Libib), and the review queue as CSV.
        .target(name: "ShelfExport", dependencies: ["ShelfCore"], swiftSettings: settings),
        // The files a person reads: results' writing primitive (AtomicFile), library.json, review/, the exports kept current.
        .target(
            name: "ShelfOutputs",
            dependencies: [
                "ShelfCore", "ShelfDigest", "ShelfExport", "ShelfImaging", "ShelfStore",
                logging,
            ], swiftSettings: settings),
        // The queue pipeline: ingest, schedule, read a photo (the one PhotoReader), write its result, commit a batch.
        .target(
            name: "ShelfPipeline",
            dependencies: [
                "ShelfCore", "ShelfDigest", "ShelfStore", "ShelfImaging", "ShelfProviders", "ShelfEnrichment",
                "ShelfOutputs",
                logging,
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ], swiftSettings: settings),
        // The application layer the doors (command line, web) meet: the review and library desks, status, requeue,
        // rescan, which provider `auto` picks, whether this node writes the files for people.
        .target(
            name: "ShelfApp",
            dependencies: [
                "ShelfCore", "ShelfDigest", "ShelfConfig", "ShelfStore", "ShelfEnrichment", "ShelfImaging",
                "ShelfOutputs", "ShelfPipeline",
                "ShelfOCR", "ShelfHardcover", "ShelfHTTP", "CMalloc",
                logging,
            ], swiftSettings: settings),
        // The wiring: configuration → runtime (providers, sources, either store), `watch` as services in one ServiceGroup, doctor, eval, sd_notify.
        .target(
            name: "ShelfDaemon",
            dependencies: [
                "ShelfApp", "ShelfCore", "ShelfDigest", "CSystemd", "ShelfConfig", "ShelfStore", "ShelfImaging",
                "ShelfHTTP", "ShelfProviders", "ShelfWatch",
                "ShelfEnrichment", "ShelfOCR", "ShelfPipeline", "ShelfOutputs", "ShelfPostgres", "ShelfHardcover",
                "CMalloc",
                logging,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ], swiftSettings: settings),
        // The web page and the API for scripts: one more service of `watch`, or `shelfd web` alone. Templates,
        // stylesheet and script are compiled into the binary (embedInCode): an installed shelfd is one file.
        .target(
            name: "ShelfWeb",
            dependencies: [
                "ShelfCore", "ShelfConfig", "ShelfApp",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                logging,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ], resources: [.embedInCode("Resources")], swiftSettings: settings),
        // The command line.
        .executableTarget(
            name: "shelfd",
            dependencies: [
                "ShelfDaemon", "ShelfApp", "ShelfWeb", "ShelfCore", "ShelfConfig",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                logging,
            ], swiftSettings: settings),

        // Test support: a loopback HTTP server, provider emulators, temporary roots, the built binary, a WebDriver browser,
        // a PostgreSQL server of the tests' own. The benchmarks use it too, so it does not import Testing.
        .target(
            name: "ShelfTesting",
            dependencies: ["ShelfCore", "ShelfDigest", "ShelfHTTP", "ShelfStore", "CTurboJPEG", "CHeif"],
            path: "Tests/ShelfTesting",
            swiftSettings: settings),
        .testTarget(name: "ShelfCoreTests", dependencies: ["ShelfCore"], swiftSettings: settings),
        // The repository as a whole: ARCHITECTURE.md's code map against every target's imports.
        .testTarget(name: "RepositoryTests", swiftSettings: settings),
        .testTarget(name: "ShelfDigestTests", dependencies: ["ShelfDigest"], swiftSettings: settings),
        .testTarget(
            name: "ShelfConfigTests", dependencies: ["ShelfConfig", "ShelfApp", "ShelfOCR"], swiftSettings: settings),
        // The store's statements and its contract, each test on SQLite and on PostgreSQL (one server per suite, a database
        // per test: StoreSites.swift, with Swift Testing's `.postgresServer` trait), so the one set of statements is
        // checked on both engines. Test support that needs Swift Testing lives in a test target: a release build never
        // reaches it.
        .testTarget(
            name: "ShelfStoreTests", dependencies: ["ShelfStore", "ShelfPostgres", "ShelfCore", "ShelfTesting"],
            // Fixtures/: dumps of databases of an earlier schema, which the migration tests upgrade.
            exclude: ["Fixtures"], swiftSettings: settings),
        .testTarget(
            name: "ShelfImagingTests", dependencies: ["ShelfImaging", "ShelfCore", "ShelfTesting"],
            swiftSettings: settings),
        .testTarget(name: "ShelfWatchTests", dependencies: ["ShelfWatch", "ShelfTesting"], swiftSettings: settings),
        .testTarget(
            name: "ShelfHTTPTests",
            dependencies: [
                "ShelfHTTP", "ShelfTesting", logging,
                inMemoryLogging,
            ], swiftSettings: settings),
        .testTarget(
            name: "ShelfProvidersTests",
            dependencies: [
                "ShelfProviders", "ShelfDigest", "ShelfTesting",
                inMemoryLogging,
            ], swiftSettings: settings),
        .testTarget(name: "ShelfMatchingTests", dependencies: ["ShelfMatching", "ShelfCore"], swiftSettings: settings),
        .testTarget(
            name: "ShelfEnrichmentTests",
            dependencies: [
                "ShelfEnrichment", "ShelfMatching", "ShelfStore", "ShelfTesting",
                inMemoryLogging,
            ], swiftSettings: settings),
        // The PP-OCR reader's tests use the real ONNX Runtime and models (scripts/install-deps.sh) and rendered pictures
        // (Fixtures/, made by scripts/make-ocr-fixtures.sh), some matched against samples/catalogue.csv.
        .testTarget(
            name: "ShelfOCRTests",
            dependencies: [
                "ShelfOCR", "ShelfImaging", "ShelfProviders", "ShelfEnrichment", "ShelfStore", "ShelfTesting",
                logging,
            ],
            exclude: ["Fixtures"], swiftSettings: settings),
        .testTarget(
            name: "ShelfHardcoverTests",
            dependencies: [
                "ShelfHardcover", "ShelfStore", "ShelfApp", "ShelfConfig", "ShelfTesting",
                logging,
            ],
            swiftSettings: settings),
        .testTarget(
            name: "ShelfExportTests", dependencies: ["ShelfExport"], exclude: ["Golden"], swiftSettings: settings),
        // Support for the tests that run shelfd's machinery in their own process: a temporary root and its configuration,
        // the daemon's runtime on a manual clock (InProcessShelf), the web site's router answering without a socket
        // (InProcessSite, through HummingbirdTesting).
        .target(
            name: "ShelfRuntimeTesting",
            dependencies: [
                "ShelfTesting", "ShelfCore", "ShelfConfig", "ShelfStore", "ShelfApp", "ShelfDaemon", "ShelfPipeline",
                "ShelfWeb", "ShelfDigest", "ShelfImaging",
                logging,
                inMemoryLogging,
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/ShelfRuntimeTesting",
            swiftSettings: settings),
        // The pages and the API, through the site's router in the test's process.
        .testTarget(
            name: "ShelfWebTests",
            dependencies: [
                "ShelfWeb", "ShelfApp", "ShelfWatch", "ShelfTesting", "ShelfRuntimeTesting", "ShelfCore", "ShelfDigest",
                "ShelfStore", "ShelfDaemon", .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: settings),
        .testTarget(
            name: "ShelfAppTests",
            dependencies: [
                "ShelfApp", "ShelfConfig", "ShelfCore", "ShelfStore", "ShelfTesting",
                logging,
            ],
            swiftSettings: settings),
        // The daemon's runtime in the test's process: a run's reading of a photo, and its pace on a manual clock.
        .testTarget(
            name: "ShelfDaemonTests",
            dependencies: [
                "ShelfDaemon", "ShelfPipeline", "ShelfCore", "ShelfStore", "ShelfTesting", "ShelfRuntimeTesting",
                "ShelfApp", "ShelfImaging", "ShelfDigest", "ShelfOCR",
            ],
            swiftSettings: settings),
        .testTarget(
            name: "ShelfPipelineTests", dependencies: ["ShelfPipeline", "ShelfConfig", "ShelfTesting"],
            swiftSettings: settings),
        // openpty for the tests that drive `shelfd review` through a pseudo-terminal.
        .systemLibrary(name: "CPty", path: "Tests/CPty"),
        // `shelfd` itself: `swift test` builds the binary these tests run (Harness refuses a stale one): signals, inotify,
        // real files and sockets, a browser, a real PostgreSQL server (the outage and rate-limit tests set the runtime on a
        // manual clock beside the binary).
        .testTarget(
            name: "ShelfdTests",
            dependencies: [
                "shelfd", "ShelfTesting", "ShelfCore", "ShelfDigest", "ShelfConfig", "ShelfImaging", "ShelfStore",
                "ShelfEnrichment", "ShelfHTTP", "ShelfOCR", "ShelfWeb", "ShelfApp", "ShelfDaemon",
                "ShelfPipeline", "ShelfRuntimeTesting", "CPty",
                logging,
                inMemoryLogging,
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: settings),

        // Benchmarks: the built `shelfd` against the emulators; numbers are printed, never asserted.
        .executableTarget(
            name: "shelfd-bench",
            dependencies: [
                "ShelfTesting", "ShelfCore", "ShelfStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ], path: "Benchmarks/ThroughputBenchmark", swiftSettings: settings),
        // Preprocessing: milliseconds and peak RSS per preset, beside djpeg | cjpeg.
        .executableTarget(
            name: "shelfd-bench-preprocess",
            dependencies: ["ShelfImaging", "ShelfTesting", "ShelfCore", "ShelfConfig"],
            path: "Benchmarks/PreprocessBenchmark", swiftSettings: settings),
        // Spine matching on the shared library data set: top-1, auto-accept rate and wrong matches, ms per spine.
        .executableTarget(
            name: "shelfd-bench-match", dependencies: ["ShelfEnrichment", "ShelfMatching", "ShelfStore", "ShelfCore"],
            path: "Benchmarks/MatchBenchmark", swiftSettings: settings),
        // The database after a year of photos, before and after pruning (`[pipeline] keep_days`): bytes per photo.
        .executableTarget(
            name: "shelfd-bench-store",
            dependencies: [
                "ShelfDaemon", "ShelfStore", "ShelfCore", "ShelfDigest", "ShelfTesting",
                logging,
            ], path: "Benchmarks/StoreBenchmark", swiftSettings: settings),
        // The web page at scale: the library page at 10,000 works, a review decision's round trip, wrk on the API.
        .executableTarget(
            name: "shelfd-bench-web",
            dependencies: [
                "ShelfTesting", "ShelfStore", "ShelfHTTP", "ShelfOutputs",
                logging,
            ],
            path: "Benchmarks/WebBenchmark", swiftSettings: settings),
        // A shelf's round, its page and "where is my book" at 1,000 and 30,000 works, on SQLite and PostgreSQL.
        .executableTarget(
            name: "shelfd-bench-shelves", dependencies: ["ShelfTesting", "ShelfCore", "ShelfStore", "ShelfPostgres"],
            path: "Benchmarks/ShelvesBenchmark", swiftSettings: settings),
        // The library as the first source, end to end: the twins a second day of photos leaves, on the same shelves and
        // on others.
        .executableTarget(
            name: "shelfd-bench-twins", dependencies: ["ShelfTesting", "ShelfCore", "ShelfDigest", "ShelfImaging"],
            path: "Benchmarks/TwinsBenchmark", swiftSettings: settings),
        // Several `watch` workers on one PostgreSQL: photos/s with 1, 2 and 4 beside the ideal and one worker on SQLite,
        // and the database's statements, transactions and claim time per photo.
        .executableTarget(
            name: "shelfd-bench-workers",
            dependencies: ["ShelfTesting", "ShelfCore", "ShelfStore", "ShelfPostgres", "ShelfHTTP"],
            path: "Benchmarks/WorkersBenchmark", swiftSettings: settings),
        // The offline OCR provider on real photos: seconds per photo, the spines read and the books made of them.
        .executableTarget(
            name: "shelfd-bench-ocr",
            dependencies: [
                "ShelfOCR", "ShelfEnrichment", "ShelfImaging", "ShelfStore", "ShelfCore", "ShelfProviders",
                logging,
            ], path: "Benchmarks/OCRBenchmark", swiftSettings: settings),
    ]
)
