import ArgumentParser
import Foundation
import ShelfApp
import ShelfCore
import ShelfDaemon

@main
struct Shelfd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shelfd",
        abstract: "Turns photos of bookshelves into a catalogue of books.",
        discussion: "Drop shelf photos into ~/Shelves/incoming; 'shelfd watch' catalogues them as they arrive.",
        subcommands: [
            Watch.self, Run.self, Scan.self, Rescan.self, Status.self, Retry.self, Review.self, Export.self,
            Library.self, Shelf.self, Catalogue.self, Hardcover.self, Doctor.self, Eval.self, Web.self, Batch.self,
            StoreCommand.self,
        ])

    /// Usage errors exit 2 (docs/commands.md), not ArgumentParser's 64; anything else that stops a command exits 1.
    static func main() async {
        IdleMemory.limitArenas()
        do {
            // The store's calls wait on their thread: not on Swift's cooperative pool (DaemonThreads.swift).
            try await withTaskExecutorPreference(DaemonThreads.shared) {
                var command = try parseAsRoot()
                if var asyncCommand = command as? any AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            if code == .success { // --help, --version
                Shelfd.exit(withError: error)
            }
            FileHandle.standardError.write(Data("shelfd: \(error)\n".utf8))
            Foundation.exit(1)
        }
    }
}
