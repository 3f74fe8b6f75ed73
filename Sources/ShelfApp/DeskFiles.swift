import Logging
import ShelfConfig
import ShelfCore
import ShelfOutputs
import ShelfStore

/// How a desk's changes reach library.json, review/ and the exports: handed to the process's `FilesWriter` (the
/// daemon's, which the web page shares), or, for a command, to a writer of the desk's own that writes them before the
/// change returns. A node that leaves the files to another (`FilesRole`) hands nothing on: that node follows the
/// change itself.
struct DeskFiles: Sendable {
    private let writer: FilesWriter
    /// False on a node that leaves the files to another: it has no review/ of its own.
    let writesFiles: Bool

    init(config: Configuration, store: Store, logger: Logger, writer: FilesWriter?) {
        self.writer =
            writer
            ?? FilesWriter(files: LibraryFiles(config: config, store: store.library, logger: logger), immediately: true)
        writesFiles = FilesRole.writesFiles(config: config, shared: store.isShared)
    }

    /// The files for people as its writer writes them: where library.json and review/ are, a review item's document.
    var library: LibraryFiles { writer.files }

    func changed(_ change: FilesChange) {
        if writesFiles { writer.changed(change) }
    }
}
