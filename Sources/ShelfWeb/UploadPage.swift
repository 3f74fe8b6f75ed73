import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ShelfConfig
import ShelfCore

/// `/upload`: photos from a browser or a phone. Each file arrives as the raw body of one POST (the script) or a
/// part of a form (without it) and is written as it arrives (`IncomingPhoto`): to a hidden name the watcher
/// ignores, stopped as soon as it passes `[web] max_upload_mb`, checked to be a JPEG or HEIC by its first
/// bytes, and renamed to a free name: the watcher then takes it like any synced file. Nothing is left behind
/// when it is refused.
enum UploadPage {
    static func register(on router: RouterGroup<WebContext>, site: WebSite) {
        router.get("upload") { _, context in
            site.templates.page("upload", title: "Add photos", UploadView(site), context: context)
        }
        router.post("upload") { request, context in
            let incoming = URL(fileURLWithPath: site.config.paths.incoming)
            let limit = site.config.web.maxUploadMB
            if let type = request.headers[.contentType], type.lowercased().hasPrefix("multipart/form-data") {
                return try await receiveForm(request, type: type, into: incoming, site: site, context: context)
            }
            do {
                let placed = try await receive(request, into: incoming, limitMB: limit)
                return json(.created, ["path": placed, "message": "Added as \(placed); it is read shortly."])
            } catch let error as UploadError {
                site.logger.notice(
                    "Upload refused", metadata: ["event": "upload_refused", "error": "\(error.message)"])
                return json(error.status, ["error": error.message])
            }
        }
    }

    /// A refused upload: the status and what to tell the person.
    struct UploadError: Error {
        var status: HTTPResponse.Status
        var message: String

        static func tooLarge(bytes: Int?, limitMB: Int) -> UploadError {
            let size = bytes.map { "This photo is \(megabytes($0)) MB" } ?? "This photo is more than \(limitMB) MB"
            return UploadError(
                status: .contentTooLarge, message: "\(size); the limit is \(limitMB) MB ([web] max_upload_mb).")
        }

        static func megabytes(_ bytes: Int) -> String {
            let value = Double(bytes) / 1_048_576
            return value >= 10 ? String(Int(value.rounded())) : String(format: "%.1f", value)
        }
    }

    /// Receives one photo; returns where it landed, relative to incoming/.
    static func receive(_ request: Request, into incoming: URL, limitMB: Int) async throws(UploadError) -> String {
        let query = LibraryPages.Fields(request.uri.query ?? "")
        let shelf = (query["shelf"] ?? "").trimmingCharacters(in: .whitespaces)
        if let problem = shelfProblem(shelf) { throw UploadError(status: .badRequest, message: problem) }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limitMB * 1_048_576 {
            throw .tooLarge(bytes: length, limitMB: limitMB) // refused before a byte is written
        }
        let photo = try IncomingPhoto(shelf: shelf, name: query["name"] ?? "", into: incoming, limitMB: limitMB)
        do {
            for try await buffer in request.body { try await photo.append(buffer) }
            return try await photo.finish()
        } catch let error as UploadError {
            photo.discard()
            throw error
        } catch {
            photo.discard()
            throw UploadError(
                status: .badRequest, message: "The upload broke off before the whole photo arrived; send it again.")
        }
    }

    /// The page's form without its script (multipart/form-data), read as it arrives: its first field is the CSRF
    /// token (the pages' access checked it), `shelf` comes before the photos (the template's order), and each photo is
    /// written to its temporary file as its bytes come, checked and placed as a script's upload is. The page
    /// again with what became of each.
    static func receiveForm(
        _ request: Request, type: String, into incoming: URL, site: WebSite,
        context: WebContext
    ) async throws -> Response {
        let limitMB = site.config.web.maxUploadMB
        guard let boundary = MultipartStream.boundary(of: type) else {
            return json(.badRequest, ["error": "The form has no boundary: send it again from the page."])
        }
        var reader = MultipartStream(boundary: boundary)
        var shelf = ""
        var field: (name: String, value: [UInt8])?
        /// The photo being received, its name, and why it was refused (the rest of its bytes are then skipped).
        var current: (name: String, photo: IncomingPhoto?, refusal: UploadError?)?
        var results: [UploadView.Result] = []
        func refused(_ name: String, _ error: UploadError) {
            site.logger.notice("Upload refused", metadata: ["event": "upload_refused", "error": "\(error.message)"])
            results.append(.init(name: name, message: error.message, ok: false))
        }
        do {
            for try await chunk in request.body {
                for event in try reader.feed(chunk.readableBytesView) {
                    switch event {
                    case .part(_, let filename?) where !filename.isEmpty:
                        do {
                            current = (
                                filename,
                                try IncomingPhoto(shelf: shelf, name: filename, into: incoming, limitMB: limitMB), nil
                            )
                        } catch {
                            current = (filename, nil, error)
                        }
                    case .part(let name, let filename):
                        field = filename == nil ? (name, []) : nil // a file input left empty: skipped
                    case .bytes(let bytes):
                        if let photo = current?.photo {
                            do { try await photo.append(ByteBuffer(bytes: bytes)) } catch {
                                photo.discard()
                                current?.photo = nil
                                current?.refusal = error
                            }
                        } else if field != nil, field!.value.count < 1024 {
                            field!.value += bytes
                        }
                    case .partEnd:
                        if let (name, photo, refusal) = current {
                            if let photo {
                                do {
                                    let placed = try await photo.finish()
                                    results.append(
                                        .init(name: name, message: "Added as \(placed); it is read shortly.", ok: true))
                                } catch {
                                    photo.discard()
                                    refused(name, error)
                                }
                            } else if let refusal {
                                refused(name, refusal)
                            }
                        } else if let field, field.name == "shelf" {
                            shelf = String(decoding: field.value, as: UTF8.self).trimmingCharacters(in: .whitespaces)
                        }
                        current = nil
                        field = nil
                    }
                }
            }
            guard reader.isComplete else { throw MultipartStream.Malformed() }
        } catch {
            current?.photo?.discard()
            if let name = current?.name {
                results.append(
                    .init(
                        name: name, message: "The upload broke off before the whole photo arrived; send it again.",
                        ok: false))
            } else if results.isEmpty {
                return json(.badRequest, ["error": "The form broke off or is not a form; send it again from the page."])
            }
        }
        if results.isEmpty { results.append(.init(name: "", message: "No photo was chosen.", ok: false)) }
        var view = UploadView(site)
        view.results = results
        return site.templates.page(
            "upload", title: "Add photos", view, context: context,
            status: results.allSatisfy(\.ok) ? .ok : .unprocessableContent)
    }

    /// Why this shelf name is refused, or nil: one folder under incoming/, in letters, digits, space, `-` and `_`.
    static func shelfProblem(_ shelf: String) -> String? {
        guard !shelf.isEmpty else { return nil }
        let allowed = shelf.allSatisfy { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" || $0 == "_" }
        guard allowed, shelf.count <= 64 else {
            return
                "The shelf “\(shelf)” cannot be a folder name: use letters, digits, spaces, - and _ (at most 64), one folder, no slashes."
        }
        return nil
    }

    /// The file name given by the browser, made safe: its last component, in letters, digits, `-` and `_`, and
    /// its extension (lowercased), which is kept when it fits the content.
    static func safeName(_ given: String) -> (base: String, extension: String?) {
        let last = given.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var base = Substring(last), ext: String?
        if let dot = last.lastIndex(of: "."), dot != last.startIndex {
            base = last[..<dot]
            ext = last[last.index(after: dot)...].lowercased()
        }
        let cleaned = String(
            base.map { $0.isASCII && ($0.isLetter || $0.isNumber) || $0 == "-" || $0 == "_" ? $0 : "_" }
        )
        .trimmingCharacters(in: CharacterSet(charactersIn: "_-"))
        return (cleaned.isEmpty ? "upload" : String(cleaned.prefix(80)), ext)
    }

    /// Hidden (leading dot) and not an image extension: the watcher never takes it (IgnoreRules).
    static func temporaryName(_ base: String) -> String {
        let random = (0..<8).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
        return "\(TemporaryFile.prefix)\(base).upload-\(random)"
    }

    private static func json(_ status: HTTPResponse.Status, _ fields: [String: String]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        let data =
            (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    struct UploadView {
        let limitMB: Int
        let shelves: [String]
        /// What became of each photo of a form sent without the script.
        var results: [Result] = []

        struct Result {
            let name, message: String
            let ok: Bool
            var state: String { ok ? "done" : "failed" }
        }

        init(_ site: WebSite) {
            limitMB = site.config.web.maxUploadMB
            let names = (try? FileManager.default.contentsOfDirectory(atPath: site.config.paths.incoming)) ?? []
            shelves = names.filter { name in
                var isFolder: ObjCBool = false
                return UploadPage.shelfProblem(name) == nil && !name.hasPrefix(".")
                    && FileManager.default.fileExists(
                        atPath: site.config.paths.incoming + "/" + name, isDirectory: &isFolder)
                    && isFolder.boolValue
            }.sorted()
        }
    }
}
