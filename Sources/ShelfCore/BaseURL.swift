extension String {
    /// A base URL without its trailing slashes, so that a request's path can be appended to it.
    package var withoutTrailingSlashes: String {
        var base = self
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }
}
