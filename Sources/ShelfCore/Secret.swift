/// An API key or token: interpolated, printed or dumped, it shows "<redacted>".
package struct Secret: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    package let value: String
    package init(_ value: String) { self.value = value }
    package var description: String { "<redacted>" }
    package var customMirror: Mirror { Mirror(self, children: []) }
}
