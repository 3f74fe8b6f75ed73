import Foundation
import Logging
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfHardcover
import ShelfImaging
import ShelfOCR
import ShelfPipeline
import ShelfProviders
import ShelfStore
import ShelfWatch

/// One line of `shelfd doctor`.
package struct DoctorCheck: Codable, Sendable {
    package var name: String
    package var ok: Bool
    /// error | warning
    package var severity: String
    package var message: String

    static func pass(_ name: String, _ message: String) -> DoctorCheck {
        .init(name: name, ok: true, severity: "info", message: message)
    }
    static func fail(_ name: String, _ message: String) -> DoctorCheck {
        .init(name: name, ok: false, severity: "error", message: message)
    }
    static func warn(_ name: String, _ message: String) -> DoctorCheck {
        .init(name: name, ok: false, severity: "warning", message: message)
    }
}

/// The checks behind `shelfd doctor`: configuration, keys (never their values), folders, inotify, provider.
package enum DoctorChecks {
    package static func run(config: Configuration, configSource: String?, secrets: Secrets, logger: Logger) async
        -> [DoctorCheck]
    {
        var checks: [DoctorCheck] = []
        checks.append(.pass("configuration", configSource.map { "read \($0)" } ?? "no file found; built-in defaults"))
        let chosen = ProviderChoice.resolve(config: config, secrets: secrets)
        let lineup: Lineup
        do { lineup = try Runtime.makeLineup(config: config, secrets: secrets, chosen: chosen, time: .system) } catch {
            return checks + [.fail("provider", "\(error)")]
        }
        checks.append(.pass("provider choice", chosen.reason))
        for channel in lineup.channels { checks.append(keyCheck(channel.kind, secrets: secrets)) }
        for (name, folder) in [
            ("root", config.paths.root), ("incoming", config.paths.incoming),
            ("results", config.paths.results), ("state", config.paths.state),
        ] {
            checks.append(folderCheck(name: name, path: folder))
        }
        checks.append(contentsOf: watchChecks(config: config))
        checks.append(webCheck(config: config, secrets: secrets))
        checks.append(ocrFilesCheck(config: config, uses: lineup.channels.contains { $0.kind == .ocr }))
        if let barcodes = barcodeCheck(config: config) { checks.append(barcodes) }
        checks.append(contentsOf: enrichmentChecks(config: config))
        checks.append(storeCheck(config: config, secrets: secrets))
        if let hardcover = await hardcoverCheck(config: config, secrets: secrets) { checks.append(hardcover) }
        for channel in lineup.channels { checks.append(await providerCheck(channel, secrets: secrets)) }
        return checks
    }

    /// The secret a provider kind needs (or may use), without its value: where it came from.
    static func keyCheck(_ kind: ProviderKind, secrets: Secrets) -> DoctorCheck {
        if let problem = Runtime.missingKeyProblem(for: kind, secrets: secrets) { return .fail("key", problem) }
        let facts = kind.facts
        guard let name = (facts.required + facts.optional).first, secrets[name] != nil else {
            return .pass("key", "\(kind.rawValue) needs no key")
        }
        let origin = secrets.origins[name].map { $0 == .credential ? "a systemd credential" : "the environment" } ?? "?"
        return .pass("key", "\(facts.secretsLabel) present (from \(origin))")
    }

    /// Where the queue lives: the URL of `[store] url` without its password, and where the password comes from.
    static func storeCheck(config: Configuration, secrets: Secrets) -> DoctorCheck {
        guard let url = config.store.postgres else { return .pass("store", "SQLite: \(config.paths.database)") }
        let password =
            secrets[.storePassword] != nil ? "the secret store_password" : url.password != nil ? "the URL" : "none"
        do {
            let workers = try StoreAccess.open(config: config, secrets: secrets).workers.all()
            return .pass(
                "store",
                "PostgreSQL at \(url) (password: \(password)): reachable, \(workers.count) worker\(workers.count == 1 ? "" : "s") registered; "
                    + "the local catalogue stays in \(config.paths.database)")
        } catch {
            return .fail("store", "PostgreSQL at \(url) (password: \(password)): \(error)")
        }
    }

    /// The offline reader's files, the chosen engine's (PP-OCR's models and ONNX Runtime, or the traineddata of each
    /// `[ocr] languages` entry): an error when the OCR is in use, a warning otherwise (it is the fallback when keys go
    /// missing).
    static func ocrFilesCheck(config: Configuration, uses: Bool) -> DoctorCheck {
        func lacking(_ name: String, _ advice: String) -> DoctorCheck {
            uses ? .fail(name, advice) : .warn(name, advice)
        }
        if case .ppocr(let files) = config.ocrSettings.engine {
            if let missing = files.missing() { return lacking("ocr files", missing.message) }
            return .pass("ocr files", "\(OnnxRuntime.libraryName) and the PP-OCR models in \(files.modelsFolder)")
        }
        let folder = Traineddata.folder()
        let missing = Traineddata.missing(config.ocr.languages, in: folder)
        guard missing.isEmpty else {
            return lacking("ocr languages", Traineddata.advice(missing: missing, folder: folder))
        }
        return .pass(
            "ocr languages",
            "\(config.ocr.languages.map { "\($0).traineddata" }.joined(separator: ", ")) in \(folder ?? "?")")
    }

    /// Whether the photos' ISBN barcodes can be read (`[pipeline] barcodes`); nil when they are not to be. Without
    /// libzbar photos are still read, by the provider alone: a warning, not an error.
    static func barcodeCheck(config: Configuration) -> DoctorCheck? {
        guard config.pipeline.barcodes != .off else { return nil }
        do {
            return .pass(
                "barcodes",
                "ZBar \(try BarcodeReader.version()) reads each photo's ISBN barcodes (barcodes = \"\(config.pipeline.barcodes.rawValue)\")"
            )
        } catch {
            return .warn("barcodes", error.description)
        }
    }

    /// Whether Hardcover takes the token (`me`); nil when none is set. A refused token is an error (nothing is pushed);
    /// Hardcover not answering is a warning (pushing waits for it).
    static func hardcoverCheck(config: Configuration, secrets: Secrets) async -> DoctorCheck? {
        switch await HardcoverDesk.checkToken(config: config, secrets: secrets) {
        case nil: nil
        case .success(let user):
            .pass(
                "hardcover",
                "the token is \(user)'s; verified works are added \(config.hardcover.push == .background ? "as `watch` verifies them" : "by 'shelfd hardcover push'")"
            )
        case .failure(let error):
            error.code == HardcoverError.tokenRefused("").code
                ? .fail("hardcover", error.description) : .warn("hardcover", error.description)
        }
    }

    /// What books are looked up in: how many the local catalogue holds, and whether OpenLibrary knows whom to
    /// contact (it serves anonymous clients slowly and may refuse them).
    static func enrichmentChecks(config: Configuration) -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        if config.enrich.sources.contains(.catalogue) {
            let count = (try? Store.openForReading(path: config.paths.database)?.catalogue.count()) ?? 0
            checks.append(
                count > 0
                    ? .pass("catalogue", "\(count) book\(count == 1 ? "" : "s") to match spines against")
                    : .warn(
                        "catalogue",
                        "empty: import the books you own ('shelfd catalogue import FILE': a Goodreads, StoryGraph or LibraryThing export, or a CSV of title and author) so spines are matched offline first"
                    ))
        }
        if config.enrich.sources.contains(.openlibrary), config.enrich.contact.isEmpty {
            checks.append(
                .warn(
                    "openlibrary",
                    "enrich.contact is empty: OpenLibrary asks for a way to reach you (an e-mail address) and serves anonymous clients one request a second"
                ))
        }
        return checks
    }

    static func folderCheck(name: String, path: String) -> DoctorCheck {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            return .warn("folder \(name)", "\(path) does not exist yet; shelfd creates it at start")
        }
        guard isFolder.boolValue else { return .fail("folder \(name)", "\(path) is not a folder") }
        guard access(path, W_OK | X_OK) == 0 else {
            return .fail(
                "folder \(name)",
                "\(path) is not writable by user \(ProcessInfo.processInfo.userName): \(String(cString: strerror(errno)))"
            )
        }
        return .pass("folder \(name)", "\(path) is writable")
    }

    static func watchChecks(config: Configuration) -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        let kind = FileSystemKind.of(
            path: FileManager.default.fileExists(atPath: config.paths.incoming)
                ? config.paths.incoming : config.paths.root)
        if kind.prefersPolling {
            checks.append(
                .warn(
                    "watch",
                    "incoming/ is on \(kind.name): inotify does not see changes made by other machines there, so shelfd polls every \(config.watch.pollIntervalS) s"
                ))
        } else {
            checks.append(.pass("watch", "incoming/ is on \(kind.name); watch.mode = \(config.watch.mode.rawValue)"))
        }
        if let raw = try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8),
            let limit = Int(raw.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            let folders = countFolders(under: config.paths.incoming)
            if folders * 5 > limit * 4 {
                checks.append(
                    .warn(
                        "inotify",
                        "incoming/ has \(folders) folders and the limit is \(limit) watches; raise it: echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/90-shelfd.conf && sudo sysctl --system"
                    ))
            } else {
                checks.append(
                    .pass(
                        "inotify",
                        "\(folders) folder\(folders == 1 ? "" : "s") to watch; fs.inotify.max_user_watches = \(limit)"))
            }
        }
        return checks
    }

    /// Where the web page is (or would be) served; an address beyond loopback without the token is an error,
    /// since the server refuses to start there. The token is named, never shown.
    static func webCheck(config: Configuration, secrets: Secrets) -> DoctorCheck {
        guard config.web.enabled, !config.web.listen.isEmpty else {
            return .pass("web", "the web page is off ([web] listen = \"\" or enabled = false)")
        }
        guard let address = config.web.address else {
            return .fail(
                "web", "[web] listen = \"\(config.web.listen)\" is not host:port; write e.g. \"127.0.0.1:8787\"")
        }
        if !address.isLoopback && secrets.webToken == nil {
            return .fail(
                "web",
                "[web] listen = \"\(address)\" is beyond this machine and the secret web_token is not set: "
                    + "the page will not start. Set web_token (a systemd credential or WEB_TOKEN), or listen on 127.0.0.1."
            )
        }
        if let problem = secrets.webTokenProblem {
            return .fail("web", problem + " The page will not start until then.")
        }
        let store = try? StoreAccess.openForReading(config: config, secrets: secrets)
        let serving = (store ?? nil).flatMap { try? StatusReport.webAddress($0) }
        let login =
            address.isLoopback
            ? "loopback only, no login" : "beyond loopback; log in with the token or 'shelfd web --print-login-url'"
        if let serving { return .pass("web", "served at \(serving) (\(login))") }
        return .pass("web", "http://\(address)/ when 'shelfd watch' or 'shelfd web' runs (\(login)); not served now")
    }

    static func countFolders(under path: String) -> Int {
        guard
            let walker = FileManager.default.enumerator(
                at: URL(fileURLWithPath: path), includingPropertiesForKeys: [.isDirectoryKey])
        else { return 0 }
        var count = 1
        for case let url as URL in walker
        where (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true { count += 1 }
        return count
    }

    static func providerCheck(_ channel: ProviderChannel, secrets: Secrets) async -> DoctorCheck {
        guard Runtime.missingKeyProblem(for: channel.kind, secrets: secrets) == nil else {
            return .fail("provider", "\(channel.name) not asked: no key")
        }
        switch await channel.provider.checkReachable() {
        case .success(let message): return .pass("provider", message)
        case .failure(let error): return .fail("provider", error.message)
        }
    }
}
