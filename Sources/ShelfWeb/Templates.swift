import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// The page templates (Resources/*.mustache, compiled into the binary). Every page extends `layout`, which
/// holds the navigation, the stylesheet and the script; `{{value}}` escapes HTML, so a title read off a
/// spine is shown as the characters it has.
package struct Templates: Sendable {
    private let library: MustacheLibrary

    package init() throws {
        var library = MustacheLibrary()
        for (name, bytes) in Self.embedded {
            try library.register(String(decoding: bytes, as: UTF8.self), named: name)
        }
        self.library = library
    }

    /// The templates by name (the file's name without `.mustache`).
    private static let embedded: [(String, [UInt8])] = [
        ("layout", PackageResources.layout_mustache),
        ("overview", PackageResources.overview_mustache),
        ("review", PackageResources.review_mustache), ("photo-review", PackageResources.photo_review_mustache),
        ("photos", PackageResources.photos_mustache),
        ("photo", PackageResources.photo_mustache),
        ("login", PackageResources.login_mustache),
        ("library", PackageResources.library_mustache), ("work", PackageResources.work_mustache),
        ("upload", PackageResources.upload_mustache),
        ("shelves", PackageResources.shelves_mustache), ("shelf", PackageResources.shelf_mustache),
    ]

    /// `data` is any value: structs are read through their stored properties, arrays become sections.
    package func render(_ name: String, _ data: Any) -> String {
        guard let html = library.render(data, withTemplate: name) else {
            preconditionFailure("No template \(name): add Resources/\(name).mustache to Templates.embedded")
        }
        return html
    }

    /// A whole page, with the layout's fields (`title`, `csrf`, `loggedIn`) beside the page's own under `page`.
    package func page(
        _ name: String, title: String, _ data: Any, context: WebContext,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        let html = render(
            name, PageFrame(title: title, csrf: context.csrfToken, loggedIn: context.loggedIn, page: data))
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    private struct PageFrame {
        let title, csrf: String
        /// Logged in with the token or a link: the bar offers "Log out".
        let loggedIn: Bool
        let page: Any
    }
}
