import Foundation
internal import ShelfCore
import TOMLKit

extension Configuration {
    /// Every section and its keys, in the order of `etc/shelfd.toml`. Anything else in a file is an error.
    static let schema: [(section: String, keys: [String])] =
        [
            ("paths", ["root", "state"]),
            (
                "pipeline",
                [
                    "provider", "batch_size", "concurrency", "review_threshold", "after", "max_attempts", "keep_days",
                    "probe_max_s", "barcodes",
                ]
            ),
            ("watch", ["mode", "settle_ms", "poll_interval_s", "rescan_interval_s", "ignore"]),
        ] + ProviderKind.allCases.map { (section: $0.facts.section, keys: $0.facts.keys) } + [
            ("hybrid", ["fast", "accurate", "escalate_below"]),
            ("enrich", ["sources", "openlibrary_base_url", "googlebooks_base_url", "contact", "cache_days"]),
            ("shelves", ["round_minutes"]),
            ("export", ["exclusive_shelf"]),
            ("hardcover", ["url", "push", "shelves_as_lists"]),
            ("log", ["level"]),
            ("web", ["listen", "enabled", "max_upload_mb", "cache_mb"]),
            ("store", ["url", "writes_files"]),
        ]

    /// Parses the text of a configuration file. `file` names it in errors, and relative paths in it
    /// are relative to its folder; `HOME` from `environment` expands `~`.
    package static func parse(
        toml: String, file: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    )
        throws(ConfigError) -> Configuration
    {
        let document: TOMLTable
        do {
            document = try TOMLTable(string: toml)
        } catch let error as TOMLParseError {
            let at = error.source.begin
            throw ConfigError(
                .syntax, "\(file):\(at.line):\(at.column): not valid TOML: \(error.description)", file: file)
        } catch {
            throw ConfigError(.syntax, "\(file): not valid TOML: \(error)", file: file)
        }

        let reader = Reader(file: file, text: toml)
        try reader.checkKeys(document)

        var paths = (root: defaultRoot, state: defaultState)
        var config = Configuration(paths: Paths(root: "", state: ""))

        if let s = reader.section(document, "paths") {
            paths.root = try s.string("root", paths.root)
            paths.state = try s.string("state", paths.state)
        }
        if let s = reader.section(document, "pipeline") {
            var p = config.pipeline
            p.provider = try s.choice("provider", p.provider)
            p.batchSize = try s.int("batch_size", p.batchSize, 1...5)
            p.concurrency = try s.int("concurrency", p.concurrency, 1...16)
            p.reviewThreshold = try s.fraction("review_threshold", p.reviewThreshold)
            p.after = try s.choice("after", p.after)
            p.maxAttempts = try s.int("max_attempts", p.maxAttempts, 1...Int.max)
            p.keepDays = try s.int("keep_days", p.keepDays, 0...36_500)
            p.probeMaxS = try s.int("probe_max_s", p.probeMaxS, 1...86_400)
            p.barcodes = try s.choice("barcodes", p.barcodes)
            config.pipeline = p
        }
        if let s = reader.section(document, "watch") {
            var w = config.watch
            w.mode = try s.choice("mode", w.mode)
            w.settleMs = try s.int("settle_ms", w.settleMs, 0...Int.max)
            w.pollIntervalS = try s.int("poll_interval_s", w.pollIntervalS, 1...Int.max)
            w.rescanIntervalS = try s.int("rescan_interval_s", w.rescanIntervalS, 0...Int.max)
            w.ignore = try s.strings("ignore", w.ignore)
            config.watch = w
        }
        // Each provider's section, as its description reads it.
        for facts in ProviderKind.allCases.map(\.facts) {
            if let s = reader.section(document, facts.section) { try facts.parse(s, &config) }
        }
        if let s = reader.section(document, "hybrid") {
            config.hybrid.fast = try s.choice("fast", config.hybrid.fast)
            config.hybrid.accurate = try s.choice("accurate", config.hybrid.accurate)
            config.hybrid.escalateBelow = try s.fraction("escalate_below", config.hybrid.escalateBelow)
        }
        if let s = reader.section(document, "enrich") {
            var e = config.enrich
            e.sources = try s.choices("sources", e.sources)
            e.openlibraryBaseURL = try s.url("openlibrary_base_url", e.openlibraryBaseURL)
            e.googlebooksBaseURL = try s.url("googlebooks_base_url", e.googlebooksBaseURL)
            e.contact = try s.string("contact", e.contact)
            e.cacheDays = try s.int("cache_days", e.cacheDays, 0...3650)
            config.enrich = e
        }
        if let s = reader.section(document, "shelves") {
            config.shelves.roundMinutes = try s.int("round_minutes", config.shelves.roundMinutes, 1...10_080)
        }
        if let s = reader.section(document, "export") {
            config.export.exclusiveShelf = try s.choice("exclusive_shelf", config.export.exclusiveShelf)
        }
        if let s = reader.section(document, "hardcover") {
            config.hardcover.url = try s.url("url", config.hardcover.url)
            config.hardcover.push = try s.choice("push", config.hardcover.push)
            config.hardcover.shelvesAsLists = try s.bool("shelves_as_lists", config.hardcover.shelvesAsLists)
        }
        if let s = reader.section(document, "log") {
            config.log.level = try s.choice("level", config.log.level)
        }
        if let s = reader.section(document, "web") {
            var w = config.web
            w.listen = try s.string("listen", w.listen)
            w.enabled = try s.bool("enabled", w.enabled)
            w.maxUploadMB = try s.int("max_upload_mb", w.maxUploadMB, 1...4096)
            w.cacheMB = try s.int("cache_mb", w.cacheMB, 1...100_000)
            if !w.listen.isEmpty && ListenAddress(w.listen) == nil {
                throw s.invalid(
                    "listen",
                    "is \"\(w.listen)\"; write host:port, e.g. \"127.0.0.1:8787\" (\"\" turns the web page off)")
            }
            config.web = w
        }
        if let s = reader.section(document, "store") {
            config.store.url = try s.string("url", config.store.url)
            if !config.store.url.isEmpty {
                do { _ = try PostgresURL(config.store.url) } catch {
                    throw s.invalid("url", error.description)
                }
            }
            if let value = s["writes_files"], value.string != "auto" { // "auto": decided at start
                config.store.writesFiles = try s.bool("writes_files", true)
            }
        }

        config.paths = try resolvePaths(
            root: paths.root, state: paths.state, home: environment["HOME"],
            base: folder(of: file), file: file)
        return config
    }

    /// Expands and checks `[paths]`. The output folders (results/, review/, …) are siblings of
    /// incoming/ by construction, so only `state` can end up inside the watched folder.
    static func resolvePaths(
        root rawRoot: String, state rawState: String, home: String?, base: String,
        file: String?
    ) throws(ConfigError) -> Paths {
        let root = try PathRules.resolve(rawRoot, key: "paths.root", home: home, base: base, file: file)
        let state = try PathRules.resolve(rawState, key: "paths.state", home: home, base: base, file: file)
        let paths = Paths(root: root, state: state)
        if PathRules.isInside(state, paths.incoming) {
            throw ConfigError(
                .pathConflict,
                "\(file.map { "\($0): " } ?? "")paths.state (\(state)) is inside \(paths.incoming), the folder "
                    + "shelfd watches for photos. Put the state elsewhere, for example state = \"\(defaultState)\".",
                file: file, key: "paths.state")
        }
        return paths
    }

    /// The absolute folder holding `file`, for relative paths in it.
    static func folder(of file: String) -> String {
        let absolute = file.hasPrefix("/") ? file : PathRules.join(FileManager.default.currentDirectoryPath, file)
        return PathRules.normalize(PathRules.join(PathRules.normalize(absolute), ".."))
    }
}

/// Reads typed values out of one parsed file and turns every problem into a `ConfigError`
/// that names the file, the line when it can be found, and the key.
struct Reader {
    let file: String
    let lines: [String]

    init(file: String, text: String) {
        self.file = file
        self.lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    // MARK: Keys

    /// Rejects unknown keys and secrets, reporting the one nearest the top of the file.
    func checkKeys(_ document: TOMLTable) throws(ConfigError) {
        var problems: [(line: Int, error: ConfigError)] = []
        func note(_ section: String, _ key: String?, _ error: (String) -> ConfigError) {
            let line = self.line(section, key)
            problems.append((line ?? .max, error(location(line))))
        }
        for (name, value) in document {
            if SecretHint.looksLikeSecret(name) {
                note("", name) { SecretHint.error(at: $0, section: "", key: name, file: file) }
            } else if let keys = Configuration.schema.first(where: { $0.section == name })?.keys {
                guard let table = value.table else {
                    note("", name) {
                        ConfigError(
                            .wrongType,
                            "\($0): \(name) must be a table: write [\(name)] on a line of its own and its keys below it.",
                            file: file, key: name)
                    }
                    continue
                }
                for (key, _) in table {
                    if SecretHint.looksLikeSecret(key) {
                        note(name, key) { SecretHint.error(at: $0, section: name, key: key, file: file) }
                    } else if !keys.contains(key) {
                        note(name, key) { unknownKey(at: $0, section: name, key: key, known: keys) }
                    }
                }
            } else {
                note("", name) {
                    unknownKey(at: $0, section: "", key: name, known: Configuration.schema.map(\.section))
                }
            }
        }
        if let first = problems.min(by: { $0.line < $1.line }) { throw first.error }
    }

    private func unknownKey(at location: String, section: String, key: String, known: [String]) -> ConfigError {
        let path = section.isEmpty ? key : "\(section).\(key)"
        // A key written in the wrong section (or above every section) is found in the one it belongs to.
        let elsewhere = Configuration.schema.lazy.filter { $0.section != section }
            .compactMap { other in Suggest.closest(key, other.keys).map { (section: other.section, key: $0) } }.first
        let hint: String
        if let best = Suggest.closest(key, known) {
            hint = section.isEmpty ? "Did you mean [\(best)]?" : "Did you mean \(section).\(best)?"
        } else if let elsewhere {
            hint = "Did you mean \(elsewhere.section).\(elsewhere.key)? It goes under [\(elsewhere.section)]."
        } else if section.isEmpty {
            hint = "The sections are: " + known.map { "[\($0)]" }.joined(separator: ", ") + "."
        } else {
            hint = "The keys of [\(section)] are: \(known.joined(separator: ", "))."
        }
        return ConfigError(.unknownKey, "\(location): unknown key \(path). \(hint)", file: file, key: path)
    }

    // MARK: Sections

    /// `[name]` of `document`, to read its keys from; nil when the file has no such section.
    func section(_ document: TOMLTable, _ name: String) -> SectionReader? {
        document[name]?.table.map { SectionReader(reader: self, table: $0, name: name) }
    }

    // MARK: Errors

    func wrongType(
        _ section: String, _ key: String, _ value: any TOMLValueConvertible,
        expected: String, example: String
    ) -> ConfigError {
        ConfigError(
            .wrongType,
            "\(location(line(section, key))): \(section).\(key) must be \(expected), not \(describe(value.type)). "
                + "For example: \(key) = \(example)", file: file, key: "\(section).\(key)")
    }

    func outOfRange(_ section: String, _ key: String, _ value: String, allowed: String) -> ConfigError {
        ConfigError(
            .outOfRange,
            "\(location(line(section, key))): \(section).\(key) = \(value) is out of range; allowed: \(allowed).",
            file: file, key: "\(section).\(key)")
    }

    func invalid(_ section: String, _ key: String, _ problem: String) -> ConfigError {
        ConfigError(
            .invalidValue, "\(location(line(section, key))): \(section).\(key) \(problem)", file: file,
            key: "\(section).\(key)")
    }

    private func describe(_ type: TOMLType) -> String {
        switch type {
        case .int: "a whole number"
        case .double: "a decimal number"
        case .string: "a string"
        case .bool: "true/false"
        case .array: "an array"
        case .table: "a table"
        case .date, .time, .dateTime: "a date or time"
        }
    }

    // MARK: Lines

    /// `file:line`, or just `file` when the line is unknown.
    private func location(_ line: Int?) -> String {
        line.map { "\(file):\($0)" } ?? file
    }

    /// Best effort: the line of `key` under `[section]` (or as `section.key` at the top), or of the
    /// `[section.key]` / `[section]` header. TOMLKit does not report where a value came from.
    private func line(_ section: String, _ key: String?) -> Int? {
        var current = ""
        var header: Int?
        let full = [section, key ?? ""].filter { !$0.isEmpty }.joined(separator: ".")
        for (index, raw) in lines.enumerated() {
            let text = raw.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("[") {
                current = String(text.drop { $0 == "[" }.prefix { $0 != "]" }).trimmingCharacters(in: .whitespaces)
                if current == full && header == nil { header = index + 1 }
                if key == nil, current == section { return index + 1 }
                continue
            }
            guard let key else { continue }
            if current == section && startsWithKey(text, key) { return index + 1 }
            if current.isEmpty && !section.isEmpty && startsWithKey(text, full) { return index + 1 }
        }
        return header
    }

    private func startsWithKey(_ text: String, _ key: String) -> Bool {
        for candidate in [key, "\"\(key)\""] where text.hasPrefix(candidate) {
            let rest = text.dropFirst(candidate.count).drop { $0 == " " || $0 == "\t" }
            if rest.hasPrefix("=") || rest.hasPrefix(".") { return true }
        }
        return false
    }
}

/// Spelling suggestions for unknown keys and words.
enum Suggest {
    /// The candidate nearest to `word`, if it is near enough to be a typo. `batchSize`, `batch-size`
    /// and `batchsize` all find `batch_size`.
    static func closest(_ word: String, _ candidates: [String]) -> String? {
        let target = fold(word)
        let scored = candidates.map { ($0, distance(target, fold($0))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, target.count / 3) ? best.0 : nil
    }

    private static func fold(_ word: String) -> [Character] {
        Array(word.lowercased().filter { $0 != "_" && $0 != "-" })
    }

    /// Levenshtein distance.
    private static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var row = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = row
        }
        return previous[b.count]
    }
}

/// Recognises keys that hold a secret and says where the secret goes instead.
enum SecretHint {
    static func looksLikeSecret(_ key: String) -> Bool {
        let k = key.lowercased().replacingOccurrences(of: "-", with: "_")
        let words = ["api_key", "apikey", "token", "secret", "password", "account_id", "accountid", "credential"]
        return k == "key" || words.contains { k.contains($0) }
    }

    /// Never includes the value: only the key's name.
    static func error(at location: String, section: String, key: String, file: String) -> ConfigError {
        let path = section.isEmpty ? key : "\(section).\(key)"
        let places: String
        if let name = secretName(section: section, key: key) {
            places =
                "the environment variable \(name.environmentVariable), or a systemd credential "
                + "(LoadCredential=\(name.credentialName):/path/to/file in the unit)"
        } else {
            places =
                "environment variables (" + Secrets.Name.allCases.map(\.environmentVariable).joined(separator: ", ")
                + "), or systemd credentials with the same names in lower case (LoadCredential=)"
        }
        return ConfigError(
            .secretInFile,
            "\(location): \(path) looks like a secret. Secrets don't go in the configuration "
                + "file: remove it from there and put it in \(places).", file: file, key: path)
    }

    private static func secretName(section: String, key: String) -> Secrets.Name? {
        let text = (section + "_" + key).lowercased()
        if let exact = Secrets.Name(rawValue: key.lowercased()) { return exact }
        // A provider's section (or a key naming it): the secrets its description lists.
        if let facts = ProviderKind.allCases.map(\.facts).first(where: { text.contains($0.section) }) {
            let names = facts.required + facts.optional
            // A key about an account is the account's ID, anything else the key or token.
            if let named = names.first(where: { text.contains("account") == $0.rawValue.contains("account") })
                ?? names.first
            {
                return named
            }
        }
        if text.contains("google") || section == "enrich" { return .googleBooksAPIKey }
        return nil
    }
}

/// One `[section]` of a file: reads its keys, each checked, with the key's current value as the default, and names
/// the section and the key in every error.
struct SectionReader {
    let reader: Reader
    let table: TOMLTable
    let name: String

    /// The raw value of `key`, nil when the section does not set it.
    subscript(key: String) -> (any TOMLValueConvertible)? { table[key] }

    /// The value of `key` as `read` takes it, `current` when the key is absent; a value `read` does not take is
    /// the wrong type, and the error shows `expected` and `example`.
    private func typed<T>(
        _ key: String, _ current: T, expected: String, example: String, _ read: (any TOMLValueConvertible) -> T?
    ) throws(ConfigError) -> T {
        guard let value = table[key] else { return current }
        guard let typed = read(value) else {
            throw reader.wrongType(name, key, value, expected: expected, example: example)
        }
        return typed
    }

    func int(_ key: String, _ current: Int, _ range: ClosedRange<Int>) throws(ConfigError) -> Int {
        let int = try typed(key, current, expected: "a whole number", example: "\(current)") { $0.int }
        guard range.contains(int) else {
            let allowed =
                range.upperBound == .max ? "\(range.lowerBound) or more" : "\(range.lowerBound)…\(range.upperBound)"
            throw reader.outOfRange(name, key, "\(int)", allowed: allowed)
        }
        return int
    }

    func bool(_ key: String, _ current: Bool) throws(ConfigError) -> Bool {
        try typed(key, current, expected: "true or false", example: "\(current)") { $0.bool }
    }

    /// A number from 0 to 1; `1` and `0` written as integers count too.
    func fraction(_ key: String, _ current: Double) throws(ConfigError) -> Double {
        let number = try typed(key, current, expected: "a number from 0 to 1", example: "\(current)") {
            $0.double ?? $0.int.map(Double.init)
        }
        guard (0...1).contains(number) else { throw reader.outOfRange(name, key, "\(number)", allowed: "0…1") }
        return number
    }

    func string(_ key: String, _ current: String) throws(ConfigError) -> String {
        try typed(key, current, expected: "a string in quotes", example: "\"\(current)\"") { $0.string }
    }

    /// `model`, which may not be empty.
    func model(_ current: String) throws(ConfigError) -> String {
        let model = try string("model", current)
        guard !model.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw invalid("model", "is empty. Name the model, for example model = \"\(current)\".")
        }
        return model
    }

    /// An http(s) URL without a trailing slash, so request paths can be appended to it.
    func url(_ key: String, _ current: String) throws(ConfigError) -> String {
        let string = try self.string(key, current)
        guard let url = URL(string: string), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            let host = url.host, !host.isEmpty
        else {
            throw invalid(key, "= \"\(string)\" is not an http(s) URL. For example \(key) = \"\(current)\".")
        }
        return string.withoutTrailingSlashes
    }

    func strings(_ key: String, _ current: [String]) throws(ConfigError) -> [String] {
        guard let value = table[key] else { return current }
        let example = "[" + (current.isEmpty ? "\"*.tmp\"" : current.map { "\"\($0)\"" }.joined(separator: ", ")) + "]"
        guard let array = value.array else {
            throw reader.wrongType(name, key, value, expected: "an array of strings", example: example)
        }
        var strings: [String] = []
        for element in array {
            guard let string = element.string else {
                throw reader.wrongType(name, key, element, expected: "an array of strings", example: example)
            }
            strings.append(string)
        }
        return strings
    }

    func choice<E: RawRepresentable & CaseIterable>(_ key: String, _ current: E) throws(ConfigError) -> E
    where E.RawValue == String {
        guard table[key] != nil else { return current }
        let names = E.allCases.map(\.rawValue).joined(separator: "|")
        let word = try typed(
            key, current.rawValue, expected: "one of \(names) in quotes", example: "\"\(current.rawValue)\""
        ) { $0.string }
        return try parseChoice(word, key)
    }

    func choices<E: RawRepresentable & CaseIterable>(_ key: String, _ current: [E]) throws(ConfigError) -> [E]
    where E.RawValue == String {
        var result: [E] = []
        for word in try strings(key, current.map(\.rawValue)) { result.append(try parseChoice(word, key)) }
        return result
    }

    private func parseChoice<E: RawRepresentable & CaseIterable>(_ word: String, _ key: String) throws(ConfigError) -> E
    where E.RawValue == String {
        if let choice = E.allCases.first(where: { $0.rawValue == word }) { return choice }
        let names = E.allCases.map(\.rawValue)
        let guess = Suggest.closest(word, names).map { " Did you mean \"\($0)\"?" } ?? ""
        throw invalid(key, "= \"\(word)\" is not allowed. Use one of: \(names.joined(separator: ", ")).\(guess)")
    }

    func invalid(_ key: String, _ problem: String) -> ConfigError { reader.invalid(name, key, problem) }
}
