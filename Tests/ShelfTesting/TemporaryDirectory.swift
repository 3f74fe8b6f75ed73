import Foundation

/// Runs `body` with a new, empty directory and removes it afterwards, whether `body` throws or not.
package func withTemporaryDirectory<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (URL) async throws -> T
) async throws -> T {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("shelfd-test-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}

/// Writes `bytes` bytes that start like a JPEG to `relativePath` under `directory`, creating folders as
/// needed, and returns the file's URL.
@discardableResult
package func writeFakePhoto(_ relativePath: String, in directory: URL, bytes: Int = 2048) throws -> URL {
    let url = directory.appendingPathComponent(relativePath)
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    var data = Data([0xFF, 0xD8, 0xFF, 0xE0])
    data.append(Data(repeating: 0x42, count: max(0, bytes - 4)))
    try data.write(to: url)
    return url
}

/// Copies `names` from `folder` into `destination` (made if missing), the one named `truncated` cut to half its bytes,
/// as a download that broke off leaves it; returns that file and its whole bytes, to mend it with.
package func copyFiles(
    _ names: [String], from folder: String, to destination: URL, truncating truncated: String
) throws -> (file: URL, whole: Data) {
    try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
    for name in names {
        try FileManager.default.copyItem(
            atPath: "\(folder)/\(name)", toPath: destination.appendingPathComponent(name).path)
    }
    let file = destination.appendingPathComponent(truncated)
    let whole = try Data(contentsOf: file)
    try whole.prefix(whole.count / 2).write(to: file)
    return (file, whole)
}
