import Foundation

/// A fresh temporary directory for one test, removed when the value is released: the one
/// temporary-directory helper of the root package's tests (keep the value alive while its
/// files are in use).
public final class TempDir: @unchecked Sendable {
    /// The directory.
    public let url: URL

    /// Creates the directory under the system's temporary directory, named after `name`
    /// (the calling function by default) and a random suffix.
    public init(_ name: String = #function) {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("beekon-\(safe.prefix(40))-\(UUID().uuidString.prefix(8))")
        // Creating a directory under the temporary directory only fails on a broken machine.
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The directory's path.
    public var path: String { url.path }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The path of an SDK database inside the directory.
    public var db: String { path("beekon.sqlite") }

    /// Writes `contents` (UTF-8) to `name` and returns the path.
    @discardableResult
    public func write(_ name: String, _ contents: String) throws -> String {
        try write(name, Data(contents.utf8))
    }

    /// Writes `data` to `name` and returns the path.
    @discardableResult
    public func write(_ name: String, _ data: Data) throws -> String {
        let p = path(name)
        try data.write(to: URL(fileURLWithPath: p))
        return p
    }
}
