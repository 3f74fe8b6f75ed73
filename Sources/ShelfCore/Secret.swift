/// An API key or token: interpolated, printed or dumped, it shows "<redacted>".
package struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Read only where the credential is put on the wire.
    package let value: String

    package init(_ value: String) { self.value = value }

    package var description: String { "<redacted>" }
    package var debugDescription: String { "<redacted>" }
    package var customMirror: Mirror { Mirror(self, children: []) } // without it, dump() shows `value`
}
