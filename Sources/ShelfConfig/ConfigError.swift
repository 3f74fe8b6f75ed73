/// Why the configuration could not be used. `code` is stable (for tests and `shelfd doctor`);
/// `message` is for a person: where the problem is (file, line, key) and what to write instead.
/// No message ever contains the value of a secret.
package struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Code: String, Sendable {
        case notFound = "config_not_found" // --config or $SHELFD_CONFIG names a missing file
        case unreadable = "config_unreadable"
        case syntax = "config_syntax" // not valid TOML
        case unknownKey = "config_unknown_key"
        case secretInFile = "config_secret_in_file"
        case wrongType = "config_wrong_type"
        case outOfRange = "config_out_of_range"
        case invalidValue = "config_invalid_value" // not one of the allowed words, not a URL, empty
        case pathConflict = "config_path_conflict" // state inside incoming/
        case noHome = "config_no_home" // `~` used but $HOME is not set
    }

    package var code: Code
    package var message: String
    /// The configuration file, when there is one.
    package var file: String?
    /// The dotted key (`pipeline.batch_size`) the error is about, when there is one.
    package var key: String?

    package init(_ code: Code, _ message: String, file: String? = nil, key: String? = nil) {
        self.code = code; self.message = message; self.file = file; self.key = key
    }

    /// The message alone: it already names the file and the key, and the CLI prints it as is.
    package var description: String { message }
}
