import Foundation
import ShelfConfig
import ShelfCore
import Testing

/// Runs `body` with a fresh folder, removed afterwards.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("shelfd-config-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

func write(_ text: String, to path: String) throws {
    try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent,
        withIntermediateDirectories: true)
    try text.write(toFile: path, atomically: true, encoding: .utf8)
}

@Suite("Finding shelfd.toml")
struct LookupTests {
    @Test("--config beats $SHELFD_CONFIG, which beats $XDG_CONFIG_HOME, which beats the system file")
    func lookupOrder() throws {
        try withTemporaryDirectory { dir in
            let explicit = "\(dir)/explicit.toml", named = "\(dir)/named.toml"
            let xdg = "\(dir)/xdg/shelfd/shelfd.toml", system = "\(dir)/etc/shelfd/shelfd.toml"
            for (path, size) in [(explicit, 1), (named, 2), (xdg, 3), (system, 4)] {
                try write("[pipeline]\nbatch_size = \(size)\n", to: path)
            }
            var environment = ["HOME": "\(dir)/home", "SHELFD_CONFIG": named, "XDG_CONFIG_HOME": "\(dir)/xdg"]
            func load(_ explicitPath: String?) throws -> (Int, String?) {
                let (config, source) = try Configuration.load(
                    explicitPath: explicitPath, environment: environment,
                    systemPath: system)
                return (config.pipeline.batchSize, source)
            }

            #expect(try load(explicit) == (1, explicit))
            #expect(try load(nil) == (2, named))
            environment["SHELFD_CONFIG"] = nil
            #expect(try load(nil) == (3, xdg))
            try FileManager.default.removeItem(atPath: xdg)
            #expect(try load(nil) == (4, system))
            try FileManager.default.removeItem(atPath: system)
            let (config, source) = try Configuration.load(
                explicitPath: nil, environment: environment, systemPath: system)
            #expect(source == nil)
            #expect(config == Configuration.defaults(home: "\(dir)/home"))
        }
    }

    @Test("Without $XDG_CONFIG_HOME the user file is ~/.config/shelfd/shelfd.toml")
    func xdgDefaultsToDotConfig() throws {
        try withTemporaryDirectory { dir in
            let user = "\(dir)/.config/shelfd/shelfd.toml"
            try write("[log]\nlevel = \"trace\"\n", to: user)
            let (config, source) = try Configuration.load(
                explicitPath: nil, environment: ["HOME": dir],
                systemPath: "\(dir)/none.toml")
            #expect(source == user)
            #expect(config.log.level == .trace)
        }
    }

    @Test("Relative paths in a file are relative to the file's folder")
    func pathsRelativeToFile() throws {
        try withTemporaryDirectory { dir in
            try write("[paths]\nroot = \"books\"\nstate = \"../state\"\n", to: "\(dir)/conf/shelfd.toml")
            let (config, _) = try Configuration.load(
                explicitPath: "\(dir)/conf/shelfd.toml", environment: ["HOME": dir])
            #expect(config.paths.root == "\(dir)/conf/books")
            #expect(config.paths.state == "\(dir)/state")
        }
    }

    @Test("A missing --config file is an error naming it, not a fall-back")
    func missingExplicitFile() throws {
        try withTemporaryDirectory { dir in
            try write("", to: "\(dir)/etc/shelfd.toml")
            let error = try #require(throws: ConfigError.self) {
                try Configuration.load(
                    explicitPath: "\(dir)/typo.toml", environment: ["HOME": dir],
                    systemPath: "\(dir)/etc/shelfd.toml")
            }
            #expect(error.code == .notFound)
            #expect(error.message.contains("\(dir)/typo.toml"))
            #expect(error.message.contains("--config"))
        }
    }

    @Test("A missing $SHELFD_CONFIG file is an error naming it")
    func missingNamedFile() throws {
        try withTemporaryDirectory { dir in
            let error = try #require(throws: ConfigError.self) {
                try Configuration.load(
                    explicitPath: nil, environment: ["HOME": dir, "SHELFD_CONFIG": "\(dir)/gone.toml"],
                    systemPath: "\(dir)/none.toml")
            }
            #expect(error.code == .notFound)
            #expect(error.message.contains("\(dir)/gone.toml"))
            #expect(error.message.contains("SHELFD_CONFIG"))
        }
    }

    @Test("Errors in a found file name that file")
    func errorsNameTheFoundFile() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/.config/shelfd/shelfd.toml"
            try write("[watch]\nmode = \"fast\"\n", to: path)
            let error = try #require(throws: ConfigError.self) {
                try Configuration.load(explicitPath: nil, environment: ["HOME": dir], systemPath: "\(dir)/none.toml")
            }
            #expect(error.message.hasPrefix("\(path):2:"))
        }
    }

    @Test("A folder given as --config says to pass the file")
    func folderAsConfig() throws {
        try withTemporaryDirectory { dir in
            let error = try #require(throws: ConfigError.self) {
                try Configuration.load(explicitPath: dir, environment: ["HOME": dir])
            }
            #expect(error.code == .unreadable)
            #expect(error.message.contains("folder"))
        }
    }
}

@Suite("Secrets")
struct SecretsTests {
    @Test("A systemd credential wins over the environment, and a trailing newline is dropped")
    func credentialBeatsEnvironment() throws {
        try withTemporaryDirectory { dir in
            try write("from-credential\n", to: "\(dir)/gemini_api_key")
            try write("TOKEN-UPPER\r\n", to: "\(dir)/CLOUDFLARE_API_TOKEN") // the upper-case name works too
            let secrets = Secrets.load(environment: [
                "CREDENTIALS_DIRECTORY": dir,
                "GEMINI_API_KEY": "from-environment",
                "OPENAI_API_KEY": "sk-local",
            ])
            #expect(secrets[.geminiAPIKey]?.value == "from-credential")
            #expect(secrets[.cloudflareAPIToken]?.value == "TOKEN-UPPER")
            #expect(secrets[.openAIAPIKey]?.value == "sk-local")
            #expect(secrets[.cloudflareAccountID] == nil)
            #expect(secrets.googleBooksAPIKey == nil)
            #expect(
                secrets.origins == [
                    .geminiAPIKey: .credential, .cloudflareAPIToken: .credential,
                    .openAIAPIKey: .environment,
                ])
        }
    }

    @Test("Without a credentials directory, or with an empty credential, the environment is used")
    func environmentFallback() throws {
        try withTemporaryDirectory { dir in
            try write("\n", to: "\(dir)/google_books_api_key")
            let secrets = Secrets.load(environment: [
                "CREDENTIALS_DIRECTORY": dir, "GOOGLE_BOOKS_API_KEY": "gb", "CLOUDFLARE_ACCOUNT_ID": "acct",
                "GEMINI_API_KEY": "",
            ])
            #expect(secrets.googleBooksAPIKey?.value == "gb")
            #expect(secrets[.cloudflareAccountID]?.value == "acct")
            #expect(secrets[.geminiAPIKey] == nil) // empty counts as unset
            #expect(secrets.origins[.googleBooksAPIKey] == .environment)
        }
        #expect(Secrets.load(environment: ["GEMINI_API_KEY": "g"])[.geminiAPIKey]?.value == "g")
    }

    @Test("A secret is never shown by printing or dumping it")
    func secretIsRedacted() {
        let value = "AIzaSy-do-not-print"
        let secret = Secret(value)
        let secrets = Secrets.load(environment: ["GEMINI_API_KEY": value])
        var dumped = ""
        dump(secret, to: &dumped)
        dump(secrets, to: &dumped)
        for shown in [
            String(describing: secret), "\(secret)", String(reflecting: secret), dumped,
            String(describing: secrets), String(reflecting: secrets),
        ] {
            #expect(!shown.contains(value))
        }
        #expect("\(secret)" == "<redacted>")
    }

    @Test(
        "A secret in the file is refused without repeating it, and says where it goes",
        arguments: [
            ("[gemini]\napi_key = \"AIzaSy-do-not-print\"\n", "gemini.api_key", "GEMINI_API_KEY"),
            ("gemini_api_key = \"AIzaSy-do-not-print\"\n", "gemini_api_key", "GEMINI_API_KEY"),
            ("[cloudflare]\naccount_id = \"AIzaSy-do-not-print\"\n", "cloudflare.account_id", "CLOUDFLARE_ACCOUNT_ID"),
            ("[cloudflare]\ntoken = \"AIzaSy-do-not-print\"\n", "cloudflare.token", "CLOUDFLARE_API_TOKEN"),
            ("[openai]\nkey = \"AIzaSy-do-not-print\"\n", "openai.key", "OPENAI_API_KEY"),
            (
                "[enrich]\ngooglebooks_api_key = \"AIzaSy-do-not-print\"\n", "enrich.googlebooks_api_key",
                "GOOGLE_BOOKS_API_KEY"
            ),
            ("[secrets]\ngemini = \"AIzaSy-do-not-print\"\n", "secrets", "GEMINI_API_KEY"),
        ])
    func secretInFile(toml: String, key: String, variable: String) throws {
        let error = try rejection(toml)
        #expect(error.code == .secretInFile)
        #expect(error.key == key)
        #expect(error.message.contains(key))
        #expect(error.message.contains(variable))
        #expect(error.message.contains("LoadCredential="))
        #expect(!error.message.contains("AIzaSy-do-not-print"))
        #expect(!String(describing: error).contains("AIzaSy-do-not-print"))
    }
}
