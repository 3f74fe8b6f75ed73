import ShelfConfig
import ShelfCore
import Testing

@Suite("[store] url: SQLite by default, or a PostgreSQL server")
struct StoreURLTests {
    private func parse(_ url: String) throws(ConfigError) -> Configuration {
        try Configuration.parse(
            toml: "[store]\nurl = \"\(url)\"\n", file: "/etc/shelfd/shelfd.toml", environment: ["HOME": "/home/reader"])
    }

    @Test("No url: the queue stays in SQLite")
    func defaultIsSQLite() throws {
        let config = try Configuration.parse(
            toml: "", file: "/etc/shelfd/shelfd.toml", environment: ["HOME": "/home/reader"])
        #expect(config.store.url == "")
        #expect(config.store.postgres == nil)
    }

    @Test("A URL gives the server, port, user, database and TLS mode; the port and TLS have defaults")
    func parsesTheParts() throws {
        let full = try #require(
            try parse("postgresql://shelf@db.example.org:6543/books?sslmode=verify-full").store.postgres)
        #expect(full.host == "db.example.org" && full.port == 6543 && full.user == "shelf" && full.database == "books")
        #expect(full.sslMode == .verifyFull)
        let short = try #require(try parse("postgres://shelf@db/books").store.postgres)
        #expect(short.port == 5432 && short.sslMode == .prefer && short.password == nil)
    }

    @Test("The password comes from the secret store_password before the URL's own, and is never shown")
    func passwordNeverShown() throws {
        let url = try #require(try parse("postgresql://shelf:hunter2@db:5432/books").store.postgres)
        #expect(url.password(from: Secrets())?.value == "hunter2")
        #expect(
            url.password(from: Secrets.load(environment: ["STORE_PASSWORD": "from-secret"]))?.value == "from-secret")
        #expect(url.description == "postgresql://shelf@db:5432/books")
        #expect(!"\(url)".contains("hunter2") && !String(reflecting: url).contains("hunter2"))
    }

    @Test(
        "A URL shelfd cannot use is an error naming the key and what to write, without the password",
        arguments: [
            ("mysql://shelf:hunter2@db/books", "starts with postgresql://"),
            ("postgresql://db/books", "names no user"),
            ("postgresql://shelf:hunter2@db", "names no database"),
            ("postgresql://shelf:hunter2@db/books?pool=3", "unknown parameter pool"),
            (
                "postgresql://shelf@db/books?sslmode=maybe",
                "sslmode must be one of disable, prefer, require, verify-full"
            ),
        ])
    func badURLs(url: String, problem: String) throws {
        let error = try #require(throws: ConfigError.self) { try parse(url) }
        #expect(error.code == .invalidValue && error.key == "store.url")
        #expect(error.message.contains(problem), "\(error.message)")
        #expect(!error.message.contains("hunter2"))
    }

    @Test("writes_files: true or false says; unset or \"auto\" leaves it to the node's root; anything else is an error")
    func writesFiles() throws {
        func parse(_ body: String) throws(ConfigError) -> Configuration {
            try Configuration.parse(
                toml: "[store]\n\(body)\n", file: "/etc/shelfd/shelfd.toml", environment: ["HOME": "/home/reader"])
        }
        #expect(try parse("writes_files = false").store.writesFiles == false)
        #expect(try parse("writes_files = true").store.writesFiles == true)
        #expect(try parse("writes_files = \"auto\"").store.writesFiles == nil)
        #expect(try parse("").store.writesFiles == nil)
        let error = try #require(throws: ConfigError.self) { try parse("writes_files = \"yes\"") }
        #expect(error.key == "store.writes_files")
    }
}
