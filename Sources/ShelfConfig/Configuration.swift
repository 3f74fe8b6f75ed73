package import ShelfCore

/// Everything `shelfd.toml` can say (docs/configuration.md), with paths already expanded and absolute.
/// The defaults written on each property are the built-in defaults; `etc/shelfd.toml` repeats them
/// (a test keeps the two equal).
package struct Configuration: Sendable, Equatable {
    package var paths: Paths
    package var pipeline = Pipeline()
    package var watch = Watch()
    package var hybrid = Hybrid()
    package var enrich = Enrich()
    package var shelves = Shelves()
    package var export = Export()
    package var hardcover = Hardcover()
    package var log = Log()
    package var web = Web()
    /// `[store]`: SQLite (the default) or a shared PostgreSQL server (StoreURL.swift).
    package var store = StoreLocation()
    /// Each provider's section (`gemini`, `cloudflare`, `openai`, `ocr`), declared in its facts file.
    package var providers = ProviderSections()

    package init(paths: Paths) { self.paths = paths }

    /// The built-in configuration, used when no file is found. `home` expands the `~` in the default paths.
    package static func defaults(home: String) -> Configuration {
        let paths = Paths(
            root: PathRules.normalize(PathRules.join(home, "Shelves")),
            state: PathRules.normalize(PathRules.join(home, ".local/state/shelfd")))
        return Configuration(paths: paths)
    }

    /// The default paths as written in the file, before `~` is expanded.
    static let defaultRoot = "~/Shelves"
    static let defaultState = "~/.local/state/shelfd"

    // MARK: - Sections

    package struct Paths: Sendable, Equatable {
        /// incoming/, results/, review/, library.json live here.
        package var root: String
        /// shelfd.db and saved raw responses; never inside `incoming`.
        package var state: String

        package init(root: String, state: String) { self.root = root; self.state = state }

        /// Watched, recursive; shelfd never writes here.
        package var incoming: String { PathRules.join(root, "incoming") }
        package var results: String { PathRules.join(root, "results") }
        package var review: String { PathRules.join(root, "review") }
        /// Where `after = "move"` puts finished originals.
        package var processed: String { PathRules.join(root, "processed") }
        package var exports: String { PathRules.join(root, "exports") }
        package var libraryFile: String { PathRules.join(root, "library.json") }
        package var database: String { PathRules.join(state, "shelfd.db") }
        /// Raw provider answers, saved before they are used so a crash never pays twice.
        package var responses: String { PathRules.join(state, "responses") }
        /// Held while library.json, review/ and exports/ are brought in line with the database.
        package var filesLock: String { PathRules.join(state, "files.lock") }
    }

    /// What happens to an original once its photo is done.
    package enum AfterProcessing: String, Sendable, CaseIterable {
        case keep // leave it where it is (moving a file out of a synced folder deletes it on the phone)
        case move // to root/processed/
    }

    package struct Pipeline: Sendable, Equatable {
        package var provider = Provider.auto
        /// Photos claimed and finished together, 1…5.
        package var batchSize = 5
        /// Provider requests in flight, 1…16.
        package var concurrency = 2
        /// Books below this confidence need review, 0…1.
        package var reviewThreshold = 0.60
        package var after = AfterProcessing.keep
        /// Attempts before a photo is `dead`, ≥ 1.
        package var maxAttempts = 5
        /// Days the events and saved provider answers of a finished photo are kept; 0 keeps them for ever.
        package var keepDays = 30
        /// The longest wait between two probes of a provider that is down (5 s doubling up to this), 1…86400.
        package var probeMaxS = 300
        /// Whether the ISBN barcodes on a photo are read, and whether they spare the provider.
        package var barcodes = BarcodeMode.also
        package init() {}
    }

    package enum WatchMode: String, Sendable, CaseIterable {
        case auto, inotify, poll // auto: poll on nfs/cifs/fuse
    }

    package struct Watch: Sendable, Equatable {
        package var mode = WatchMode.auto
        /// Size and mtime must stay unchanged this long before a photo is taken.
        package var settleMs = 2000
        package var pollIntervalS = 30
        /// Full rescan of incoming/; 0 turns it off.
        package var rescanIntervalS = 3600
        /// Extra globs on top of the built-in sync-tool temp names.
        package var ignore: [String] = []
        package init() {}
    }

    package struct Hybrid: Sendable, Equatable {
        /// Single providers only: a hybrid made of hybrids would never reach a real model.
        package var fast = ProviderKind.cloudflare
        package var accurate = ProviderKind.gemini
        /// Mean confidence (or any book) below this sends the photo to `accurate`.
        package var escalateBelow = 0.70
        package init() {}
    }

    package enum EnrichSource: String, Sendable, CaseIterable {
        case catalogue, openlibrary, googlebooks
    }

    package struct Enrich: Sendable, Equatable {
        package var sources: [EnrichSource] = [.catalogue, .openlibrary, .googlebooks]
        package var openlibraryBaseURL = "https://openlibrary.org"
        package var googlebooksBaseURL = "https://www.googleapis.com"
        /// Goes into the User-Agent OpenLibrary asks for.
        package var contact = ""
        /// How long a remote lookup that found a book is reused (one that found nothing: a week at most).
        package var cacheDays = 90
        package init() {}
    }

    /// Shelves as places: a shelf's photos are taken in rounds, each compared with the shelf's books.
    package struct Shelves: Sendable, Equatable {
        /// Photos of one shelf arriving within this many minutes of each other are one round; a round closes once
        /// quiet this long. People photograph a bookcase in several shots, minutes apart.
        package var roundMinutes = 30
        package init() {}
        /// The quiet time that ends a round.
        package var roundQuiet: Double { Double(roundMinutes * 60) }
    }

    package struct Export: Sendable, Equatable {
        /// Goodreads' Exclusive Shelf and StoryGraph's Read Status for every exported book. `to-read`: a book on a
        /// shelf is owned, not necessarily read, and claiming "read" would fill a reading history with books
        /// nobody finished. `--exclusive-shelf` overrides it.
        package var exclusiveShelf = ReadingShelf.toRead
        package init() {}
    }

    /// Hardcover (hardcover.app), where shelfd adds the works it verified to the person's library as owned. Nothing
    /// happens without the secret `hardcover_token`.
    package struct Hardcover: Sendable, Equatable {
        /// When works go to Hardcover: `watch` adds each newly verified work in the background (`background`), or only
        /// `shelfd hardcover push` does (`command`).
        package enum Push: String, Sendable, CaseIterable { case background, command }
        /// Hardcover's GraphQL endpoint; another only for a test's emulator.
        package var url = "https://api.hardcover.app/v1/graphql"
        package var push = Push.background
        /// Also put each work on a Hardcover list named after its shelf (the sub-folder of incoming/ it stands on),
        /// made when missing. Lists are public on Hardcover unless the person changes them.
        package var shelvesAsLists = false
        package init() {}
    }

    /// Raw values match swift-log's `Logger.Level`, so `Logger.Level(rawValue:)` converts.
    package enum LogLevel: String, Sendable, CaseIterable {
        case trace, debug, info, notice, warning, error
    }

    /// The web page and API `watch` and `shelfd web` serve.
    package struct Web: Sendable, Equatable {
        /// `host:port`; empty: no web server. Only a loopback host works without the secret `web_token`.
        package var listen = "127.0.0.1:8787"
        /// False also turns the server off, keeping `listen` for later.
        package var enabled = true
        /// The largest photo the upload form takes, in MiB.
        package var maxUploadMB = 40
        /// The most the page's pictures (`state/web-cache/`) may take, in MiB; past it the least recently used go.
        package var cacheMB = 200
        package init() {}

        /// The address to listen on, when serving is on.
        package var address: ListenAddress? {
            enabled && !listen.isEmpty ? ListenAddress(listen) : nil
        }
    }

    package struct Log: Sendable, Equatable {
        /// `--log-level` overrides it.
        package var level = LogLevel.info
        package init() {}
    }
}

/// `host:port` as `[web] listen` writes it (`[::1]:8787` for IPv6).
package struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init?(_ text: String) {
        let host: Substring, port: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            port = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, !host.contains(" "), let number = Int(port), (0...65_535).contains(number) else {
            return nil
        }
        self.host = String(host)
        self.port = number
    }

    /// Loopback: reachable from this machine only, so no token is needed.
    package var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
