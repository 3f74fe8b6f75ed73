/// A problem that stops a command before it does anything, with what to do about it.
package struct StartupError: Error, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
