import Foundation
import ShelfApp
import ShelfRuntimeTesting
import ShelfTesting
import Testing

extension WebClient {
    /// Sends one file as the upload script does: the raw body, the shelf and name in the query.
    fileprivate func upload(_ bytes: [UInt8], shelf: String, name: String) async throws -> WebAnswer {
        let (cookie, token) = try await session(from: "/upload")
        return try await send(
            "POST", "/upload?shelf=\(formEncoded(shelf))&name=\(formEncoded(name))",
            headers: [("Content-Type", "application/octet-stream"), ("Cookie", cookie), ("X-CSRF-Token", token)],
            bytes: bytes)
    }
}

extension ShelfRoot {
    /// Every file and folder under incoming/, hidden ones too.
    fileprivate func incomingContents() -> [String] {
        FileManager.default.enumerator(atPath: incoming.path).map { $0.compactMap { $0 as? String }.sorted() } ?? []
    }
}

/// The upload page's answers, through the site's router (what only a socket or the process shows, a body without
/// its length, durability, memory, a full disk, is tested on the binary, in ShelfdTests).
@Suite("Uploading photos from the page")
struct UploadPageTests {
    @Test("A 100 MB photo is refused with the limit named, and nothing is written in incoming/")
    func tooLargeIsRefused() async throws {
        let root = try ShelfRoot()
        let site = try InProcessSite(root)
        try await site.web { http in
            var big = JPEGFactory.shelf(seed: 80)
            big += [UInt8](repeating: 0, count: 100 * 1_048_576 - big.count)
            let refused = try await http.upload(big, shelf: "den", name: "huge.jpg")
            #expect(refused.status == 413)
            #expect(
                refused.body.contains("This photo is 100 MB; the limit is 40 MB ([web] max_upload_mb)"),
                "\(refused.body)")
            #expect(root.incomingContents() == [])
            // The site is still there for the next one.
            #expect(try await http.upload(JPEGFactory.shelf(seed: 81), shelf: "den", name: "IMG_81.jpg").status == 201)
        }
    }

    @Test("Without the script the page's form sends its photos: each placed or refused, and the page says which")
    func formWithoutScript() async throws {
        let root = try ShelfRoot()
        let site = try InProcessSite(root)
        try await site.web { http in
            let (cookie, token) = try await http.session(from: "/upload")
            // The page's form sends its token first: the door reads it before any photo.
            let form =
                try await http.send("GET", "/upload", headers: [("Cookie", cookie)]).body
                .components(separatedBy: "<form class=\"upload\"").last ?? ""
            #expect(
                form.range(of: #"name="[a-z]+""#, options: .regularExpression).map { String(form[$0]) }
                    == "name=\"csrf\"")
            let boundary = "----shelfd\(UInt32.random(in: 0...UInt32.max))"
            var body: [UInt8] = []
            func field(_ name: String, _ value: String) {
                body += Array(
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
            }
            func file(_ filename: String, _ bytes: [UInt8]) {
                body += Array(
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"photos\"; filename=\"\(filename)\"\r\nContent-Type: image/jpeg\r\n\r\n"
                        .utf8)
                body += bytes + Array("\r\n".utf8)
            }
            let headers = [("Content-Type", "multipart/form-data; boundary=\(boundary)"), ("Cookie", cookie)]
            let photo = JPEGFactory.shelf(seed: 86)
            field("csrf", token) // first, as the page's form puts it
            field("shelf", "Study")
            file("IMG_86.jpg", photo)
            file("notes.jpg", Array("not a photo at all".utf8))
            body += Array("--\(boundary)--\r\n".utf8)
            let response = try await http.send("POST", "/upload", headers: headers, bytes: body)
            #expect(response.status == 422, "one of the two was refused")
            #expect(
                response.body.contains("Added as Study/IMG_86.jpg") && response.body.contains("not a photo"),
                "\(response.body)")
            #expect(root.incomingContents() == ["Study", "Study/IMG_86.jpg"])
            let landed = try Data(contentsOf: root.incoming.appendingPathComponent("Study/IMG_86.jpg"))
            #expect(Array(landed) == photo)

            // The token after a photo is refused before the photo is read: nothing more lands.
            body = []
            field("shelf", "Study")
            file("IMG_87.jpg", JPEGFactory.shelf(seed: 87))
            field("csrf", token)
            body += Array("--\(boundary)--\r\n".utf8)
            let late = try await http.send("POST", "/upload", headers: headers, bytes: body)
            #expect(late.status == 403, "\(late.body)")
            #expect(root.incomingContents() == ["Study", "Study/IMG_86.jpg"])
        }
    }

    @Test(
        "A script may send the CSRF token in the query instead of the header; a wrong one is refused and nothing is written"
    )
    func tokenInTheQuery() async throws {
        let root = try ShelfRoot()
        let site = try InProcessSite(root)
        try await site.web { http in
            let (cookie, token) = try await http.session(from: "/upload")
            func send(_ csrf: String) async throws -> Int {
                try await http.send(
                    "POST", "/upload?shelf=den&name=IMG_92.jpg&csrf=\(csrf)",
                    headers: [("Content-Type", "application/octet-stream"), ("Cookie", cookie)],
                    bytes: JPEGFactory.shelf(seed: 92)
                ).status
            }
            #expect(try await send(String(repeating: "0", count: token.count)) == 403)
            #expect(root.incomingContents() == [])
            #expect(try await send(token) == 201)
            #expect(root.incomingContents() == ["den", "den/IMG_92.jpg"])
        }
    }

    @Test(
        "Anything but a JPEG or HEIC is refused whatever its name; a bad shelf is refused; names are made safe and never reused"
    )
    func contentAndNamesAreChecked() async throws {
        let root = try ShelfRoot()
        let site = try InProcessSite(root)
        try await site.web { http in
            let text = try await http.upload(
                Array("just some words, not a photo\n".utf8), shelf: "den", name: "notes.jpg")
            #expect(text.status == 415)
            #expect(text.body.contains("not a photo") && text.body.contains("JPEG or HEIC"), "\(text.body)")
            #expect(root.incomingContents() == [])

            for bad in ["../etc", "a/b", ".hidden", "..", "den\u{0}x"] {
                let refused = try await http.upload(JPEGFactory.shelf(seed: 82), shelf: bad, name: "IMG.jpg")
                #expect(refused.status == 400, "\(bad)")
            }
            #expect(root.incomingContents() == [])

            let photo = JPEGFactory.shelf(seed: 83)
            let first = try await http.upload(photo, shelf: "Living room", name: "../../etc/passwd.JPG")
            #expect(first.status == 201, "\(first.body)")
            let second = try await http.upload(photo, shelf: "Living room", name: "passwd.jpg")
            #expect(second.status == 201, "\(second.body)")
            let odd = try await http.upload(photo, shelf: "", name: "<script>.exe")
            #expect(odd.status == 201, "\(odd.body)")
            #expect(
                root.incomingContents() == [
                    "Living room", "Living room/passwd-2.jpg", "Living room/passwd.jpg", "script.jpg",
                ])
            let landed = try Data(contentsOf: root.incoming.appendingPathComponent("Living room/passwd.jpg"))
            #expect(Array(landed) == photo)

            // A HEIC keeps its extension; one named .jpg is named for what it is.
            if JPEGFactory.canEncodeHEIC,
                let heic = JPEGFactory.heic(rgb: [UInt8](repeating: 128, count: 64 * 64 * 3), width: 64, height: 64)
            {
                #expect(try await http.upload(heic, shelf: "phone", name: "IMG_9.HEIC").status == 201)
                #expect(try await http.upload(heic, shelf: "phone", name: "IMG_10.jpg").status == 201)
                #expect(
                    root.incomingContents().filter { $0.hasPrefix("phone/") } == [
                        "phone/IMG_10.heic", "phone/IMG_9.heic",
                    ])
            }
        }
    }
}
