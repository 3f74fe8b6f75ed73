import HTTPTypes
import Hummingbird

/// The one stylesheet and the one script module, compiled into the binary and served with a long cache
/// lifetime under a name that carries shelfd's version (a new binary is a new URL).
enum StaticFiles {
    static func register(on router: RouterGroup<WebContext>) {
        router.get("static/shelfd.css") { _, _ in file(PackageResources.shelfd_css, type: "text/css; charset=utf-8") }
        router.get("static/shelfd.js") { _, _ in
            file(PackageResources.shelfd_js, type: "text/javascript; charset=utf-8")
        }
    }

    private static func file(_ bytes: [UInt8], type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
