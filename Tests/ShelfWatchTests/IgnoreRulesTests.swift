import ShelfWatch
import Testing

enum Expected: String, Sendable { case take, ignore, conflict }

struct IgnoreRulesTests {
    @Test(
        "Photos are taken, sync-tool temporaries and OS clutter are not",
        arguments: [
            ("IMG_2041.jpg", Expected.take),
            ("shelves/living room/IMG_2041.JPEG", .take),
            ("a.png", .take), ("b.HEIC", .take), ("c.heif", .take), ("d.webp", .take),
            ("notes.txt", .ignore),
            ("IMG_2041", .ignore),
            ("scan.pdf", .ignore),
            (".syncthing.IMG_2041.jpg.tmp", .ignore),
            ("~syncthing~IMG_2041.jpg.tmp", .ignore),
            ("IMG_2041.jpg.part", .ignore),
            (".IMG_2041.jpg.partial", .ignore),
            ("IMG_2041.jpg.partial", .ignore),
            ("IMG_2041.jpg.a1b2c3d4.partial", .ignore),
            ("IMG_2041.jpg.filepart", .ignore),
            ("IMG_2041.jpg.crdownload", .ignore),
            ("~IMG_2041.jpg", .ignore),
            (".IMG_2041.jpg.Ab12Z9", .ignore),
            ("._IMG_2041.jpg", .ignore),
            (".DS_Store", .ignore),
            ("Thumbs.db", .ignore),
            (".hidden.jpg", .ignore),
            ("@eaDir/IMG_2041.jpg", .ignore),
            ("a/@eaDir/IMG_2041.jpg/SYNOFILE_THUMB_M.jpg", .ignore),
            (".stfolder/x.jpg", .ignore),
            (".stversions/IMG_2041~20240101-120000.jpg", .ignore),
            (".Trash-1000/files/IMG_2041.jpg", .ignore),
            (".albums/IMG_2041.jpg", .ignore),
            ("IMG_2041.sync-conflict-20240101-120000-ABCDEFG.jpg", .conflict),
            ("sub/IMG_2041.sync-conflict-20240101-120000-ABCDEFG.JPG", .conflict),
        ])
    func builtInRules(path: String, expected: Expected) {
        #expect(kind(IgnoreRules().verdict(forRelativePath: path)) == expected)
    }

    @Test(
        "Configured globs match the file name or the relative path",
        arguments: [
            ("IMG_2041-edited.jpg", Expected.ignore),
            ("sub/IMG_2041-edited.jpg", .ignore),
            ("raw/IMG_2041.jpg", .ignore),
            ("raw/deeper/IMG_2041.jpg", .ignore),
            ("raw2/IMG_2041.jpg", .take),
            ("IMG_2041.jpg", .take),
        ])
    func configuredGlobs(path: String, expected: Expected) {
        let rules = IgnoreRules(extra: ["*-edited.jpg", "raw/*"])
        #expect(kind(rules.verdict(forRelativePath: path)) == expected)
    }

    @Test("An ignored file says why")
    func ignoreHasReason() {
        #expect(IgnoreRules().verdict(forRelativePath: ".syncthing.a.jpg.tmp") == .ignore("Syncthing temporary file"))
        #expect(
            IgnoreRules(extra: ["*.tmp.jpg"]).verdict(forRelativePath: "a.tmp.jpg")
                == .ignore("matches watch.ignore pattern *.tmp.jpg"))
    }

    private func kind(_ verdict: IgnoreRules.Verdict) -> Expected {
        switch verdict {
        case .take: .take
        case .ignore: .ignore
        case .conflict: .conflict
        }
    }
}
