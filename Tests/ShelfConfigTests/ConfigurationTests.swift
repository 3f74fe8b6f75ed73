import Foundation
@testable import ShelfConfig
import ShelfCore
import ShelfApp
import ShelfOCR
import Testing

/// A file that is never read from disk: `parse` only uses its name (for errors and relative paths).
let file = "/srv/shelf/shelfd.toml"
let home = ["HOME": "/home/reader"]

func parse(_ toml: String, environment: [String: String] = home) throws -> Configuration {
    try Configuration.parse(toml: toml, file: file, environment: environment)
}

/// The error `toml` is rejected with.
func rejection(_ toml: String, environment: [String: String] = home) throws -> ConfigError {
    try #require(throws: ConfigError.self) { try parse(toml, environment: environment) }
}

@Suite("Reading shelfd.toml")
struct ParsingTests {
    @Test("An empty file gives the built-in defaults")
    func emptyFileIsDefaults() throws {
        let config = try parse("")
        #expect(config == Configuration.defaults(home: "/home/reader"))
        #expect(config.paths.root == "/home/reader/Shelves")
        #expect(config.paths.state == "/home/reader/.local/state/shelfd")
        #expect(config.pipeline.provider == .auto)
        #expect(config.ocr.languages == ["eng"])
        #expect(config.pipeline.batchSize == 5)
        #expect(config.pipeline.reviewThreshold == 0.60)
        #expect(config.watch.rescanIntervalS == 3600)
        #expect(config.enrich.sources == [.catalogue, .openlibrary, .googlebooks])
        #expect(config.log.level == .info)
        #expect(config.export.exclusiveShelf == .toRead)
    }

    @Test("A section left out keeps its defaults while the others are read")
    func partialFile() throws {
        let config = try parse("[pipeline]\nconcurrency = 4\n")
        var expected = Configuration.defaults(home: "/home/reader")
        expected.pipeline.concurrency = 4
        #expect(config == expected)
    }

    @Test("Every key of every section is read")
    func everySectionIsRead() throws {
        let config = try parse(
            """
            [paths]
            root = "/data/books"
            state = "/var/lib/shelfd"

            [pipeline]
            provider = "hybrid"
            batch_size = 3
            concurrency = 8
            review_threshold = 0.75
            after = "move"
            max_attempts = 9

            [watch]
            mode = "poll"
            settle_ms = 500
            poll_interval_s = 5
            rescan_interval_s = 0
            ignore = ["*.tmp", "drafts/**"]

            [gemini]
            model = "gemini-3-pro"
            base_url = "http://127.0.0.1:8081"
            requests_per_minute = 60
            requests_per_day = 250
            timeout_s = 30

            [cloudflare]
            model = "@cf/meta/llama-4-scout-17b-16e-instruct"
            base_url = "http://127.0.0.1:8082"
            requests_per_minute = 100
            requests_per_day = 5000
            timeout_s = 20

            [openai]
            model = "llava"
            base_url = "http://10.0.0.2:8080/v1/"
            timeout_s = 600
            max_side = 2048
            jpeg_quality = 90

            [hybrid]
            fast = "openai"
            accurate = "cloudflare"
            escalate_below = 0.5

            [enrich]
            sources = ["openlibrary"]
            openlibrary_base_url = "http://127.0.0.1:8083"
            googlebooks_base_url = "http://127.0.0.1:8084"
            contact = "me@example.org"
            cache_days = 30

            [export]
            exclusive_shelf = "read"

            [log]
            level = "debug"
            """)
        #expect(config.paths == Configuration.Paths(root: "/data/books", state: "/var/lib/shelfd"))

        #expect(config.pipeline.provider == .hybrid)
        #expect(config.pipeline.batchSize == 3)
        #expect(config.pipeline.concurrency == 8)
        #expect(config.pipeline.reviewThreshold == 0.75)
        #expect(config.pipeline.after == .move)
        #expect(config.pipeline.maxAttempts == 9)

        #expect(config.watch.mode == .poll)
        #expect(config.watch.settleMs == 500)
        #expect(config.watch.pollIntervalS == 5)
        #expect(config.watch.rescanIntervalS == 0)
        #expect(config.watch.ignore == ["*.tmp", "drafts/**"])

        #expect(config.gemini.model == "gemini-3-pro")
        #expect(config.gemini.baseURL == "http://127.0.0.1:8081")
        #expect(config.gemini.requestsPerMinute == 60)
        #expect(config.gemini.requestsPerDay == 250)
        #expect(config.gemini.timeoutS == 30)

        #expect(config.cloudflare.model == "@cf/meta/llama-4-scout-17b-16e-instruct")
        #expect(config.cloudflare.baseURL == "http://127.0.0.1:8082")
        #expect(config.cloudflare.requestsPerMinute == 100)
        #expect(config.cloudflare.requestsPerDay == 5000)
        #expect(config.cloudflare.timeoutS == 20)

        #expect(config.openai.model == "llava")
        #expect(config.openai.baseURL == "http://10.0.0.2:8080/v1") // trailing slash dropped
        #expect(config.openai.timeoutS == 600)
        #expect(config.openai.maxSide == 2048)
        #expect(config.openai.jpegQuality == 90)

        #expect(config.hybrid.fast == .openai)
        #expect(config.hybrid.accurate == .cloudflare)
        #expect(config.hybrid.escalateBelow == 0.5)

        #expect(config.enrich.sources == [.openlibrary])
        #expect(config.enrich.openlibraryBaseURL == "http://127.0.0.1:8083")
        #expect(config.enrich.googlebooksBaseURL == "http://127.0.0.1:8084")
        #expect(config.enrich.contact == "me@example.org")
        #expect(config.enrich.cacheDays == 30)

        #expect(config.export.exclusiveShelf == .read)

        #expect(config.log.level == .debug)
    }

    @Test("Folders for the pipeline are derived from root and state")
    func derivedPaths() throws {
        let paths = try parse("[paths]\nroot = \"/data/books/\"\nstate = \"/var/lib/shelfd\"").paths
        #expect(paths.root == "/data/books")
        #expect(paths.incoming == "/data/books/incoming")
        #expect(paths.results == "/data/books/results")
        #expect(paths.review == "/data/books/review")
        #expect(paths.processed == "/data/books/processed")
        #expect(paths.exports == "/data/books/exports")
        #expect(paths.libraryFile == "/data/books/library.json")
        #expect(paths.database == "/var/lib/shelfd/shelfd.db")
        #expect(paths.responses == "/var/lib/shelfd/responses")
    }

    @Test("~ means $HOME and relative paths are relative to the configuration file")
    func pathExpansion() throws {
        let paths = try parse("[paths]\nroot = \"~\"\nstate = \"~/state/../.shelfd\"").paths
        #expect(paths.root == "/home/reader")
        #expect(paths.state == "/home/reader/.shelfd")

        let relative = try parse("[paths]\nroot = \"books\"\nstate = \"./state\"").paths
        #expect(relative.root == "/srv/shelf/books")
        #expect(relative.state == "/srv/shelf/state")
    }

    @Test("~ without $HOME says to set HOME or write the full path")
    func tildeWithoutHome() throws {
        let error = try rejection("", environment: [:])
        #expect(error.code == .noHome)
        #expect(error.message.contains("HOME"))
        #expect(try parse("[paths]\nroot = \"/a\"\nstate = \"/b\"", environment: [:]).paths.root == "/a")
    }

    @Test(
        "A state folder inside incoming/ is rejected",
        arguments: [
            "~/Shelves/incoming", "~/Shelves/incoming/.shelfd", "/home/reader/Shelves/./incoming/x/",
        ])
    func stateInsideIncoming(state: String) throws {
        let error = try rejection("[paths]\nstate = \"\(state)\"")
        #expect(error.code == .pathConflict)
        #expect(error.message.contains("paths.state"))
        #expect(error.message.contains("/home/reader/Shelves/incoming"))
    }

    @Test("A state folder beside incoming/, even under root, is fine")
    func stateBesideIncoming() throws {
        let config = try parse("[paths]\nstate = \"~/Shelves/.state\"")
        #expect(config.paths.database == "/home/reader/Shelves/.state/shelfd.db")
        #expect(
            try parse("[paths]\nstate = \"~/Shelves/incoming-state\"").paths.state
                == "/home/reader/Shelves/incoming-state")
    }
}

@Suite("Mistakes in shelfd.toml")
struct MistakeTests {
    @Test("An unknown key is named with its table, the file and the line, and the nearest key is suggested")
    func unknownKey() throws {
        let error = try rejection("[pipeline]\nprovider = \"gemini\"\nbatchsize = 3\n")
        #expect(error.code == .unknownKey)
        #expect(error.key == "pipeline.batchsize")
        #expect(error.file == file)
        #expect(error.message.contains("\(file):3"))
        #expect(error.message.contains("pipeline.batchsize"))
        #expect(error.message.contains("Did you mean pipeline.batch_size?"))
    }

    @Test("A misspelt section is suggested")
    func unknownSection() throws {
        let error = try rejection("[pipline]\nbatch_size = 3\n")
        #expect(error.code == .unknownKey)
        #expect(error.message.contains("\(file):1"))
        #expect(error.message.contains("pipline"))
        #expect(error.message.contains("[pipeline]"))
    }

    @Test("A key in the wrong section points to the right one")
    func keyInWrongSection() throws {
        let error = try rejection("[pipeline]\nsettle_ms = 100\n")
        #expect(error.message.contains("pipeline.settle_ms"))
        #expect(error.message.contains("watch.settle_ms"))

        let above = try rejection("provider = \"ocr\"\n")
        #expect(above.message.contains("pipeline.provider"))
    }

    @Test("A key with nothing close lists the keys of its section")
    func unknownKeyListsKeys() throws {
        let error = try rejection("[log]\ndestination = \"journal\"\n")
        #expect(error.message.contains("log.destination"))
        #expect(error.message.contains("The keys of [log] are: level."))
    }

    @Test("Of several mistakes, the first in the file is reported")
    func firstMistakeFirst() throws {
        let error = try rejection("[watch]\nzzz = 1\n[pipeline]\naaa = 2\n")
        #expect(error.key == "watch.zzz")
    }

    @Test("A value of the wrong type names the key, the type expected and the file")
    func wrongType() throws {
        let error = try rejection("[pipeline]\nbatch_size = \"5\"\n")
        #expect(error.code == .wrongType)
        #expect(error.key == "pipeline.batch_size")
        #expect(error.message.contains("\(file):2"))
        #expect(error.message.contains("whole number"))
        #expect(error.message.contains("batch_size = 5")) // what to write instead

        #expect(try rejection("[watch]\nignore = \"*.tmp\"").message.contains("array of strings"))
        #expect(try rejection("[watch]\nignore = [1]").code == .wrongType)
        #expect(try rejection("[paths]\nroot = 5").message.contains("string"))
        #expect(try rejection("pipeline = 5").message.contains("[pipeline]"))
        #expect(try rejection("[pipeline]\nreview_threshold = true").message.contains("number from 0 to 1"))
    }

    struct Limit: Sendable, CustomTestStringConvertible {
        let section: String, key: String, value: String, allowed: String
        var testDescription: String { "\(section).\(key) = \(value)" }
    }

    @Test(
        "A number outside its range names the key, the value and the range",
        arguments: [
            Limit(section: "pipeline", key: "batch_size", value: "0", allowed: "1…5"),
            Limit(section: "pipeline", key: "batch_size", value: "6", allowed: "1…5"),
            Limit(section: "pipeline", key: "concurrency", value: "0", allowed: "1…16"),
            Limit(section: "pipeline", key: "concurrency", value: "17", allowed: "1…16"),
            Limit(section: "pipeline", key: "review_threshold", value: "-0.1", allowed: "0…1"),
            Limit(section: "pipeline", key: "review_threshold", value: "1.5", allowed: "0…1"),
            Limit(section: "pipeline", key: "max_attempts", value: "0", allowed: "1 or more"),
            Limit(section: "watch", key: "settle_ms", value: "-1", allowed: "0 or more"),
            Limit(section: "watch", key: "poll_interval_s", value: "0", allowed: "1 or more"),
            Limit(section: "watch", key: "rescan_interval_s", value: "-5", allowed: "0 or more"),
            Limit(section: "gemini", key: "requests_per_minute", value: "0", allowed: "1 or more"),
            Limit(section: "gemini", key: "timeout_s", value: "0", allowed: "1 or more"),
            Limit(section: "gemini", key: "requests_per_day", value: "-1", allowed: "0 or more"),
            Limit(section: "cloudflare", key: "requests_per_day", value: "-3", allowed: "0 or more"),
            Limit(section: "cloudflare", key: "requests_per_minute", value: "-1", allowed: "1 or more"),
            Limit(section: "cloudflare", key: "timeout_s", value: "0", allowed: "1 or more"),
            Limit(section: "openai", key: "timeout_s", value: "0", allowed: "1 or more"),
            Limit(section: "openai", key: "max_side", value: "255", allowed: "256…8192"),
            Limit(section: "openai", key: "max_side", value: "8193", allowed: "256…8192"),
            Limit(section: "openai", key: "jpeg_quality", value: "49", allowed: "50…100"),
            Limit(section: "openai", key: "jpeg_quality", value: "101", allowed: "50…100"),
            Limit(section: "hybrid", key: "escalate_below", value: "2", allowed: "0…1"),
            Limit(section: "enrich", key: "cache_days", value: "-1", allowed: "0…3650"),
            Limit(section: "enrich", key: "cache_days", value: "3651", allowed: "0…3650"),
            Limit(section: "web", key: "cache_mb", value: "0", allowed: "1…100000"),
            Limit(section: "web", key: "cache_mb", value: "100001", allowed: "1…100000"),
        ])
    func outOfRange(limit: Limit) throws {
        let error = try rejection("[\(limit.section)]\n\(limit.key) = \(limit.value)\n")
        #expect(error.code == .outOfRange)
        #expect(error.key == "\(limit.section).\(limit.key)")
        #expect(error.message.contains("\(file):2"))
        #expect(error.message.contains("\(limit.section).\(limit.key) = \(limit.value)"))
        #expect(error.message.contains("allowed: \(limit.allowed)"))
    }

    @Test("The web page's picture cache is bounded at 200 MiB unless [web] cache_mb says otherwise")
    func webCacheBound() throws {
        #expect(try parse("").web.cacheMB == 200)
        #expect(try parse("[web]\ncache_mb = 50\n").web.cacheMB == 50)
    }

    @Test("The ends of each range are accepted")
    func rangeEnds() throws {
        let low = try parse(
            """
            [pipeline]
            batch_size = 1
            concurrency = 1
            review_threshold = 0
            max_attempts = 1
            [watch]
            settle_ms = 0
            poll_interval_s = 1
            rescan_interval_s = 0
            """)
        #expect(low.pipeline.batchSize == 1 && low.pipeline.reviewThreshold == 0 && low.watch.settleMs == 0)
        let high = try parse(
            "[pipeline]\nbatch_size = 5\nconcurrency = 16\nreview_threshold = 1\n[hybrid]\nescalate_below = 1.0")
        #expect(high.pipeline.concurrency == 16 && high.pipeline.reviewThreshold == 1 && high.hybrid.escalateBelow == 1)
    }

    @Test("The OpenAI-compatible image size and quality default to 1536 px and 85, and take their whole ranges")
    func openAIImageSettings() throws {
        let defaults = try parse("")
        #expect(defaults.openai.maxSide == 1536 && defaults.openai.jpegQuality == 85)
        let low = try parse("[openai]\nmax_side = 256\njpeg_quality = 50")
        #expect(low.openai.maxSide == 256 && low.openai.jpegQuality == 50)
        let high = try parse("[openai]\nmax_side = 8192\njpeg_quality = 100")
        #expect(high.openai.maxSide == 8192 && high.openai.jpegQuality == 100)
        #expect(try rejection("[openai]\njpeg_quality = 0.85").message.contains("whole number"))
        #expect(try rejection("[openai]\nmax_side = \"1536\"").key == "openai.max_side")
    }

    @Test("A word that is not allowed lists the allowed ones")
    func badChoice() throws {
        let error = try rejection("[pipeline]\nprovider = \"gemni\"\n")
        #expect(error.code == .invalidValue)
        #expect(error.key == "pipeline.provider")
        #expect(error.message.contains("gemini, cloudflare, openai, hybrid, ocr"))
        #expect(error.message.contains("Did you mean \"gemini\"?"))

        #expect(try rejection("[pipeline]\nafter = \"delete\"").message.contains("keep, move"))
        #expect(try rejection("[watch]\nmode = \"fanotify\"").message.contains("auto, inotify, poll"))
        #expect(
            try rejection("[log]\nlevel = \"verbose\"").message.contains("trace, debug, info, notice, warning, error"))
        #expect(
            try rejection("[enrich]\nsources = [\"amazon\"]").message.contains("catalogue, openlibrary, googlebooks"))
        #expect(
            try rejection("[export]\nexclusive_shelf = \"owned\"").message.contains("to-read, currently-reading, read"))
        let hybrid = try rejection("[hybrid]\nfast = \"hybrid\"")
        #expect(hybrid.message.contains("gemini, cloudflare, openai, ocr"))
    }

    @Test("A base URL must be http(s) and a model must be named")
    func badURLAndModel() throws {
        let url = try rejection("[gemini]\nbase_url = \"generativelanguage.googleapis.com\"")
        #expect(url.code == .invalidValue)
        #expect(url.message.contains("gemini.base_url"))
        #expect(try rejection("[enrich]\nopenlibrary_base_url = \"ftp://x\"").key == "enrich.openlibrary_base_url")
        #expect(try rejection("[openai]\nmodel = \"\"").key == "openai.model")
    }

    @Test("A TOML syntax error shows the file, line and column")
    func syntaxError() throws {
        let error = try rejection("[pipeline]\nbatch_size = = 5\n")
        #expect(error.code == .syntax)
        #expect(error.message.hasPrefix("\(file):2:"))
        #expect(error.message.contains("not valid TOML"))
    }
}

@Suite("The annotated example, etc/shelfd.toml")
struct ExampleFileTests {
    static let path = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("etc/shelfd.toml").path

    @Test("It equals the built-in defaults")
    func exampleIsDefaults() throws {
        let config = try Configuration.parseFile(Self.path, environment: home)
        #expect(config == Configuration.defaults(home: "/home/reader"))
    }

    @Test("It shows every key")
    func exampleHasEveryKey() throws {
        let lines = try String(contentsOfFile: Self.path, encoding: .utf8).split(separator: "\n").map(String.init)
        for (section, keys) in Configuration.schema {
            let start = try #require(lines.firstIndex(of: "[\(section)]"), "[\(section)] is missing")
            let body = lines[(start + 1)...].prefix { !$0.hasPrefix("[") }
            for key in keys {
                #expect(
                    body.contains { $0.hasPrefix("\(key) = ") && $0.contains("#") },
                    "\(section).\(key) is missing or has no comment")
            }
        }
    }
}

@Suite("[ocr] languages")
struct OCRLanguageTests {
    @Test("Languages are read as Tesseract names")
    func languagesAreRead() throws {
        let config = try Configuration.parse(
            toml: "[ocr]\nlanguages = [\"eng\", \"spa\", \"chi_sim\"]\n", file: "/etc/shelfd/shelfd.toml",
            environment: ["HOME": "/home/reader"])
        #expect(config.ocr.languages == ["eng", "spa", "chi_sim"])
    }

    @Test(
        "A language that is not a Tesseract name, or none at all, is refused",
        arguments: ["[]", "[\"../eng\"]", "[\"\"]"])
    func badLanguagesAreRefused(_ value: String) {
        #expect(throws: ConfigError.self) {
            try Configuration.parse(
                toml: "[ocr]\nlanguages = \(value)\n", file: "/etc/shelfd/shelfd.toml",
                environment: ["HOME": "/home/reader"])
        }
    }

    @Test("auto is no hybrid half")
    func autoIsNoHybridHalf() {
        #expect(throws: ConfigError.self) {
            try Configuration.parse(
                toml: "[hybrid]\nfast = \"auto\"\n", file: "/etc/shelfd/shelfd.toml",
                environment: ["HOME": "/home/reader"])
        }
    }
}

@Suite("[ocr] engine and PP-OCR's files")
struct OCREngineTests {
    func parse(_ toml: String) throws -> Configuration {
        try Configuration.parse(toml: toml, file: "/etc/shelfd/shelfd.toml", environment: ["HOME": "/home/reader"])
    }

    @Test(
        "engine, models_dir and library are read; the settings take the engine, the files and the pipeline's concurrency"
    )
    func engineIsRead() throws {
        let config = try parse(
            "[pipeline]\nconcurrency = 3\n[ocr]\nengine = \"ppocr\"\nmodels_dir = \"/srv/ocr\"\nlibrary = \"/opt/ort/libonnxruntime.so\"\n"
        )
        #expect(
            config.ocr.engine == "ppocr" && config.ocr.modelsDir == "/srv/ocr"
                && config.ocr.library == "/opt/ort/libonnxruntime.so")
        #expect(
            config.ocrSettings.engine
                == .ppocr(PPOCRFiles(library: "/opt/ort/libonnxruntime.so", modelsFolder: "/srv/ocr")))
        #expect(config.ocrSettings.threads == 3)
        #expect(try parse("[ocr]\nengine = \"tesseract\"\n").ocrSettings.engine == .tesseract)
    }

    @Test("Without engine, PP-OCR is used when its files are there, else Tesseract")
    func engineDefault() throws {
        let absent = try parse("[ocr]\nmodels_dir = \"/nonexistent\"\nlibrary = \"/nonexistent/lib.so\"\n")
        #expect(absent.ocr.engine == nil && absent.ocrSettings.engine == .tesseract)
        let installed = PPOCRFiles.locate()
        #expect(
            OCRSettings.defaultEngine(files: installed) == (installed.missing() == nil ? .ppocr(installed) : .tesseract)
        )
    }

    @Test(
        "An unknown engine or a relative path is refused, naming the key",
        arguments: [
            "engine = \"paddle\"", "models_dir = \"models\"", "library = \"lib/libonnxruntime.so\"",
        ])
    func badValuesAreRefused(_ line: String) {
        let error = #expect(throws: ConfigError.self) { try parse("[ocr]\n\(line)\n") }
        #expect(
            error.map { "\($0)" }?.contains(String(line.prefix { $0 != " " })) == true, "\(String(describing: error))")
    }
}
