import ArgumentParser
import Foundation
import ShelfApp
import ShelfConfig
import ShelfCore
import ShelfDaemon

struct Rescan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read photos again, with another provider if you like, and print the books found.",
        discussion:
            "Every run's result is kept: the newest is results/<name>.json, earlier ones are under results/.history/.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var reading: ReadingOptions
    @Argument(help: ArgumentHelp("Photo files, or the start of a photo's sha256.", valueName: "photo")) var photos:
        [String]

    func validate() throws {
        if photos.isEmpty {
            throw ValidationError("Give at least one photo: a path, or the start of its sha256 (see a result file).")
        }
    }

    func run() async throws {
        let (runtime, logger) = try reading.start(global)
        let (report, found) = try await OneShot(runtime: runtime, logger: logger).rescan(photos: photos)
        try PhotoReport.print(found, results: PhotoResults(store: runtime.store), report: report, json: reading.json)
    }
}
