import ShelfWatch
import Testing
@testable import ShelfWeb

@Suite("Upload names")
struct UploadNamingTests {
    @Test("The watcher never takes a photo still being uploaded or synced but not yet named, and takes it once renamed")
    func temporaryNameIsIgnored() {
        let rules = IgnoreRules()
        for base in ["IMG_2041", "upload", "a"] {
            let temporary = UploadPage.temporaryName(base)
            guard case .ignore = rules.verdict(forRelativePath: "den/\(temporary)") else {
                Issue.record("\(temporary) would be taken while it is written"); continue
            }
            guard case .ignore = rules.verdict(forRelativePath: "den/\(temporary)\(IncomingPhoto.syncedSuffix)") else {
                Issue.record("\(temporary) would be taken once synced, before it is put in place"); continue
            }
            #expect(rules.verdict(forRelativePath: "den/\(base).jpg") == .take)
        }
    }

    @Test("A given name keeps only its last part, in safe characters, and its extension")
    func namesAreMadeSafe() {
        #expect(UploadPage.safeName("../../etc/passwd.JPG") == ("passwd", "jpg"))
        #expect(UploadPage.safeName("C:\\Users\\me\\IMG 1.heic") == ("IMG_1", "heic"))
        #expect(UploadPage.safeName(".hidden") == ("hidden", nil))
        #expect(UploadPage.safeName("") == ("upload", nil))
        #expect(UploadPage.safeName("<script>.jpg") == ("script", "jpg"))
    }

    @Test("A shelf is one folder in plain characters")
    func shelvesAreChecked() {
        for good in ["", "den", "Living room", "Étagère_2", "kids-3"] {
            #expect(UploadPage.shelfProblem(good) == nil, "\(good)")
        }
        for bad in ["..", "../x", "a/b", ".hidden", "a\\b", "@eaDir", "x\u{0}"] {
            #expect(UploadPage.shelfProblem(bad) != nil, "\(bad)")
        }
    }
}
