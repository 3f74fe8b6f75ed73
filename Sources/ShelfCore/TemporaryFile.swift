/// What every temporary file shelfd writes is named by: hidden, starting `.shelfd-`. The folders it writes may be a
/// person's (`paths.root` may be `~`), where other programs' temporary files live too: only names with this prefix
/// are shelfd's to remove, and the watcher never takes one for a photo.
package enum TemporaryFile {
    package static let prefix = ".shelfd-"
}
