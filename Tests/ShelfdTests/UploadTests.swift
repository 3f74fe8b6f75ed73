import Foundation
import Glibc
import ShelfCore
import ShelfDigest
import ShelfHTTP
import ShelfRuntimeTesting
import ShelfTesting
import Synchronization
import Testing

extension ShelfRoot {
    /// Sends one file as the upload script does: the raw body, the shelf and name in the query.
    func upload(_ url: String, _ bytes: [UInt8], shelf: String, name: String) async throws -> (
        status: Int, text: String
    ) {
        let (cookie, token) = try await session(url, "/upload")
        let response = try await HTTPClient(maxConcurrent: 1).send(
            HTTPRequest(
                method: "POST", url: url + "/upload?shelf=\(formEncoded(shelf))&name=\(formEncoded(name))",
                headers: [("Content-Type", "application/octet-stream"), ("Cookie", cookie), ("X-CSRF-Token", token)],
                body: bytes,
                timeout: .seconds(120)))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// Every file and folder under incoming/, hidden ones too.
    func incomingContents() -> [String] {
        FileManager.default.enumerator(atPath: incoming.path).map { $0.compactMap { $0 as? String }.sorted() } ?? []
    }
}

/// Uploads as only the binary shows them: a body without its length, durability, memory, a start after a cut, a full
/// disk, a browser (the page's answers are tested in-process, in ShelfWebTests).
@Suite("Uploading photos from the page", .serialized)
struct UploadTests {
    @Test(
        "A photo sent without its length is stopped as soon as it passes the limit, and nothing is left",
        .timeLimit(.minutes(2)))
    func streamedPastTheLimitIsStopped() async throws {
        let shelf = try ShelfRoot(overrides: ["web": ["max_upload_mb": "1"]])
        let web = try shelf.startWeb()
        let url = try await shelf.webURL()
        let port = try #require(UInt16(url.split(separator: ":").last ?? ""))
        var body = JPEGFactory.shelf(seed: 84)
        body += [UInt8](repeating: 0, count: 3 * 1_048_576 - body.count)
        let (cookie, token) = try await shelf.session(url, "/upload")
        let answer = try chunkedPost(
            port: port, path: "/upload?shelf=den&name=big.jpg",
            headers: "Cookie: \(cookie)\r\nX-CSRF-Token: \(token)\r\n",
            body: body)
        #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(200))")
        #expect(answer.contains("This photo is more than 1 MB; the limit is 1 MB ([web] max_upload_mb)."))
        #expect(shelf.incomingContents() == [])
        #expect(try await web.stop() == 0)
    }

    @Test(
        "A placed upload survives a power cut: the photo is fsynced before its rename and its folder after it (seen by strace)",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")), .timeLimit(.minutes(2)))
    func renameIsMadeDurable() async throws {
        let shelf = try ShelfRoot()
        let trace = shelf.base.appendingPathComponent("web.strace")
        let (process, _, log) = try shelf.process(["web"], logName: "web-strace")
        process.arguments =
            ["-f", "-s", "1024", "-o", trace.path, "-e", "trace=openat,rename,renameat2,fsync", ShelfRoot.binary.path]
            + (process.arguments ?? [])
        process.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        try process.run()
        let web = Daemon(process: process, log: log)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let url = try await shelf.webURL(timeout: .seconds(60))
        #expect(
            try await shelf.upload(url, JPEGFactory.shelf(seed: 93), shelf: "den", name: "IMG_93.jpg").status == 201)
        // SIGTERM to shelfd itself (strace's child); strace ends with it.
        let pid = process.processIdentifier
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        kill(try #require(Int32(children.split(separator: " ").first ?? "")), SIGTERM)
        #expect(try await web.waitForExit(timeout: .seconds(40)) == 0)

        let den = shelf.incoming.appendingPathComponent("den").path
        let traced = Self.completedCalls(try String(contentsOf: trace, encoding: .utf8))
        // Each traced thread's calls in order.
        var calls: [String: [String]] = [:]
        for (thread, call) in traced { calls[thread, default: []].append(call) }
        let all = calls.values.flatMap { $0 }
        let placed = try #require(
            all.firstIndex { $0.contains("\"\(den)/IMG_93.jpg\"") && $0.hasPrefix("rename") && $0.hasSuffix("= 0") }
                .map { all[$0] }, "the rename into place")
        // The thread that put it in place then opened the folder and fsynced it.
        let thread = try #require(calls.first { $0.value.contains(placed) }?.value)
        let after = thread[(thread.firstIndex(of: placed)! + 1)...]
        let opened = try #require(
            after.first { $0.hasPrefix("openat(AT_FDCWD, \"\(den)\", ") && $0.contains("O_DIRECTORY") },
            "the folder is opened after the rename: \(after.prefix(4))")
        let descriptor = try #require(opened.split(separator: "=").last?.trimmingCharacters(in: .whitespaces))
        #expect(
            after.contains { $0.hasPrefix("fsync(\(descriptor))") && $0.hasSuffix("= 0") },
            "the folder is fsynced: \(after.prefix(4))")
        // The photo's own bytes were fsynced (on the thread pool) before it took its .synced name.
        let ordered = traced.map(\.call)
        let created = try #require(
            ordered.first { $0.contains("/den/.shelfd-IMG_93.upload-") && $0.contains("O_CREAT") })
        let file = try #require(created.split(separator: "=").last?.trimmingCharacters(in: .whitespaces))
        let fileSynced = ordered.firstIndex { $0.hasPrefix("fsync(\(file))") && $0.hasSuffix("= 0") }
        let renamedSynced = ordered.firstIndex {
            $0.hasPrefix("rename") && $0.contains(".synced\"") && $0.hasSuffix("= 0")
        }
        #expect(
            fileSynced != nil && renamedSynced != nil && fileSynced! < renamedSynced!, "fsync before the .synced name")
    }

    /// strace's lines ("PID call(…) = result") as whole calls, in the order they finished. With several threads a call
    /// another thread interrupts is written in two halves ("PID fsync(12 <unfinished ...>", later "PID <... fsync
    /// resumed>) = 0"): joined here, at the place of its result.
    static func completedCalls(_ trace: String) -> [(thread: String, call: String)] {
        var started: [String: String] = [:]
        var calls: [(thread: String, call: String)] = []
        for line in trace.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let thread = String(parts[0]), text = String(parts[1]).trimmingCharacters(in: .whitespaces)
            if text.hasSuffix("<unfinished ...>") {
                started[thread] = String(text.dropLast("<unfinished ...>".count)).trimmingCharacters(in: .whitespaces)
            } else if text.hasPrefix("<..."), let resumed = text.range(of: " resumed>") {
                calls.append((thread, (started.removeValue(forKey: thread) ?? "") + text[resumed.upperBound...]))
            } else {
                calls.append((thread, text))
            }
        }
        return calls
    }

    /// A multipart/form-data body as the page's form sends it: the token first, the shelf, then each photo.
    static func form(boundary: String, token: String, shelf: String, photos: [(name: String, bytes: [UInt8])])
        -> [UInt8]
    {
        var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(token)\r\n".utf8)
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"shelf\"\r\n\r\n\(shelf)\r\n".utf8)
        for photo in photos {
            body += Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"photos\"; filename=\"\(photo.name)\"\r\nContent-Type: image/jpeg\r\n\r\n"
                    .utf8)
            body += photo.bytes + Array("\r\n".utf8)
        }
        return body + Array("--\(boundary)--\r\n".utf8)
    }

    @Test(
        "A 40 MB photo is written as it arrives: the server's memory rises by less than 10 MB, from the script and from the form",
        .timeLimit(.minutes(3)))
    func largePhotoIsStreamed() async throws {
        let shelf = try ShelfRoot(overrides: ["web": ["max_upload_mb": "64"]])
        let web = try shelf.startWeb()
        let url = try await shelf.webURL()
        let pid = web.process.processIdentifier
        let start = JPEGFactory.shelf(seed: 88)
        let photo =
            start + (0..<(40 * 1_048_576 - start.count)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let (cookie, token) = try await shelf.session(url, "/upload")
        let boundary = "----shelfd\(UInt32.random(in: 0...UInt32.max))"
        // Warm: the first upload of each kind starts the threads and buffers every later one reuses.
        #expect(try await shelf.upload(url, JPEGFactory.shelf(seed: 89), shelf: "warm", name: "a.jpg").status == 201)
        let warm = Self.form(
            boundary: boundary, token: token, shelf: "warm", photos: [("b.jpg", JPEGFactory.shelf(seed: 90))])
        #expect(
            try await HTTPClient(maxConcurrent: 1).send(
                HTTPRequest(
                    method: "POST", url: url + "/upload",
                    headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)"), ("Cookie", cookie)],
                    body: warm)
            ).status == 200)

        /// The highest resident memory while `upload` runs, above what it was before.
        func rise(_ upload: @escaping @Sendable () async throws -> Int) async throws -> (status: Int, bytes: Int) {
            let before = LoadTests.residentBytes(pid)
            let peak = Mutex(before)
            let sampler = Task {
                while !Task.isCancelled {
                    let now = LoadTests.residentBytes(pid)
                    peak.withLock { $0 = max($0, now) }
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
            let status = try await upload()
            sampler.cancel()
            _ = await sampler.value
            return (status, peak.withLock { $0 } - before)
        }
        let script = try await rise { try await shelf.upload(url, photo, shelf: "big", name: "script.jpg").status }
        let formBody = Self.form(boundary: boundary, token: token, shelf: "big", photos: [("form.jpg", photo)])
        let form = try await rise {
            try await HTTPClient(maxConcurrent: 1).send(
                HTTPRequest(
                    method: "POST", url: url + "/upload",
                    headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)"), ("Cookie", cookie)],
                    body: formBody,
                    timeout: .seconds(120))
            ).status
        }
        print(
            "upload: a 40 MB photo raised the server's RSS by \(script.bytes / 1024) KiB from the script, \(form.bytes / 1024) KiB from the form"
        )
        #expect(script.status == 201 && form.status == 200)
        #expect(script.bytes < 10 * 1_048_576, "the script's upload is streamed")
        #expect(form.bytes < 10 * 1_048_576, "the form's photo is streamed")
        for name in ["big/script.jpg", "big/form.jpg"] {
            #expect(try Data(contentsOf: shelf.incoming.appendingPathComponent(name)).count == photo.count, "\(name)")
        }
        #expect(try await web.stop() == 0)
    }

    @Test(
        "At start, an upload cut off before its last step is finished and one cut off while written is removed; the log says which",
        .timeLimit(.minutes(2)))
    func leftoversAreFinishedOrRemoved() async throws {
        let shelf = try ShelfRoot()
        let den = shelf.incoming.appendingPathComponent("den")
        try FileManager.default.createDirectory(at: den, withIntermediateDirectories: true)
        let whole = JPEGFactory.shelf(seed: 91)
        let old = Date().addingTimeInterval(-600)
        func leftover(_ name: String, _ bytes: [UInt8], modified: Date) throws {
            let url = den.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path)
        }
        try leftover(".shelfd-IMG_91.upload-0a1b2c3d.synced", whole, modified: old) // synced, not yet renamed
        // cut off while written
        try leftover(".shelfd-IMG_92.upload-4e5f6071", Array(whole.prefix(1000)), modified: old)
        // maybe still arriving
        try leftover(".shelfd-IMG_93.upload-8293a4b5", Array(whole.prefix(1000)), modified: Date())
        try leftover(".IMG_94.upload-9a0b1c2d", Array(whole.prefix(1000)), modified: old) // not shelfd's name: not ours
        let web = try shelf.startWeb()
        _ = try await shelf.webURL()
        #expect(
            shelf.incomingContents() == [
                "den", "den/.IMG_94.upload-9a0b1c2d", "den/.shelfd-IMG_93.upload-8293a4b5",
                "den/IMG_91.jpg",
            ])
        #expect(try Array(Data(contentsOf: den.appendingPathComponent("IMG_91.jpg"))) == whole)
        #expect(try await web.stop() == 0)
        #expect(web.logText.contains("upload_finished") && web.logText.contains("den/IMG_91.jpg"), "\(web.logText)")
        #expect(web.logText.contains("upload_removed") && web.logText.contains("den/.shelfd-IMG_92.upload-4e5f6071"))
    }

    @Test(
        "A full disk refuses the photo with 507 and leaves nothing (run as root: incoming/ is a 512 KiB tmpfs)",
        .enabled(if: getuid() == 0, "mounting a small tmpfs as the full disk needs root"), .timeLimit(.minutes(2)))
    func fullDiskIsRefused() async throws {
        let shelf = try ShelfRoot()
        try FileManager.default.createDirectory(at: shelf.incoming, withIntermediateDirectories: true)
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=512k", "tmpfs", shelf.incoming.path]
        let mountErrors = Pipe()
        mount.standardError = mountErrors
        try mount.run()
        mount.waitUntilExit()
        if mount.terminationStatus != 0 { // a container without CAP_SYS_ADMIN: say so, never pass unseen
            let reason = String(decoding: mountErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            try Test.cancel(
                "cannot mount a tmpfs as the full disk: \(reason.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        defer {
            let umount = Process()
            umount.executableURL = URL(fileURLWithPath: "/bin/umount")
            umount.arguments = [shelf.incoming.path]
            try? umount.run()
            umount.waitUntilExit()
        }
        let web = try shelf.startWeb()
        let url = try await shelf.webURL()
        var photo = JPEGFactory.shelf(seed: 85)
        photo += [UInt8](repeating: 1, count: 2 * 1_048_576)
        let refused = try await shelf.upload(url, photo, shelf: "den", name: "IMG_85.jpg")
        #expect(refused.status == 507)
        #expect(refused.text.contains("full"), "\(refused.text)")
        #expect(shelf.incomingContents() == [])
        #expect(try await web.stop() == 0)
    }

    /// POSTs `body` in 64 KiB chunks (Transfer-Encoding: chunked, no Content-Length) over a plain socket, as far as
    /// the server reads it, and returns what it answered.
    private func chunkedPost(port: UInt16, path: String, headers: String, body: [UInt8]) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
        func send(_ bytes: [UInt8]) -> Bool {
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        _ = send(
            Array(
                "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/octet-stream\r\n\(headers)Transfer-Encoding: chunked\r\n\r\n"
                    .utf8))
        var offset = 0
        while offset < body.count {
            let chunk = Array(body[offset..<min(offset + 65_536, body.count)])
            guard send(Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8)) else { break }
            offset += chunk.count
        }
        _ = send(Array("0\r\n\r\n".utf8))
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: answer, as: UTF8.self).contains("max_upload_mb") {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            answer += buffer[0..<n]
        }
        return String(decoding: answer, as: UTF8.self)
    }
}

@Suite("Upload and library in a browser", .serialized)
struct UploadBrowserTests {
    @Test(
        "A photo picked in the file input reaches incoming/, is read by the daemon and appears in the library page",
        .timeLimit(.minutes(3)))
    func uploadThroughTheFileInput() async throws {
        try await withGeminiEmulator(.always(.books([dune, hobbit, blurry]))) { gemini in
            let shelf = try ShelfRoot(geminiURL: gemini.baseURL)
            let daemon = try shelf.startDaemon()
            let url = try await shelf.webURL()
            try await withTemporaryDirectory { folder in
                let photo = folder.appendingPathComponent("IMG_2041.jpg")
                try Data(JPEGFactory.shelf(seed: 90)).write(to: photo)
                try await withBrowser(viewport: .phone) { browser in
                    try await browser.navigate(to: url + "/upload")
                    try await browser.find("[data-upload-shelf]").sendKeys("Hall")
                    try await browser.find("[data-upload-files]").upload(photo)
                    try await browser.waitUntil("the page to say the photo was added") {
                        try await browser.findAll(".upload-list li[data-state=done]").count == 1
                    }
                    #expect(try await browser.find(".upload-result").text().contains("Hall/IMG_2041.jpg"))
                    #expect(try await !browser.pageWidth().overflows)
                    try await browser.screenshot("upload")
                    #expect(
                        FileManager.default.fileExists(
                            atPath: shelf.incoming.appendingPathComponent("Hall/IMG_2041.jpg").path))

                    try await waitUntil("the daemon to catalogue the photo", timeout: .seconds(60)) {
                        (try? shelf.library().books.contains { $0.title == "Dune" }) == true
                    }
                    try await browser.setViewport(.desktop)
                    try await browser.navigate(to: url + "/library?sort=title")
                    let titles = try await browser.findAll("table.library td.title a")
                    var shown: [String] = []
                    for title in titles { shown.append(try await title.text()) }
                    #expect(shown == ["Dune", "Smudged Spine", "The Hobbit"])
                    #expect(try await browser.find("tr[data-work] td.shelves").text() == "Hall")
                    let thumb = try await browser.find("tr[data-work] .library-thumbs img")
                    try await browser.waitUntil("the photo's thumbnail to load") {
                        try await thumb.property("complete") == true
                    }
                    #expect(try await thumb.property("naturalWidth").int ?? 0 > 0, "the thumbnail really loaded")
                    try await browser.screenshot("library")

                    try await titles[0].click()
                    _ = try await browser.waitForElement("form.work-edit")
                    #expect(try await browser.find("h1").text() == "Dune")
                    try await browser.screenshot("library-work")

                    // On a phone the rows become cards: nothing wider than the screen.
                    try await browser.setViewport(.phone)
                    for path in ["/library", "/library?q=dune"] {
                        try await browser.navigate(to: url + path)
                        #expect(try await !browser.pageWidth().overflows, "\(path)")
                    }
                    try await browser.screenshot("library-phone")
                    try await browser.find("table.library td.title a").click()
                    _ = try await browser.waitForElement("form.work-edit")
                    #expect(try await !browser.pageWidth().overflows)
                }
            }
            #expect(try await daemon.stop() == 0)
        }
    }
}
