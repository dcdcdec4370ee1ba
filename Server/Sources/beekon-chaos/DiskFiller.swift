import BeekonChaos
import Foundation

/// A small tmpfs under one agent's database, filled to the last byte and freed again: the
/// agent must answer a full disk with a clear error (exit 1) or ride it out, never crash
/// or lose a stored fix.
final class DiskFiller: Sendable {
    /// The mount point.
    let path: String

    private init(path: String) { self.path = path }

    /// Mounts a 64 MiB tmpfs at `path`; nil when that is not possible (not root).
    static func mount(at path: String, logDirectory: String) async -> DiskFiller? {
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard
            let run = try? ChildProcess(
                URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=64m", "tmpfs", path], directory: logDirectory,
                name: "mount"),
            let outcome = try? await run.finish(timeout: .seconds(30)), outcome.status == 0, !outcome.signalled
        else { return nil }
        return DiskFiller(path: path)
    }

    /// Writes until the disk is full (ENOSPC): 1 MiB blocks, then 4 KiB ones for the rest.
    func fill() {
        for (name, size) in [("filler", 1 << 20), ("filler-tail", 4096)] {
            let file = (path as NSString).appendingPathComponent(name)
            guard FileManager.default.createFile(atPath: file, contents: nil),
                let handle = FileHandle(forWritingAtPath: file)
            else { continue }
            let block = Data(count: size)
            while (try? handle.write(contentsOf: block)) != nil {}
            try? handle.close()
        }
    }

    /// Removes what `fill()` wrote.
    func free() {
        for name in ["filler", "filler-tail"] {
            try? FileManager.default.removeItem(atPath: (path as NSString).appendingPathComponent(name))
        }
    }

    /// Unmounts it (lazily: an agent may still hold its database open).
    func unmount(logDirectory: String) async {
        if let run = try? ChildProcess(URL(fileURLWithPath: "/bin/umount"), ["-l", path], directory: logDirectory, name: "umount") {
            _ = try? await run.finish(timeout: .seconds(30))
        }
    }
}
