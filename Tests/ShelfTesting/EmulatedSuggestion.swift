/// Advice an emulated model gives the photographer, as every provider is asked for it.
package struct EmulatedSuggestion: Sendable {
    package var type: String, severity: String, message: String
    package init(type: String, severity: String, message: String) {
        self.type = type; self.severity = severity; self.message = message
    }
}
