import Foundation
import HTTPTypes
import Logging
import Hummingbird
import NIOCore
import NIOPosix
import ShelfConfig
import ShelfImaging

/// `/upload`: photos from a browser or a phone. Each file arrives as the raw body of one POST, is written to
/// `incoming/<shelf>/.<name>.upload-<random>` (a hidden name the watcher ignores), stopped as soon as it passes
/// `[web] max_upload_mb`, checked to be a JPEG or HEIC by its first bytes, and renamed to a free name: the
/// watcher then takes it like any synced file. Nothing is left behind when it is refused.
enum UploadPage {
    static func register(on router: Router<WebContext>, site: WebSite) {
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
                site.logger.notice("Upload refused", metadata: ["event": "upload_refused", "error": "\(error.message)"])
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
            return UploadError(status: .contentTooLarge, message: "\(size); the limit is \(limitMB) MB ([web] max_upload_mb).")
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
        let limit = limitMB * 1_048_576
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw .tooLarge(bytes: length, limitMB: limitMB)               // refused before a byte is written
        }
        let (base, givenExtension) = safeName(query["name"] ?? "")
        let folder = shelf.isEmpty ? incoming : incoming.appendingPathComponent(shelf, isDirectory: true)
        let madeFolder = !FileManager.default.fileExists(atPath: folder.path)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw UploadError(status: .internalServerError, message: "Cannot make the folder \(shelf.isEmpty ? "incoming/" : "incoming/\(shelf)/"): \(error.localizedDescription).")
        }
        let temporary = folder.appendingPathComponent(temporaryName(base))
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw fileError(errno, "Cannot write into incoming/") }
        var closed = false
        func cleanUp() {
            if !closed { close(fd); closed = true }
            unlink(temporary.path)
            if madeFolder { rmdir(folder.path) }                            // only if still empty
        }
        do {
            var written = 0
            var head: [UInt8] = []
            var format: ImageFormat?
            for try await buffer in request.body {
                written += buffer.readableBytes
                if written > limit { throw UploadError.tooLarge(bytes: nil, limitMB: limitMB) }
                if head.count < 64 { head += buffer.getBytes(at: buffer.readerIndex, length: min(64 - head.count, buffer.readableBytes)) ?? [] }
                if format == nil, head.count >= 64 { format = try checked(head) }
                try await writeAll(buffer, to: fd)
            }
            guard written > 0 else { throw UploadError(status: .badRequest, message: "The file is empty.") }
            let kind = try format ?? checked(head)
            // On disk before it gets its real name: a crash never leaves a cut photo for the watcher (a full disk
            // may only show here).
            let synced: Int32 = try await NIOThreadPool.singleton.runIfActive { fsync(fd) == 0 ? 0 : errno }
            if synced != 0 { throw fileError(synced, "Cannot finish writing the photo") }
            guard close(fd) == 0 else { closed = true; throw fileError(errno, "Cannot finish writing the photo") }
            closed = true
            let name = try place(temporary, in: folder, base: base, extension: givenExtension, format: kind)
            return shelf.isEmpty ? name : "\(shelf)/\(name)"
        } catch let error as UploadError {
            cleanUp()
            throw error
        } catch {
            cleanUp()
            throw UploadError(status: .badRequest, message: "The upload broke off before the whole photo arrived; send it again.")
        }
    }

    /// The page's form without its script (multipart/form-data): each photo checked and placed as a script's
    /// upload is, and the page again with what became of each.
    static func receiveForm(_ request: Request, type: String, into incoming: URL, site: WebSite,
                            context: WebContext) async throws -> Response {
        let limitMB = site.config.web.maxUploadMB
        guard let boundary = FormFields.boundary(of: type) else {
            return json(.badRequest, ["error": "The form has no boundary: send it again from the page."])
        }
        // The door read the whole form already (the CSRF token may come after the photos), within its limit.
        let body = try await request.body.collect(upTo: max(1, limitMB) * 4 * 1_048_576 + 64 * 1024)
        let parts = multipartParts(Array(buffer: body), boundary: boundary)
        let shelf = parts.first { $0.name == "shelf" && $0.filename == nil }
            .map { String(decoding: $0.data, as: UTF8.self).trimmingCharacters(in: .whitespaces) } ?? ""
        var results: [UploadView.Result] = []
        for part in parts where part.filename.map({ !$0.isEmpty }) == true {
            let name = part.filename ?? ""
            do {
                let placed = try await save(part.data, shelf: shelf, name: name, into: incoming, limitMB: limitMB)
                results.append(.init(name: name, message: "Added as \(placed); it is read shortly.", ok: true))
            } catch {
                site.logger.notice("Upload refused", metadata: ["event": "upload_refused", "error": "\(error.message)"])
                results.append(.init(name: name, message: error.message, ok: false))
            }
        }
        if results.isEmpty { results.append(.init(name: "", message: "No photo was chosen.", ok: false)) }
        var view = UploadView(site)
        view.results = results
        return site.templates.page("upload", title: "Add photos", view, context: context,
                                   status: results.allSatisfy(\.ok) ? .ok : .unprocessableContent)
    }

    /// One photo already in memory (from the form): the same checks and the same way in as a streamed one.
    static func save(_ bytes: ArraySlice<UInt8>, shelf: String, name given: String, into incoming: URL,
                     limitMB: Int) async throws(UploadError) -> String {
        if let problem = shelfProblem(shelf) { throw UploadError(status: .badRequest, message: problem) }
        if bytes.count > limitMB * 1_048_576 { throw .tooLarge(bytes: bytes.count, limitMB: limitMB) }
        guard !bytes.isEmpty else { throw UploadError(status: .badRequest, message: "The file is empty.") }
        let format = try checked(Array(bytes.prefix(64)))
        let (base, givenExtension) = safeName(given)
        let folder = shelf.isEmpty ? incoming : incoming.appendingPathComponent(shelf, isDirectory: true)
        let madeFolder = !FileManager.default.fileExists(atPath: folder.path)
        do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
            throw UploadError(status: .internalServerError, message: "Cannot make the folder for the shelf: \(error.localizedDescription).")
        }
        let temporary = folder.appendingPathComponent(temporaryName(base))
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw fileError(errno, "Cannot write into incoming/") }
        do {
            try await writeAll(ByteBuffer(bytes: bytes), to: fd)
            let synced: Int32 = try await NIOThreadPool.singleton.runIfActive { fsync(fd) == 0 ? 0 : errno }
            if synced != 0 { throw fileError(synced, "Cannot finish writing the photo") }
            close(fd)
            let placed = try place(temporary, in: folder, base: base, extension: givenExtension, format: format)
            return shelf.isEmpty ? placed : "\(shelf)/\(placed)"
        } catch {
            close(fd)
            unlink(temporary.path)
            if madeFolder { rmdir(folder.path) }
            throw (error as? UploadError) ?? UploadError(status: .internalServerError, message: "Cannot write the photo: \(error).")
        }
    }

    /// The parts of a multipart/form-data body: each one's field name, file name (for a file) and bytes.
    static func multipartParts(_ body: [UInt8], boundary: String) -> [(name: String, filename: String?, data: ArraySlice<UInt8>)] {
        let delimiter = Array("\r\n--\(boundary)".utf8)
        var parts: [(name: String, filename: String?, data: ArraySlice<UInt8>)] = []
        // The first delimiter has no line break before it.
        guard var start = firstIndex(of: Array("--\(boundary)".utf8), in: body, from: 0).map({ $0 + boundary.utf8.count + 2 }) else { return [] }
        while start + 2 <= body.count, body[start] == 13, body[start + 1] == 10 {          // CRLF: another part follows
            guard let headersEnd = firstIndex(of: Array("\r\n\r\n".utf8), in: body, from: start + 2),
                  let end = firstIndex(of: delimiter, in: body, from: headersEnd + 4) else { break }
            let headers = String(decoding: body[(start + 2)..<headersEnd], as: UTF8.self)
            if let disposition = headers.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-disposition:") }) {
                parts.append((parameter("name", in: disposition) ?? "", parameter("filename", in: disposition),
                              body[(headersEnd + 4)..<end]))
            }
            start = end + delimiter.count
        }
        return parts
    }

    private static func parameter(_ name: String, in header: Substring) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].lowercased() == name {
                return String(pair[1]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, from <= haystack.count - needle.count else { return nil }
        var i = from
        let last = haystack.count - needle.count
        while i <= last {
            guard let found = haystack[i...last].firstIndex(of: needle[0]) else { return nil }
            if haystack[found..<(found + needle.count)].elementsEqual(needle) { return found }
            i = found + 1
        }
        return nil
    }

    /// Only JPEG and HEIC: what phones and cameras write, and what shelfd reads.
    private static func checked(_ head: [UInt8]) throws(UploadError) -> ImageFormat {
        let format = ImageFormat.sniff(head)
        guard format == .jpeg || format == .heic else {
            let what = format == .unknown ? "not a photo" : "a \(format.displayName) image"
            throw UploadError(status: .unsupportedMediaType,
                              message: "This file is \(what): shelfd takes JPEG or HEIC photos (as phones and cameras save them).")
        }
        return format
    }

    /// Writes a whole buffer on NIO's thread pool, so a slow disk never holds the server's threads.
    private static func writeAll(_ buffer: ByteBuffer, to fd: Int32) async throws {
        let failure: Int32 = try await NIOThreadPool.singleton.runIfActive {
            buffer.withUnsafeReadableBytes { bytes -> Int32 in
                var offset = 0
                while offset < bytes.count {
                    let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    offset += n
                }
                return 0
            }
        }
        if failure != 0 { throw fileError(failure, "Cannot write the photo") }
    }

    private static func fileError(_ code: Int32, _ what: String) -> UploadError {
        if code == ENOSPC || code == EDQUOT {
            return UploadError(status: .init(code: 507, reasonPhrase: "Insufficient Storage"),
                               message: "The disk holding incoming/ is full: nothing was kept. Free some space and send the photo again.")
        }
        return UploadError(status: .internalServerError, message: "\(what): \(String(cString: strerror(code))).")
    }

    /// Renames the finished upload to `<base>.<ext>`, or `<base>-2.<ext>`… when that is taken: never over a file.
    private static func place(_ temporary: URL, in folder: URL, base: String, extension given: String?,
                              format: ImageFormat) throws(UploadError) -> String {
        let ext = given.flatMap { given in
            (format == .jpeg ? ["jpg", "jpeg"] : ["heic", "heif"]).contains(given) ? given : nil
        } ?? (format == .jpeg ? "jpg" : "heic")
        for n in 1...1000 {
            let name = n == 1 ? "\(base).\(ext)" : "\(base)-\(n).\(ext)"
            let target = folder.appendingPathComponent(name).path
            if renameNoReplace(temporary.path, target) == 0 { return name }
            guard errno == EEXIST else { throw fileError(errno, "Cannot put the photo in place") }
        }
        throw UploadError(status: .conflict, message: "Too many photos are called \(base) on this shelf: rename the file and send it again.")
    }

    /// rename(2) that fails with EEXIST instead of replacing: `renameat2(RENAME_NOREPLACE)`, looked up at run time
    /// because Glibc's Swift module does not show it.
    private static func renameNoReplace(_ from: String, _ to: String) -> Int32 {
        typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") {   // RTLD_DEFAULT
            let renameat2 = unsafeBitCast(symbol, to: RenameAt2.self)
            let result = renameat2(AT_FDCWD, from, AT_FDCWD, to, 1)                       // RENAME_NOREPLACE
            if result == 0 || errno != EINVAL && errno != ENOSYS { return result }      // else: the file system cannot
        }
        if access(to, F_OK) == 0 { errno = EEXIST; return -1 }
        return rename(from, to)
    }

    /// Why this shelf name is refused, or nil: one folder under incoming/, in letters, digits, space, `-` and `_`.
    static func shelfProblem(_ shelf: String) -> String? {
        guard !shelf.isEmpty else { return nil }
        let allowed = shelf.allSatisfy { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" || $0 == "_" }
        guard allowed, shelf.count <= 64 else {
            return "The shelf “\(shelf)” cannot be a folder name: use letters, digits, spaces, - and _ (at most 64), one folder, no slashes."
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
        let cleaned = String(base.map { $0.isASCII && ($0.isLetter || $0.isNumber) || $0 == "-" || $0 == "_" ? $0 : "_" })
            .trimmingCharacters(in: CharacterSet(charactersIn: "_-"))
        return (cleaned.isEmpty ? "upload" : String(cleaned.prefix(80)), ext)
    }

    /// Hidden (leading dot) and not an image extension: the watcher never takes it (IgnoreRules).
    static func temporaryName(_ base: String) -> String {
        let random = (0..<8).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
        return ".\(base).upload-\(random)"
    }

    private static func json(_ status: HTTPResponse.Status, _ fields: [String: String]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    struct UploadView {
        let limitMB: Int
        let shelves: [String]
        /// What became of each photo of a form sent without the script.
        var results: [Result] = []

        struct Result {
            let name: String
            let message: String
            let ok: Bool
            var state: String { ok ? "done" : "failed" }
        }

        init(_ site: WebSite) {
            limitMB = site.config.web.maxUploadMB
            let names = (try? FileManager.default.contentsOfDirectory(atPath: site.config.paths.incoming)) ?? []
            shelves = names.filter { name in
                var isFolder: ObjCBool = false
                return UploadPage.shelfProblem(name) == nil && !name.hasPrefix(".")
                    && FileManager.default.fileExists(atPath: site.config.paths.incoming + "/" + name, isDirectory: &isFolder)
                    && isFolder.boolValue
            }.sorted()
        }
    }
}
